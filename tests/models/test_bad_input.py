"""Every frame function: named errors for missing or mistyped columns, typed empty results."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import polars as pl
import pytest

from toolkit.models import (
    capacity_timeline,
    compare_with_tiers,
    effective_fee_bps,
    empirical_blocking,
    eta_validity_stats,
    fee_by_amount_bucket,
    fee_curve,
    latency_stats,
    price_drift,
)

OBS_FUNCTIONS: list[Callable[[pl.DataFrame], pl.DataFrame]] = [
    effective_fee_bps,
    fee_curve,
    fee_by_amount_bucket,
    eta_validity_stats,
    price_drift,
    latency_stats,
    empirical_blocking,
]


@pytest.mark.parametrize("func", OBS_FUNCTIONS, ids=lambda f: f.__name__)
def test_missing_column_is_named_with_the_function(rfq, func) -> None:
    obs = rfq({}, {"status": 404})
    needed = [name for name in obs.columns if _fails_without(func, obs, name)]
    assert needed, f"{func.__name__} needs no column at all?"
    for name in needed:
        with pytest.raises(ValueError, match=rf"{func.__name__}: missing columns: .*\b{name}\b"):
            func(obs.drop(name))


def _fails_without(func, obs: pl.DataFrame, name: str) -> bool:
    try:
        func(obs.drop(name))
    except ValueError as error:
        return "missing columns" in str(error)
    return False


@pytest.mark.parametrize("func", OBS_FUNCTIONS, ids=lambda f: f.__name__)
def test_empty_frame_gives_an_empty_result_with_the_same_columns(rfq, func) -> None:
    full = func(rfq({}, {"status": 404}))
    empty = func(rfq())
    assert empty.height == 0
    assert empty.schema == full.schema


@pytest.mark.parametrize("func", OBS_FUNCTIONS, ids=lambda f: f.__name__)
def test_untyped_empty_frame_is_accepted(rfq, func) -> None:
    # pl.DataFrame({"amount": []}) has dtype Null: it must behave as an empty frame. Input
    # columns the function does not use keep their dtype; computed columns get their usual one.
    untyped = func(pl.DataFrame({name: [] for name in rfq().columns}))
    typed = func(rfq())
    assert untyped.height == 0
    assert untyped.columns == typed.columns
    for name in set(typed.columns) - set(rfq().columns):
        assert untyped.schema[name] == typed.schema[name], name


def test_mistyped_columns_are_named(rfq) -> None:
    obs = rfq({})
    with pytest.raises(
        ValueError, match="effective_fee_bps: column 'input_amount' must hold exact"
    ):
        effective_fee_bps(obs.with_columns(pl.col("input_amount").cast(pl.Float64)))
    with pytest.raises(ValueError, match="price_drift: column 'observed_at' must hold datetimes"):
        price_drift(obs.with_columns(pl.col("observed_at").cast(pl.String)))
    with pytest.raises(ValueError, match="latency_stats: column 'status' must hold integers"):
        latency_stats(obs.with_columns(pl.col("status").cast(pl.String)))
    with pytest.raises(
        ValueError, match="fee_curve: column 'output_amount' must not hold negative"
    ):
        fee_curve(rfq({"output_amount": -1}))


def test_decimal_and_narrow_integer_amounts_are_accepted(rfq) -> None:
    obs = rfq({"input_amount": 10_000, "output_amount": 9_990})
    decimal = obs.with_columns(pl.col("input_amount", "output_amount").cast(pl.Decimal(38, 0)))
    narrow = obs.with_columns(pl.col("input_amount", "output_amount").cast(pl.Int64))
    for frame in (decimal, narrow):
        result = effective_fee_bps(frame)
        assert result["effective_fee_bps"].to_list() == [10.0]
        assert result.schema["input_amount"] == pl.Int128


def test_non_polars_inputs_are_refused(rfq, events, tiers) -> None:
    with pytest.raises(TypeError, match="fee_curve: expected a polars DataFrame, got DataFrame"):
        fee_curve(pd.DataFrame({"a": [1]}))
    with pytest.raises(TypeError, match="capacity_timeline: expected a polars DataFrame, got list"):
        capacity_timeline([])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="compare_with_tiers: expected a polars DataFrame"):
        compare_with_tiers(rfq({}), tiers({}).lazy())


def test_by_must_name_columns(rfq) -> None:
    with pytest.raises(TypeError, match="fee_curve: by: must be a column name or a sequence"):
        fee_curve(rfq({}), by=[1])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="fee_curve: by: column names must be distinct"):
        fee_curve(rfq({}), by=["token", "token"])


def test_inputs_are_not_modified(rfq) -> None:
    obs = rfq({}, {"status": 404})
    before = obs.clone()
    for func in OBS_FUNCTIONS:
        func(obs)
    assert obs.equals(before)
    assert obs.schema == before.schema
