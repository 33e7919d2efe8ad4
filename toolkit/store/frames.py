"""Frames in and out of DuckDB: validation against the contract, lossless casts, reads.

How a validated frame travels into DuckDB is :mod:`toolkit.store.plan`. On the way out DuckDB
exports HUGEINT as ``decimal128(38, 0)`` whatever the magnitude, and polars' cast of that to
Int128 keeps the 128 bits, so it is exact.
"""

from __future__ import annotations

import re
from decimal import Decimal, localcontext
from typing import TYPE_CHECKING, Any

import duckdb
import polars as pl

from toolkit.store.errors import StoreError
from toolkit.store.schema import Column, TableSpec
from toolkit.urls import has_credentials

if TYPE_CHECKING:
    import pandas as pd
    from polars._typing import PolarsDataType

__all__ = ["conform", "to_pandas", "to_polars"]

_RANGE = {
    "INTEGER": "the INTEGER range (-2^31 to 2^31-1)",
    "BIGINT": "the BIGINT range (-2^63 to 2^63-1)",
    "HUGEINT": "the HUGEINT range (-2^127 to 2^127-1)",
}
_DIGITS = re.compile(r"^[+-]?[0-9]+$")
_DECIMAL_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?")
#: Columns holding URLs: refused when they carry credentials (store ``redact_url(url)``).
_URL_COLUMNS = frozenset({"target_url", "source"})


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _first_failure(source: pl.Series, cast: pl.Series) -> object:
    failed = source.filter(cast.is_null() & source.is_not_null())
    return failed[0] if len(failed) else None


def _lossless(source: pl.Series, cast: pl.Series) -> bool:
    # Lossless means the cast value converts back to the original, nulls in the same rows.
    return bool(cast.cast(source.dtype).eq_missing(source).all())


def _to_integer(s: pl.Series, col: Column, where: str) -> pl.Series:
    target = col.dtype
    src = s.dtype
    if src == pl.Object:
        # Python ints too large for any polars integer end up in Object columns; as text
        # they get the same range check (and message) as strings of digits.
        values = s.to_list()
        if not all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in values):
            raise StoreError(f"{where}: expected {target}, got Object values that are not ints")
        s = pl.Series(s.name, [None if v is None else str(v) for v in values], dtype=pl.String)
        src = s.dtype
    if src == pl.String:
        out = s.cast(target, strict=False)
        bad = _first_failure(s, out)
        if bad is not None:
            rule = (
                f"is beyond {_RANGE[col.sql_type]}"
                if _DIGITS.match(str(bad))
                else "is not a string of digits"
            )
            raise StoreError(f"{where}: value {_show(bad)} {rule}")
        return out
    if src.is_float():
        if col.sql_type == "HUGEINT":
            raise StoreError(
                f"{where}: got {src}; amounts must be exact (Int128, integers, Decimal with "
                f"scale 0, or strings of digits), never floats"
            )
        finite = s.is_finite() | s.is_null()
        if not bool(finite.all()) or not bool((s.round(0) == s).fill_null(True).all()):
            raise StoreError(f"{where}: got {src} with non-integral values; expected {target}")
    elif not (src.is_integer() or isinstance(src, pl.Decimal)):
        raise StoreError(f"{where}: expected {target}, got {src}")
    out = s.cast(target, strict=False)
    bad = _first_failure(s, out)
    if bad is not None:
        raise StoreError(f"{where}: value {_show(bad)} is beyond {_RANGE[col.sql_type]}")
    if not _lossless(s, out):
        raise StoreError(f"{where}: casting {src} to {target} would lose digits")
    return out


def _to_float(s: pl.Series, col: Column, where: str) -> pl.Series:
    src = s.dtype
    if not (src.is_numeric() or isinstance(src, pl.Decimal)):
        raise StoreError(f"{where}: expected {col.dtype}, got {src}")
    out = s.cast(pl.Float64, strict=False)
    if not _lossless(s, out):
        raise StoreError(f"{where}: casting {src} to Float64 would lose precision")
    return out


