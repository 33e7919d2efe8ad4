"""Appends: idempotency, validation messages, lossless casts, exact amounts, atomicity."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from toolkit.store import Store, StoreError, polars_schema
from toolkit.store import plan as plan_module

RfqFrame = Callable[..., pl.DataFrame]
Count = Callable[[Store, str], int]
T0 = datetime(2024, 5, 1, tzinfo=UTC)


def test_same_frame_twice_stores_rows_once(store: Store, rfq_frame: RfqFrame, count: Count) -> None:
    frame = rfq_frame(["a", "b", "c"])
    assert store.append("rfq_observations", frame) == 3
    assert store.append("rfq_observations", frame) == 0
    assert count(store, "rfq_observations") == 3


def test_overlapping_frames_store_the_union(store: Store, rfq_frame: RfqFrame) -> None:
    assert store.append("rfq_observations", rfq_frame(["a", "b", "c"])) == 3
    assert store.append("rfq_observations", rfq_frame(["c", "d"])) == 1
    assert store.append("rfq_observations", rfq_frame(["a"], run_id="run-2")) == 1
    stored = store.query("SELECT run_id, attempt_id FROM rfq_observations ORDER BY ALL")
    assert stored.rows() == [
        ("run-1", "a"),
        ("run-1", "b"),
        ("run-1", "c"),
        ("run-1", "d"),
        ("run-2", "a"),
    ]


def test_first_write_of_a_key_wins(store: Store, rfq_frame: RfqFrame) -> None:
    frame = rfq_frame(["a", "a", "b"], amounts=[1, 2, 3])
    assert store.append("rfq_observations", frame) == 2
    assert store.append("rfq_observations", rfq_frame(["a"], amounts=[99])) == 0
    amounts = store.query("SELECT attempt_id, amount FROM rfq_observations ORDER BY attempt_id")
    assert amounts.rows() == [("a", 1), ("b", 3)]


def test_stored_rows_come_back_in_contract_dtypes(store: Store, rfq_frame: RfqFrame) -> None:
    frame = rfq_frame(["a", "b"])
    store.append("rfq_observations", frame)
    back = store.query("SELECT * FROM rfq_observations ORDER BY attempt_id")
    schema = polars_schema("rfq_observations")
    absent = [pl.lit(None, dtype).alias(n) for n, dtype in schema.items() if n not in frame.columns]
    assert_frame_equal(back, frame.with_columns(absent).select(schema.names()))


def test_empty_frame_is_a_no_op(store: Store, count: Count) -> None:
    assert store.append("rfq_observations", pl.DataFrame()) == 0
    assert (
        store.append("token_snapshots", pl.DataFrame(schema=polars_schema("token_snapshots"))) == 0
    )
    assert count(store, "rfq_observations") == 0


def test_amounts_beyond_two_to_the_63_are_exact(store: Store, rfq_frame: RfqFrame) -> None:
    big = [2**100, 2**127 - 1, 10**38, 10**38 - 1, 0]
    frame = rfq_frame([f"a{i}" for i in range(len(big))], amounts=big)
    store.append("rfq_observations", frame)
    back = store.query(
        "SELECT amount, amount::VARCHAR AS text FROM rfq_observations ORDER BY attempt_id"
    )
    assert back["amount"].dtype == pl.Int128
    assert back["amount"].to_list() == big
    assert back["text"].to_list() == [str(v) for v in big]
    assert (
        store.df("SELECT amount FROM rfq_observations ORDER BY attempt_id")["amount"].tolist()
        == big
    )


def test_negative_extremes_round_trip_where_amounts_may_be_negative(store: Store) -> None:
    values = [-(2**127), 2**127 - 1, -(2**100), None]
    frame = pl.DataFrame(
        {
            "run_id": ["bt"] * 4,
            "request_id": ["r0", "r1", "r2", "r3"],
            "t": [0.0, 1.0, 2.0, 3.0],
            "amount": pl.Series(values, dtype=pl.Int128),
        }
    )
    assert store.append("backtest_requests", frame) == 4
    back = store.query("SELECT amount FROM backtest_requests ORDER BY request_id")
    assert back["amount"].to_list() == values


@pytest.mark.parametrize(
    ("column", "series", "stored"),
    [
        ("amount", pl.Series(["1267650600228229401496703205376"]), 2**100),
        ("amount", pl.Series([5], dtype=pl.UInt64), 5),
        ("amount", pl.Series([Decimal(7)], dtype=pl.Decimal(38, 0)), 7),
        ("amount", pl.Series([Decimal("7.00")], dtype=pl.Decimal(10, 2)), 7),
        ("status", pl.Series([404], dtype=pl.Int64), 404),
        ("status", pl.Series([200.0]), 200),
        ("fee_bps", pl.Series([3], dtype=pl.Int32), 3.0),
        ("token", pl.Series(["USDC"], dtype=pl.Categorical), "USDC"),
        ("amount", pl.Series([None], dtype=pl.Null), None),
        ("amount", pl.Series([2**100], dtype=pl.Object), 2**100),
    ],
)
def test_lossless_casts_are_applied(
    store: Store, rfq_frame: RfqFrame, column: str, series: pl.Series, stored: object
) -> None:
    frame = rfq_frame(["a"]).with_columns(series.alias(column))
    assert store.append("rfq_observations", frame) == 1
    assert store.query(f"SELECT {column} FROM rfq_observations")[column].to_list() == [stored]


@pytest.mark.parametrize(
    ("column", "series", "message"),
    [
        ("amount", pl.Series([1.0]), "rfq_observations.amount: got Float64; amounts must be exact"),
        (
            "amount",
            pl.Series(["12.5"]),
            "rfq_observations.amount: value '12.5' is not a string of digits",
        ),
        ("amount", pl.Series([str(2**200)]), "is beyond the HUGEINT range (-2^127 to 2^127-1)"),
        ("amount", pl.Series([2**127], dtype=pl.UInt128), "is beyond the HUGEINT range"),
        ("amount", pl.Series([2**200], dtype=pl.Object), "is beyond the HUGEINT range"),
        ("amount", pl.Series([" 7"]), "value ' 7' is not a string of digits"),
        ("amount", pl.Series([7.5], dtype=pl.Object), "got Object values that are not ints"),
        ("amount", pl.Series([Decimal("7.5")], dtype=pl.Decimal(10, 1)), "would lose digits"),
        (
            "status",
            pl.Series([2**40]),
            "rfq_observations.status: value 1099511627776 is beyond the INTEGER range",
        ),
        (
            "status",
            pl.Series([200.5]),
            "rfq_observations.status: got Float64 with non-integral values",
        ),
        ("status", pl.Series(["200"]), None),
        ("token", pl.Series([1]), "rfq_observations.token: expected String, got Int64"),
        ("fee_bps", pl.Series([2**60 + 1]), "casting Int64 to Float64 would lose precision"),
        (
            "quote_type",
            pl.Series(["Exact"]),
            "rfq_observations.quote_type: value 'Exact' is not one of ExactInput, ExactOutput",
        ),
        (
            "amount",
            pl.Series([-1], dtype=pl.Int128),
            "rfq_observations.amount: amounts must be >= 0, got -1",
        ),
        (
            "observed_at",
            pl.Series([datetime(2024, 1, 1)]),
            "datetimes must be timezone-aware (UTC)",
        ),
        ("observed_at", pl.Series(["2024-01-01"]), "expected Datetime('us', 'UTC'), got String"),
        (
            "attempt_id",
            pl.Series([None], dtype=pl.String),
            "rfq_observations.attempt_id: required column has 1 null value(s)",
        ),
    ],
)
def test_bad_columns_are_refused_with_their_name(
    store: Store,
    rfq_frame: RfqFrame,
    count: Count,
    column: str,
    series: pl.Series,
    message: str | None,
) -> None:
    frame = rfq_frame(["a"]).with_columns(series.alias(column))
    if message is None:  # a string of digits is a lossless integer
        assert store.append("rfq_observations", frame) == 1
        return
    with pytest.raises(StoreError) as err:
        store.append("rfq_observations", frame)
    assert message in str(err.value)
    assert count(store, "rfq_observations") == 0


def test_nanoseconds_are_not_truncated_silently(store: Store, rfq_frame: RfqFrame) -> None:
    precise = pl.Series([datetime(2024, 1, 1, tzinfo=UTC)]).cast(pl.Datetime("ns", "UTC"))
    plus_one_ns = precise + pl.duration(nanoseconds=1)
    frame = rfq_frame(["a"]).with_columns(pl.select(plus_one_ns).to_series().alias("observed_at"))
    with pytest.raises(StoreError, match="nanoseconds would be lost"):
        store.append("rfq_observations", frame)
    store.append("rfq_observations", rfq_frame(["b"]).with_columns(precise.alias("observed_at")))


def test_other_time_zones_are_converted_to_utc(store: Store, rfq_frame: RfqFrame) -> None:
    local = pl.Series([datetime(2024, 1, 1, 9, 0)]).dt.replace_time_zone("Asia/Tokyo")
    store.append("rfq_observations", rfq_frame(["a"]).with_columns(local.alias("observed_at")))
    back = store.query("SELECT observed_at FROM rfq_observations")["observed_at"]
    assert back.dtype == pl.Datetime("us", "UTC")
    assert back.to_list() == [datetime(2024, 1, 1, 0, 0, tzinfo=UTC)]


def test_missing_and_unknown_columns_are_named(store: Store, rfq_frame: RfqFrame) -> None:
    frame = rfq_frame(["a"]).drop("attempt_id", "status").with_columns(pl.lit(1).alias("colour"))
    with pytest.raises(StoreError) as err:
        store.append("rfq_observations", frame)
    assert str(err.value) == (
        "rfq_observations: missing required columns: attempt_id, status; unknown columns: colour"
    )


def test_unknown_table_and_wrong_frame_type(store: Store) -> None:
    with pytest.raises(
        StoreError, match="table: unknown table 'rfq'; known tables: collection_runs"
    ):
        store.append("rfq", pl.DataFrame())
    with pytest.raises(StoreError, match="frame must be a polars DataFrame, got dict"):
        store.append("rfq_observations", {"run_id": ["x"]})  # type: ignore[arg-type]


def test_one_bad_row_in_a_batch_writes_nothing(
    store: Store, rfq_frame: RfqFrame, count: Count
) -> None:
    store.append("rfq_observations", rfq_frame(["kept"]))
    amounts = [10**6] * 1000
    amounts[517] = -5
    with pytest.raises(StoreError, match="amounts must be >= 0, got -5"):
        store.append("rfq_observations", rfq_frame([f"n{i}" for i in range(1000)], amounts=amounts))
    assert count(store, "rfq_observations") == 1


def test_a_failure_inside_the_insert_rolls_back(
    store: Store, rfq_frame: RfqFrame, count: Count, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_plan = plan_module.insert_plan

    def failing_plan(*args: object) -> plan_module.InsertPlan:
        plan = real_plan(*args)  # type: ignore[arg-type]
        # DuckDB raises while inserting the row whose attempt is "n900", after others went in.
        boom = (
            "CASE WHEN b.\"attempt_id\" = 'n900' THEN error('injected fault') ELSE b.\"error\" END"
        )
        return plan_module.InsertPlan(
            plan.arrow, plan.probe, plan.plain.replace('b."error"', boom), plan.anti
        )

    monkeypatch.setattr("toolkit.store.store.insert_plan", failing_plan)
    with pytest.raises(StoreError) as err:
        store.append("rfq_observations", rfq_frame([f"n{i}" for i in range(1000)]))
    assert "rfq_observations: append failed, nothing was written" in str(err.value)
    assert "injected fault" in str(err.value)
    assert count(store, "rfq_observations") == 0
    monkeypatch.undo()
    assert store.append("rfq_observations", rfq_frame(["n1"])) == 1


def test_urls_with_credentials_are_refused_without_echoing_them(store: Store) -> None:
    frame = pl.DataFrame(
        {
            "source": ["https://user:hunter2@host/stream"],
            "event_id": [1],
            "event": ["liquidity"],
            "received_at": [T0],
        }
    )
    with pytest.raises(StoreError) as err:
        store.append("liquidity_events", frame)
    assert "liquidity_events.source: a URL carries credentials" in str(err.value)
    assert "hunter2" not in str(err.value)
    clean = frame.with_columns(pl.lit("https://host/stream partner-escrow").alias("source"))
    assert store.append("liquidity_events", clean) == 1


def test_float_keys_must_be_finite(store: Store) -> None:
    frame = pl.DataFrame({"run_id": ["bt"], "pool": ["p"], "t": [float("nan")]})
    with pytest.raises(StoreError, match=r"backtest_pools\.t: natural-key values must be finite"):
        store.append("backtest_pools", frame)


def test_every_table_accepts_its_own_schema(store: Store) -> None:
    for table in ("transactions", "borrow_quotes", "fee_tiers", "pool_snapshots", "backtest_pools"):
        schema = polars_schema(table)
        row = {
            name: (
                T0
                if dtype == pl.Datetime("us", "UTC")
                else "x"
                if dtype == pl.String
                else True
                if dtype == pl.Boolean
                else 1.5
                if dtype == pl.Float64
                else 7
            )
            for name, dtype in schema.items()
        }
        if "quote_type" in row:
            row["quote_type"] = "ExactOutput"
        frame = pl.DataFrame([row], schema=schema)
        assert store.append(table, frame) == 1, table
        assert store.append(table, frame) == 0, table
        assert_frame_equal(store.query(f"SELECT * FROM {table}"), frame)


def test_zero_and_negative_zero_are_one_key(store: Store) -> None:
    # The in-frame check (polars hashes) and the stored-key check (DuckDB joins) must agree.
    frame = pl.DataFrame({"run_id": ["bt", "bt"], "pool": ["p", "p"], "t": [0.0, -0.0]})
    assert store.append("backtest_pools", frame) == 1
    assert store.append("backtest_pools", frame.reverse()) == 0


def test_repeated_keys_are_found_in_large_chunked_frames(
    store: Store, rfq_frame: RfqFrame, count: Count
) -> None:
    # Many chunks, the repeat far from its first occurrence.
    parts = [rfq_frame([f"a{i}" for i in range(k, k + 500)]) for k in range(0, 5000, 500)]
    frame = pl.concat([*parts, rfq_frame(["a17"], amounts=[5])], rechunk=False)
    assert store.append("rfq_observations", frame) == 5000
    assert count(store, "rfq_observations") == 5000
    amount = store.query("SELECT amount FROM rfq_observations WHERE attempt_id = 'a17'")
    assert amount["amount"].to_list() == [10**6 * 18]
