"""DuckDB ingest of ``rfq_observations`` rows: batched Arrow appends against the alternatives.

Every figure is rows per second into a temporary file database, commit included:

- ``Store.append``: the store's path (validate and cast the frame in polars, export Arrow,
  probe the stored keys of the frame's runs, plain INSERT when none match, anti-join when
  some do), with new rows, then re-appending rows already stored (the idempotent no-op).
  Small batches are bound by DuckDB's own per-transaction work: every commit serialises its
  rows to the WAL (~0.5 us a row here) and each 16 MB of WAL triggers a checkpoint that
  compresses them (~1 us a row); batches of a row group (122,880 rows) or more are written
  compressed straight to the file instead;
- ``plain INSERT``: the same Arrow batches inserted with no idempotency check, amounts as
  ``HUGEINT_ARROW`` (what the store sends), then as ``decimal128(38, 0)`` cast to HUGEINT in
  the INSERT (what it sent before: that cast costs 300-550 ns a value);
- ``ON CONFLICT DO NOTHING``: the same Arrow batches into the same table declared with
  ``PRIMARY KEY (run_id, attempt_id)``, the textbook idempotent insert;
- ``anti-join``: the same batches, anti-joined against the run's stored rows on every batch;
- ``executemany``: row-by-row parameterised INSERTs of Python tuples, extrapolated.

Each line is the fastest of a few runs. Wall-clock rows/s depends on the CPU the process
actually gets (the header prints the load average); rows per CPU-second does not.
Run: ``.venv/bin/python bench/bench_store.py``.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from toolkit.store import MIGRATIONS, Store, polars_schema, table_spec
from toolkit.store.frames import conform
from toolkit.store.plan import insert_plan

TABLE = "rfq_observations"
SPEC = table_spec(TABLE)
REPEATS = 3  # Store.append lines
ALTERNATIVES = 2  # the raw INSERT lines
PLAN: list[tuple[int, int]] = [(10_000, 10), (100_000, 3), (1_000_000, 1)]  # (batch, batches)
ROW_BY_ROW = 1_000
TARGET = 500_000


def rfq_rows(n: int, offset: int, run_id: str, seed: int = 7) -> pl.DataFrame:
    """``n`` realistic observations of one sweep (deterministic for a seed and offset)."""
    rng = np.random.default_rng(seed + offset)
    i = pl.int_range(offset, offset + n, eager=True)
    chains = np.array([1, 10, 8453, 42161])
    amount = pl.Series(rng.integers(1, 10**12, n)).cast(pl.Int128) * pl.lit(10**6, pl.Int128)
    frame = pl.DataFrame(
        {
            "run_id": pl.repeat(run_id, n, eager=True),
            "attempt_id": pl.select(pl.format("g{}:r0:t0", pl.lit(i))).to_series(),
            "observed_at": pl.select(
                pl.lit(datetime(2024, 5, 1, tzinfo=UTC)) + pl.duration(milliseconds=pl.lit(i))
            ).to_series(),
            "round": (i % 10).cast(pl.Int32),
            "retry": pl.repeat(0, n, dtype=pl.Int32, eager=True),
            "src_chain": rng.choice(chains, n),
            "dst_chain": rng.choice(chains, n),
            "token": rng.choice(["USDC", "WETH", "USDT"], n),
            "src_token": pl.repeat("0x" + "a1" * 20, n, eager=True),
            "dst_token": pl.repeat("0x" + "b2" * 20, n, eager=True),
            "quote_type": rng.choice(["ExactInput", "ExactOutput"], n),
            "amount": pl.select(amount).to_series(),
            "status": pl.Series(rng.choice([200, 200, 200, 404], n)).cast(pl.Int32),
            "latency_ms": rng.gamma(4.0, 20.0, n),
            "quote_id": pl.select(pl.format("q-{}", pl.lit(i))).to_series(),
            "valid_until": 1_714_564_800 + i,
            "eta": pl.repeat(12, n, eager=True),
            "input_amount": pl.select(amount).to_series(),
            "output_amount": pl.select(amount - amount // 1000).to_series(),
            "fee_bps": pl.repeat(10.0, n, eager=True),
            "error": pl.repeat(None, n, dtype=pl.String, eager=True),
        }
    )
    return frame.cast(polars_schema(TABLE))


def batches(size: int, count: int) -> list[pl.DataFrame]:
    return [rfq_rows(size, k * size, run_id="bench-run") for k in range(count)]


_WORKDIR = tempfile.TemporaryDirectory(prefix="bench_store_")
_SERIAL = iter(range(1_000_000))


def fresh_path() -> Path:
    """A new database path in the bench's temporary directory."""
    return Path(_WORKDIR.name) / f"bench-{next(_SERIAL)}.duckdb"


def discard(path: Path) -> None:
    """Delete a database file and its WAL: a 1M-row file is ~100 MB."""
    for leftover in (path, path.with_name(path.name + ".wal")):
        leftover.unlink(missing_ok=True)


def rfq_ddl(primary_key: bool) -> str:
    ddl = re.search(r"CREATE TABLE rfq_observations \(.*?\n\);", MIGRATIONS[0].sql, re.S)
    assert ddl is not None
    sql = ddl.group(0)
    if primary_key:
        sql = sql.replace("\n);", ",\n    PRIMARY KEY (run_id, attempt_id)\n);")
    return sql


class Clock:
    """Wall and process-CPU seconds of a block (CPU counts every DuckDB thread)."""

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu


Timing = tuple[float, float]  # (wall seconds, CPU seconds)