def _to_decimal(s: pl.Series, col: Column, where: str) -> pl.Series:
    """Exact decimals: strings of ASCII digits with an optional point, Python ``Decimal``s or
    integers; never floats, and never a value with more decimals than the column keeps."""
    target = col.dtype
    assert isinstance(target, pl.Decimal) and target.scale is not None
    src = s.dtype
    if src.is_float():
        raise StoreError(
            f"{where}: got {src}; decimals must be exact (Decimal or text), never floats"
        )
    if src == pl.String or src == pl.Object:
        values: list[Decimal | None] = []
        for value in s.to_list():
            if value is None:
                values.append(None)
                continue
            if isinstance(value, str) and _DECIMAL_TEXT.fullmatch(value):
                value = Decimal(value)
            if not isinstance(value, Decimal) or not value.is_finite():
                raise StoreError(f"{where}: value {_show(value)} is not a decimal number")
            with localcontext() as context:
                context.prec = 100
                exponent = value.normalize().as_tuple().exponent
            if not isinstance(exponent, int) or exponent < -target.scale:
                raise StoreError(
                    f"{where}: value {_show(value)} has more than {target.scale} decimals"
                )
            values.append(value)
        try:
            return pl.Series(s.name, values, dtype=target)
        except (OverflowError, pl.exceptions.PolarsError):
            raise StoreError(f"{where}: a value is beyond {target}") from None
    if not (src.is_integer() or isinstance(src, pl.Decimal)):
        raise StoreError(f"{where}: expected {target}, got {src}")
    out = s.cast(target, strict=False)
    bad = _first_failure(s, out)
    if bad is not None or not _lossless(s, out):
        raise StoreError(f"{where}: casting {src} to {target} would lose digits")
    return out


def _to_datetime(s: pl.Series, col: Column, where: str) -> pl.Series:
    src = s.dtype
    if not isinstance(src, pl.Datetime):
        raise StoreError(f"{where}: expected Datetime('us', 'UTC'), got {src}")
    if src.time_zone is None:
        raise StoreError(
            f"{where}: datetimes must be timezone-aware (UTC); got naive {src} "
            f"(use .dt.replace_time_zone('UTC') if the values are UTC)"
        )
    out = s.dt.convert_time_zone("UTC").cast(pl.Datetime("us", "UTC"))
    if src.time_unit == "ns" and not _lossless(s, out):
        raise StoreError(f"{where}: nanoseconds would be lost; the store keeps microseconds")
    return out


def _cast(s: pl.Series, col: Column, table: str) -> pl.Series:
    where = f"{table}.{col.name}"
    target = col.dtype
    src = s.dtype
    if src == target:
        return s
    if src == pl.Null:
        return s.cast(target)
    if col.sql_type in _RANGE:
        return _to_integer(s, col, where)
    if col.sql_type == "DOUBLE":
        return _to_float(s, col, where)
    if col.sql_type == "TIMESTAMPTZ":
        return _to_datetime(s, col, where)
    if col.sql_type.startswith("DECIMAL"):
        return _to_decimal(s, col, where)
    if col.sql_type == "VARCHAR" and isinstance(src, pl.Categorical | pl.Enum):
        return s.cast(pl.String)
    raise StoreError(f"{where}: expected {target}, got {src}")


def _rule_figures(spec: TableSpec, frame: pl.DataFrame) -> dict[str, Any]:
    # Every rule's figure in one polars query: each query has a fixed cost (~0.1 ms) that
    # dominated the checks of a 10k-row batch when there was one query per rule.
    exprs = [pl.col(name).null_count().alias(f"nulls {name}") for name in spec.required]
    exprs += [
        (~pl.col(name).is_finite()).sum().alias(f"infinite {name}")
        for name in spec.key
        if frame.schema[name].is_float()
    ]
    # min, never abs(): abs(-2^127) overflows Int128.
    exprs += [pl.col(c.name).min().alias(f"min {c.name}") for c in spec.columns if c.nonnegative]
    exprs += [
        (~pl.col(c.name).is_in(list(c.choices))).sum().alias(f"outside {c.name}")
        for c in spec.columns
        if c.choices is not None
    ]
    # Distinct key hashes: as many as rows proves the keys distinct (equal keys hash alike),
    # for about a third of the cost of checking the keys themselves.
    exprs.append(pl.struct(spec.key).hash().n_unique().alias("key hashes"))
    return frame.select(exprs).row(0, named=True)


def _check_rules(spec: TableSpec, frame: pl.DataFrame, figures: dict[str, Any]) -> None:
    for name in spec.required:
        if count := figures[f"nulls {name}"]:
            raise StoreError(f"{spec.name}.{name}: required column has {count} null value(s)")
    for name in spec.key:
        if figures.get(f"infinite {name}"):
            raise StoreError(f"{spec.name}.{name}: natural-key values must be finite numbers")
    for col in spec.columns:
        low = figures.get(f"min {col.name}")
        if low is not None and low < 0:
            raise StoreError(f"{spec.name}.{col.name}: amounts must be >= 0, got {low}")
    for col in spec.columns:
        if col.choices is not None and figures[f"outside {col.name}"]:
            values = frame.get_column(col.name)
            bad = values.filter(~values.is_in(list(col.choices)) & values.is_not_null())
            allowed = ", ".join(col.choices)
            raise StoreError(
                f"{spec.name}.{col.name}: value {_show(bad[0])} is not one of {allowed}"
            )
        if col.name in _URL_COLUMNS:
            # The value is never echoed: it is the secret being refused.
            for value in frame.get_column(col.name).drop_nulls().unique():
                if has_credentials(value):
                    raise StoreError(
                        f"{spec.name}.{col.name}: a URL carries credentials or secret query "
                        f"parameters; store redact_url(url) instead"
                    )


