"""What one idempotent append runs: the frame as Arrow record batches, and its SQL.

Amounts travel as DuckDB's own HUGEINT. polars 2.1 exports ``Int128`` to Arrow with a private
format (``_pli128``) that pyarrow and DuckDB reject. The obvious detour, Arrow
``decimal128(38, 0)`` cast to HUGEINT in the INSERT, is exact but DuckDB's DECIMAL -> HUGEINT
cast costs about 300-550 ns a value: with three amount columns it was three quarters of the
INSERT (``bench/bench_store.py``). DuckDB also reads the Arrow extension type it exports for
HUGEINT under ``arrow_lossless_conversion`` (``arrow.opaque``, type ``hugeint``, vendor
``DuckDB``: 16-byte values in DuckDB's memory layout) straight into a HUGEINT vector, for
about 10 ns a value. So each amount column is split in polars into its low and high 64-bit
words and the words are interleaved into that layout; every Int128, -2^127 included, goes
through unchanged and no cast runs in SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from toolkit.store.schema import TableSpec

__all__ = ["HUGEINT_ARROW", "InsertPlan", "arrow_rows", "hugeint_array", "insert_plan", "quote"]

#: The Arrow type DuckDB reads into a HUGEINT column without a cast.
HUGEINT_ARROW = pa.opaque(pa.binary(16), type_name="hugeint", vendor_name="DuckDB")
_ROW_GROUP = 122_880  # DuckDB's default row group size
_WORD = pl.lit(2**64, dtype=pl.Int128)


def hugeint_array(values: pl.Series) -> pa.Array:
    """``values`` (Int128) as an Arrow array DuckDB reads as HUGEINT, nulls kept.

    Example:
        >>> import duckdb
        >>> arrow = pa.table({"x": hugeint_array(pl.Series([-(2**127), None], dtype=pl.Int128))})
        >>> duckdb.sql("SELECT x, typeof(x) AS t FROM arrow").fetchall()[0]
        (-170141183460469231731687303715884105728, 'HUGEINT')
    """
    return _hugeint_arrays(values.to_frame("v"), ["v"])[0]


def _hugeint_arrays(frame: pl.DataFrame, names: list[str]) -> list[pa.Array]:
    # DuckDB's hugeint_t is the low word (unsigned) then the high word (signed), each in the
    # machine's byte order; a wrapping cast and floor division give exactly those words.
    # One query for every column: each polars query has a fixed cost.
    words = frame.select(
        expr
        for i, name in enumerate(names)
        for expr in (
            pl.col(name).cast(pl.UInt64, wrap_numerical=True).fill_null(0).alias(f"low{i}"),
            (pl.col(name) // _WORD).cast(pl.Int64).fill_null(0).alias(f"high{i}"),
        )
    )
    arrays = []
    for i, name in enumerate(names):
        values = frame.get_column(name)
        packed = np.empty((frame.height, 2), dtype=np.uint64)
        packed[:, 0] = words.get_column(f"low{i}").to_numpy()
        packed[:, 1] = words.get_column(f"high{i}").to_numpy().view(np.uint64)
        nulls = values.null_count()
        # A boolean Arrow array's data buffer is a validity bitmap, offset 0.
        validity = pa.array(values.is_not_null().to_numpy()).buffers()[1] if nulls else None
        buffers = [validity, pa.py_buffer(packed)]
        arrays.append(pa.Array.from_buffers(HUGEINT_ARROW, len(values), buffers, null_count=nulls))
    return arrays


@dataclass(frozen=True)
class InsertPlan:
    """What an append runs: the Arrow rows (registered as a view) and three statements.

    ``probe`` counts frame rows whose natural key is stored already. When it is 0 (a new
    run, new attempts: the usual case) ``plain`` inserts everything; otherwise ``anti``
    inserts only the rows the stored ones do not match. Probing costs a scan of the key
    columns of the frame's partitions; an anti-join on every append would build a hash table
    of all the stored rows of the run each time.
    """

    arrow: pa.Table
    probe: str
    plain: str
    anti: str


def arrow_rows(spec: TableSpec, frame: pl.DataFrame) -> pa.Table:
    """``frame`` (from ``conform``) as Arrow in table order, amounts as :data:`HUGEINT_ARROW`.

    Example:
        >>> from toolkit.store.schema import TABLES
        >>> spec = TABLES["pool_snapshots"]
        >>> rows = arrow_rows(spec, pl.DataFrame(schema=spec.schema))
        >>> rows.schema.field("balance").type == HUGEINT_ARROW
        True
    """
    huge = [col.name for col in spec.columns if col.sql_type == "HUGEINT"]
    # The newest compat level exports strings as Arrow string views, which DuckDB reads
    # without the copy a large_string export costs.
    rest = frame.drop(huge).to_arrow(compat_level=pl.CompatLevel.newest())
    amounts = dict(zip(huge, _hugeint_arrays(frame, huge), strict=True))
    columns = [amounts[name] if name in amounts else rest.column(name) for name in spec.names]
    table = pa.Table.from_arrays(columns, names=list(spec.names))
    # Record batches of one DuckDB row group let the scan run on every thread; slicing them
    # is zero-copy.
    return pa.Table.from_batches(table.to_batches(max_chunksize=_ROW_GROUP), table.schema)


def insert_plan(spec: TableSpec, frame: pl.DataFrame, view: str) -> InsertPlan:
    """Plan the idempotent insert of ``frame`` (from ``conform``) registered as ``view``.

    Example:
        >>> from toolkit.store.schema import TABLES
        >>> f = pl.DataFrame(schema=TABLES["pool_snapshots"].schema)
        >>> "ANTI JOIN" in insert_plan(TABLES["pool_snapshots"], f, "v").anti
        True
    """
    first = spec.key[0]
    on = " AND ".join(f'e."{name}" = b."{name}"' for name in spec.key)
    # DuckDB turns the IN subquery into a dynamic filter on the scan of the stored rows
    # (``first = <the frame's value>``, and the min/max of the other key columns), so row
    # groups of other partitions are skipped by their zone maps rather than read.
    stored = (
        f"(SELECT {quote(spec.key)} FROM {spec.name} "
        f'WHERE "{first}" IN (SELECT DISTINCT "{first}" FROM {view})) AS e'
    )
    names = quote(spec.names)
    plain = f"INSERT INTO {spec.name} ({names}) SELECT {quote(spec.names, 'b')} FROM {view} AS b"
    return InsertPlan(
        arrow=arrow_rows(spec, frame),
        probe=f"SELECT count(*) FROM {stored} JOIN {view} AS b ON {on}",
        plain=plain,
        anti=f"{plain} ANTI JOIN {stored} ON {on}",
    )


def quote(names: Sequence[str], alias: str | None = None) -> str:
    """Comma-separated double-quoted identifiers, each prefixed by ``alias.`` when given.

    Example:
        >>> quote(["a", "b"], "t")
        't."a", t."b"'
    """
    prefix = f"{alias}." if alias else ""
    return ", ".join(f'{prefix}"{name}"' for name in names)