def time_store(frames: list[pl.DataFrame]) -> tuple[Timing, Timing, float]:
    """Store.append of ``frames``; the same frames again (all stored); the polars seconds of
    the first pass (validation, casts, Arrow export)."""
    path = fresh_path()
    with Store(path) as store:
        with Clock() as first:
            rows = sum(store.append(TABLE, frame) for frame in frames)
        assert rows == sum(frame.height for frame in frames)
        with Clock() as again:
            assert sum(store.append(TABLE, frame) for frame in frames) == 0
    discard(path)
    with Clock() as polars_part:
        for frame in frames:
            insert_plan(SPEC, conform(SPEC, frame), "v")
    return (first.wall, first.cpu), (again.wall, again.cpu), polars_part.cpu


def decimal_batch(frame: pl.DataFrame) -> tuple[pa.Table, str]:
    """The route before HUGEINT_ARROW: amounts as Arrow decimal128(38, 0), cast in the INSERT."""
    huge = [col.name for col in SPEC.columns if col.sql_type == "HUGEINT"]
    rows = conform(SPEC, frame).with_columns(pl.col(huge).cast(pl.Decimal(38, 0)))
    exprs = ", ".join(f'CAST(b."{n}" AS HUGEINT)' if n in huge else f'b."{n}"' for n in SPEC.names)
    arrow = rows.to_arrow(compat_level=pl.CompatLevel.newest())
    return arrow, f"INSERT INTO {TABLE} SELECT {exprs} FROM batch AS b"


def time_raw(frames: list[pl.DataFrame], how: str) -> Timing:
    """The same rows through one raw INSERT per batch (DuckDB time only)."""
    if how == "decimal":
        batches = [decimal_batch(frame) for frame in frames]
    else:
        plans = [insert_plan(SPEC, conform(SPEC, frame), "batch") for frame in frames]
        suffix = " ON CONFLICT DO NOTHING" if how == "conflict" else ""
        batches = [
            (plan.arrow, plan.plain + suffix if how in ("conflict", "plain") else plan.anti)
            for plan in plans
        ]
    path = fresh_path()
    con = duckdb.connect(str(path))
    con.execute(rfq_ddl(primary_key=how == "conflict"))
    with Clock() as clock:
        for arrow, sql in batches:
            con.register("batch", arrow)
            con.execute("BEGIN TRANSACTION")
            con.execute(sql).fetchall()
            con.execute("COMMIT")
            con.unregister("batch")
    con.close()
    discard(path)
    return clock.wall, clock.cpu


def time_row_by_row(n: int) -> Timing:
    rows = rfq_rows(n, 0, run_id="bench-run").rows()
    path = fresh_path()
    con = duckdb.connect(str(path))
    con.execute(rfq_ddl(primary_key=False))
    marks = ", ".join("?" for _ in SPEC.names)
    with Clock() as clock:
        con.execute("BEGIN TRANSACTION")
        con.executemany(f"INSERT INTO {TABLE} VALUES ({marks})", rows)
        con.execute("COMMIT")
    con.close()
    discard(path)
    return clock.wall, clock.cpu


def best(timings: list[Timing]) -> Timing:
    # The fastest run is the one least disturbed by other processes (as timeit does).
    return min(timings)


def main() -> None:
    threads = duckdb.connect().execute("SELECT current_setting('threads')").fetchall()[0][0]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"DuckDB {duckdb.__version__}, polars {pl.__version__}, {os.cpu_count()} CPUs "
        f"(load average {load}), DuckDB threads {threads}; {TABLE}: {len(SPEC.columns)} "
        f"columns; best of {REPEATS}; target >= {TARGET:,} rows/s batched"
    )
    print("rows/s is wall clock; rows/CPU-s divides by the process CPU time of all threads,")
    print("which other processes on the machine do not inflate.")
    print()
    header = (
        f"{'path':<38} {'batch':>10} {'rows':>10} {'seconds':>8} {'rows/s':>10} {'rows/CPU-s':>11}"
    )
    print(header)
    print("-" * len(header))

    def line(path: str, batch: int, rows: int, timing: Timing, note: str = "") -> None:
        wall, cpu = timing
        print(
            f"{path:<38} {batch:>10,} {rows:>10,} {wall:>8.3f} {rows / wall:>10,.0f} "
            f"{rows / cpu:>11,.0f} {note}".rstrip()
        )

    shares: list[str] = []
    for size, count in PLAN:
        frames = batches(size, count)
        total = size * count
        results = [time_store(frames) for _ in range(REPEATS)]
        first = best([r[0] for r in results])
        mark = "ok" if total / first[0] >= TARGET else "below target"
        line("Store.append, new rows", size, total, first, mark)
        line("Store.append, rows already stored", size, total, best([r[1] for r in results]))
        shares.append(f"batch {size:,}: {min(r[2] for r in results) / first[1]:.0%}")
        for how, path in (
            ("plain", "plain INSERT, amounts HUGEINT_ARROW"),
            ("decimal", "plain INSERT, amounts decimal128+CAST"),
            ("conflict", "ON CONFLICT DO NOTHING, PRIMARY KEY"),
            ("anti", "anti-join on every batch, no key"),
        ):
            line(path, size, total, best([time_raw(frames, how) for _ in range(ALTERNATIVES)]))
    wall, cpu = time_row_by_row(ROW_BY_ROW)
    line(
        "executemany, one row per INSERT",
        1,
        ROW_BY_ROW,
        (wall, cpu),
        f"(1,000,000 rows: {1_000_000 * wall / ROW_BY_ROW:,.0f} s)",
    )
    print()
    print(
        "Share of Store.append CPU time spent in polars (validate, cast, Arrow export): "
        + "; ".join(shares)
    )


if __name__ == "__main__":
    try:
        main()
    finally:
        _WORKDIR.cleanup()