def conform(spec: TableSpec, frame: pl.DataFrame) -> pl.DataFrame:
    """Validate ``frame`` against ``spec`` and return it in table order and dtypes.

    Missing optional columns become typed nulls; wrong dtypes are cast when no value changes;
    rows repeating a natural key keep their first occurrence.

    Example:
        >>> from datetime import UTC, datetime
        >>> from toolkit.store.schema import TABLES
        >>> f = pl.DataFrame({"snapshot_id": ["s", "s"], "chain": [1, 1],
        ...                   "symbol": ["USDC", "USDC"], "decimals": [6, 18],
        ...                   "observed_at": [datetime(2024, 1, 1, tzinfo=UTC)] * 2})
        >>> conform(TABLES["token_snapshots"], f)["decimals"].to_list()
        [6]
    """
    if not isinstance(frame, pl.DataFrame):
        kind = type(frame).__name__
        raise StoreError(f"{spec.name}: frame must be a polars DataFrame, got {kind}")
    missing = [name for name in spec.required if name not in frame.columns]
    unknown = [name for name in frame.columns if name not in spec.by_name]
    problems = []
    if missing:
        problems.append(f"missing required columns: {', '.join(missing)}")
    if unknown:
        problems.append(f"unknown columns: {', '.join(unknown)}")
    if problems:
        raise StoreError(f"{spec.name}: {'; '.join(problems)}")
    height = frame.height
    columns = [
        _cast(frame.get_column(col.name), col, spec.name)
        if col.name in frame.columns
        # pl.repeat, not a list of Nones: no Python object per row.
        else pl.repeat(None, height, dtype=col.dtype, eager=True).alias(col.name)
        for col in spec.columns
    ]
    out = pl.DataFrame(columns)
    figures = _rule_figures(spec, out)
    _check_rules(spec, out, figures)
    if figures["key hashes"] < out.height:  # a repeated key, or (rarely) a hash collision
        key = pl.col(spec.key[0]) if len(spec.key) == 1 else pl.struct(spec.key)
        out = out.filter(key.is_first_distinct())
    return out


def _huge_columns(relation: duckdb.DuckDBPyRelation) -> list[str]:
    return [
        name
        for name, sql_type in zip(relation.columns, relation.types, strict=True)
        if str(sql_type) == "HUGEINT"
    ]


def _exact(dtype: PolarsDataType) -> PolarsDataType:
    """``dtype`` with the Decimal(38, 0) that DuckDB exports for HUGEINT turned into Int128."""
    if isinstance(dtype, pl.Decimal) and dtype.precision == 38 and dtype.scale == 0:
        return pl.Int128()
    if isinstance(dtype, pl.List):
        return pl.List(_exact(dtype.inner))
    if isinstance(dtype, pl.Array):
        return pl.Array(_exact(dtype.inner), dtype.shape)
    if isinstance(dtype, pl.Struct):
        return pl.Struct({field.name: _exact(field.dtype) for field in dtype.fields})
    return dtype


def to_polars(relation: duckdb.DuckDBPyRelation) -> pl.DataFrame:
    """Run ``relation`` and return a polars frame with HUGEINT values as exact Int128.

    Example:
        >>> to_polars(duckdb.sql("SELECT 2::HUGEINT AS a, [3::HUGEINT] AS b")).dtypes
        [Int128, List(Int128)]
    """
    names = relation.columns
    if len(set(names)) != len(names):
        raise StoreError(f"sql: result column names must be unique, got {', '.join(names)}")
    # Only columns typed HUGEINT (possibly nested) are converted: a DECIMAL(38,0) the query
    # asked for stays a Decimal.
    huge = {
        name
        for name, sql_type in zip(names, relation.types, strict=True)
        if "HUGEINT" in str(sql_type) and "DECIMAL" not in str(sql_type)
    }
    frame = pl.from_arrow(relation.to_arrow_table())
    assert isinstance(frame, pl.DataFrame)
    casts = [pl.col(name).cast(_exact(frame.schema[name])) for name in huge]
    return frame.with_columns(casts) if casts else frame


def to_pandas(relation: duckdb.DuckDBPyRelation | None) -> pd.DataFrame:
    """Run ``relation`` and return a pandas frame; HUGEINT columns hold exact Python ints."""
    import pandas as pd  # only the pandas entry point pays for importing pandas

    if relation is None:
        return pd.DataFrame()
    huge = _huge_columns(relation)
    table = relation.to_arrow_table()
    frame = table.to_pandas()
    for name in huge:
        frame[name] = pd.Series(
            [None if v is None else int(v) for v in table.column(name).to_pylist()],
            dtype=object,
            index=frame.index,
        )
    return frame
