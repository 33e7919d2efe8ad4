"""Invariants: appends store the union of distinct keys; amounts round-trip exactly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import duckdb
import polars as pl
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.store import Store
from toolkit.store.plan import hugeint_array

T0 = datetime(2024, 1, 1, tzinfo=UTC)
HUGEINT = st.integers(min_value=-(2**127), max_value=2**127 - 1)

# A batch: rows of (run, pool, t, capacity); few distinct values so keys repeat often,
# within a batch and across batches.
ROW = st.tuples(
    st.sampled_from(["r1", "r2"]),
    st.sampled_from(["p1", "p2", "p3"]),
    st.integers(min_value=0, max_value=4).map(float),
    st.one_of(st.none(), HUGEINT),
)
BATCHES = st.lists(st.lists(ROW, max_size=12), min_size=1, max_size=6)


def _frame(rows: list[tuple[str, str, float, int | None]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "run_id": [r[0] for r in rows],
            "pool": [r[1] for r in rows],
            "t": [r[2] for r in rows],
            "capacity": pl.Series([r[3] for r in rows], dtype=pl.Int128),
        },
        schema_overrides={"run_id": pl.String, "pool": pl.String, "t": pl.Float64},
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=BATCHES)
def test_appends_store_the_union_of_distinct_keys(
    batches: list[list[tuple[str, str, float, int | None]]],
) -> None:
    expected: dict[tuple[str, str, float], int | None] = {}
    with Store(":memory:") as store:
        for rows in batches:
            fresh = {row[:3]: row[3] for row in reversed(rows) if row[:3] not in expected}
            inserted = store.append("backtest_pools", _frame(rows))
            assert inserted == len(fresh)
            expected.update(fresh)
        stored = store.query("SELECT run_id, pool, t, capacity FROM backtest_pools")
    assert {(r, p, t): c for r, p, t, c in stored.rows()} == expected
    assert stored.height == len(expected)


@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.one_of(st.none(), HUGEINT), min_size=1, max_size=20))
def test_hugeint_round_trip_is_exact(values: list[int | None]) -> None:
    frame = pl.DataFrame(
        {
            "run_id": ["r"] * len(values),
            "request_id": [str(i) for i in range(len(values))],
            "t": [float(i) for i in range(len(values))],
            "amount": pl.Series(values, dtype=pl.Int128),
            "fee_bps": [None] * len(values),
        },
        schema_overrides={"fee_bps": pl.Float64},
    )
    with Store(":memory:") as store:
        store.append("backtest_requests", frame)
        back = store.query("SELECT amount FROM backtest_requests ORDER BY t")["amount"]
        text = store.query("SELECT amount::VARCHAR AS a FROM backtest_requests ORDER BY t")["a"]
    assert back.to_list() == values
    assert text.to_list() == [None if v is None else str(v) for v in values]


@settings(max_examples=15, deadline=None)
@given(
    offsets=st.lists(st.integers(min_value=0, max_value=10**12), min_size=1, max_size=10),
)
def test_times_round_trip_in_utc(offsets: list[int]) -> None:
    times = [T0 + timedelta(microseconds=o) for o in offsets]
    frame = pl.DataFrame(
        {
            "snapshot_id": [str(i) for i in range(len(times))],
            "observed_at": times,
            "chain": [1] * len(times),
            "symbol": ["USDC"] * len(times),
        }
    )
    with Store(":memory:") as store:
        store.append("token_snapshots", frame)
        back = store.query("SELECT observed_at FROM token_snapshots ORDER BY snapshot_id::INTEGER")
    assert back["observed_at"].to_list() == times


@settings(max_examples=25, deadline=None)
@given(
    chunks=st.lists(st.lists(st.one_of(st.none(), HUGEINT), max_size=8), min_size=1, max_size=4),
    start=st.integers(min_value=0, max_value=3),
)
def test_hugeint_arrow_is_exact_for_chunked_and_sliced_series(
    chunks: list[list[int | None]], start: int
) -> None:
    # The Arrow words are read from polars buffers: chunks and slice offsets must not matter.
    series = pl.concat([pl.Series("x", c, dtype=pl.Int128) for c in chunks], rechunk=False)
    series = series.slice(start)
    con = duckdb.connect()
    con.register("arrow", pa.table({"x": hugeint_array(series)}))
    back = con.execute("SELECT x::VARCHAR AS x, typeof(x) AS t FROM arrow").fetchall()
    assert [None if x is None else int(x) for x, _ in back] == series.to_list()
    assert {t for _, t in back} <= {"HUGEINT"}
