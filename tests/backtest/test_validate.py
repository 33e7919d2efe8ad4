"""Bad flows and bad arguments: a ValueError naming the column, the first bad row and the rule."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import polars as pl
import pytest

from toolkit.backtest import replay, sweep
from toolkit.client import RetryPolicy

ROWS = [{"t": 0.0}, {"t": 1.0}, {"t": 2.0}, {"t": 3.0}]


def _expect(flow: pl.DataFrame, message: str, scenario: str = "single-pool") -> None:
    with pytest.raises(ValueError) as info:
        replay(flow, scenario)
    assert str(info.value) == message


def test_not_a_frame() -> None:
    with pytest.raises(ValueError, match="flow: must be a polars DataFrame, got dict"):
        replay({"t": [0.0]}, "single-pool")  # type: ignore[arg-type]


def test_missing_columns(make_flow) -> None:
    _expect(
        make_flow(ROWS).drop("amount", "converts"),
        "flow: missing columns amount, converts (a flow needs t, src_chain, dst_chain, token, "
        "amount, type, converts, convert_delay)",
    )


@pytest.mark.parametrize(
    ("column", "dtype", "rule"),
    [
        ("t", pl.String, "a numeric column of seconds, got dtype String"),
        ("src_chain", pl.Float64, "an integer column of chain ids, got dtype Float64"),
        (
            "amount",
            pl.Float64,
            "an integer column of smallest units (Int64 or Int128), got dtype Float64",
        ),
        ("converts", pl.Int64, "a boolean column, got dtype Int64"),
        ("token", pl.Int64, None),
    ],
)
def test_wrong_dtypes(make_flow, column: str, dtype: pl.DataType, rule: str | None) -> None:
    flow = make_flow(ROWS)
    if column == "token":
        flow = flow.with_columns(pl.lit(1, dtype=pl.Int64).alias("token"))
        rule = "a string column of token symbols, got dtype Int64"
    else:
        flow = flow.with_columns(pl.col(column).cast(dtype))
    _expect(flow, f"flow.{column}: must be {rule}")


def test_negative_and_zero_amounts(make_flow) -> None:
    flow = make_flow([{"t": 0.0}, {"t": 1.0, "amount": -5}, {"t": 2.0, "amount": 0}])
    _expect(flow, "flow.amount: row 1: must be positive, got -5")


def test_unsorted_times(make_flow) -> None:
    flow = make_flow([{"t": 0.0}, {"t": 5.0}, {"t": 4.5}, {"t": 1.0}])
    _expect(flow, "flow.t: row 2: must be sorted ascending, got 4.5 after 5.0")


def test_negative_or_infinite_times(make_flow) -> None:
    _expect(make_flow([{"t": -1.0}]), "flow.t: row 0: must be a finite number >= 0, got -1.0")
    _expect(
        make_flow([{"t": 0.0}, {"t": float("inf")}]),
        "flow.t: row 1: must be a finite number >= 0, got inf",
    )


def test_nulls(make_flow) -> None:
    flow = make_flow(ROWS).with_columns(
        pl.when(pl.int_range(pl.len()) == 2).then(None).otherwise(pl.col("token")).alias("token")
    )
    _expect(flow, "flow.token: row 2: must not be null")


def test_unknown_type_and_bad_delay(make_flow) -> None:
    _expect(
        make_flow([{"t": 0.0}, {"t": 1.0, "type": "Exact"}]),
        "flow.type: row 1: must be ExactInput or ExactOutput, got 'Exact'",
    )
    _expect(
        make_flow([{"t": 0.0, "convert_delay": -1.0}]),
        "flow.convert_delay: row 0: must be a finite number >= 0, got -1.0",
    )


def test_unknown_route(make_flow) -> None:
    flow = make_flow([{"t": 0.0}, {"t": 1.0, "dst_chain": 10}, {"t": 2.0, "token": "WETH"}])
    _expect(
        flow,
        "flow: row 1: route 1->10 USDC is not onboarded in scenario 'single-pool' "
        "(src_chain, dst_chain, token must name one of its routes)",
    )


def test_duplicate_request_ids(make_flow) -> None:
    flow = make_flow(ROWS).with_columns(
        pl.Series("request_id", ["a", "b", "c", "b"], dtype=pl.String)
    )
    _expect(flow, "flow.request_id: row 3: must be unique, 'b' is also in row 1")


def test_empty_flow(make_flow) -> None:
    _expect(make_flow(ROWS).head(0), "flow: has no rows; a replay needs at least one request")


def test_request_id_is_optional_and_integer_widths_are_accepted(make_flow) -> None:
    flow = (
        make_flow(ROWS)
        .drop("request_id")
        .with_columns(
            pl.col("t").cast(pl.Int32),
            pl.col("amount").cast(pl.Int64),
            pl.col("src_chain").cast(pl.UInt32),
        )
    )
    result = replay(flow, "single-pool")
    assert result.requests["request_id"].to_list() == ["r0", "r1", "r2", "r3"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seed": -1}, "seed: must be an integer >= 0, got -1"),
        ({"interval_s": 0}, "interval_s: must be a finite number > 0, got 0"),
        ({"retry": 3}, "retry: must be a RetryPolicy or None, got int"),
        ({"overrides": {"pool_size": 2}}, "overrides: unknown key 'pool_size'; known: pool_scale"),
        ({"overrides": {"pool_scale": -1}}, "pool_scale: must be a finite number > 0, got -1"),
        ({"overrides": {"quote_s": 1.5}}, "quote_s: must be a whole number of seconds"),
        (
            {"overrides": {"quote_s": 0}},
            "overrides: the variant is not a valid scenario: "
            "windows.quote_s: must be a positive integer",
        ),
        ({"scenario": "missing"}, "scenario: no scenario named 'missing'"),
    ],
)
def test_bad_replay_arguments(make_flow, kwargs: dict, message: str) -> None:
    scenario = kwargs.pop("scenario", "single-pool")
    with pytest.raises(ValueError) as info:
        replay(make_flow(ROWS), scenario, **kwargs)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ({}, "grid: is empty; give at least one of pool_scale, fee_scale, quote_s"),
        ({"pool_scale": []}, "grid['pool_scale']: is empty; give at least one value"),
        ({"pool_scale": "12"}, "grid['pool_scale']: must be a sequence of values"),
        ({"colour": [1]}, "grid: unknown key 'colour'; known: pool_scale, fee_scale"),
        ({"fee_scale": [1.0, 0.0]}, "fee_scale: must be a finite number > 0, got 0.0"),
        ([("pool_scale", [1])], "grid: must be a mapping of override name to a sequence"),
    ],
)
def test_bad_sweep_grids(make_flow, grid: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        sweep(make_flow(ROWS), "single-pool", grid, executor=ThreadPoolExecutor(1))  # type: ignore[arg-type]
    assert message in str(info.value)


def test_bad_sweep_flow_is_reported_before_any_task(make_flow) -> None:
    flow = make_flow([{"t": 1.0}, {"t": 0.0}])
    with pytest.raises(ValueError, match=r"flow.t: row 1: must be sorted ascending"):
        sweep(flow, "single-pool", {"pool_scale": [1, 2]}, executor=object())  # type: ignore[arg-type]


def test_sweep_executor_needs_submit(make_flow) -> None:
    with pytest.raises(ValueError, match=r"executor: must have a submit\(\) method"):
        sweep(make_flow(ROWS), "single-pool", {"pool_scale": [1, 2]}, executor=object())  # type: ignore[arg-type]


def test_the_backtest_simulates_the_clients_retry_policy() -> None:
    import toolkit.backtest.loop

    assert RetryPolicy is toolkit.backtest.loop.RetryPolicy
