"""Flow generators: determinism, shape, and the statistics users ask for."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from toolkit.flows import (
    DEFAULT_PROFILE,
    FLOW_SCHEMA,
    Constant,
    Exponential,
    Fixed,
    LogNormal,
    Uniform,
    default_sizes,
    generate_flow,
    poisson_arrivals,
)
from toolkit.scenario import load_scenario


def test_same_seed_same_flow_and_different_seed_differs() -> None:
    a = generate_flow("default", span_h=1.0, rate_per_s=1.0, seed=3)
    b = generate_flow("default", span_h=1.0, rate_per_s=1.0, seed=3)
    c = generate_flow("default", span_h=1.0, rate_per_s=1.0, seed=4)
    assert_frame_equal(a, b)
    assert not a.equals(c)


def test_flow_schema_sorted_times_and_unique_ids() -> None:
    flow = generate_flow("default", span_h=2.0, rate_per_s=0.5, seed=1)
    assert flow.schema == FLOW_SCHEMA
    assert flow["t"].is_sorted()
    assert flow["t"].min() >= 0.0 and flow["t"].max() < 7200.0  # type: ignore[operator]
    assert flow["request_id"].n_unique() == flow.height
    assert set(flow["type"].unique()) == {"ExactInput", "ExactOutput"}


def test_arrival_count_follows_rate_and_profile() -> None:
    # Hour 0 of the default profile is 0.5, hour 15 is 1.6: counts follow the multiplier.
    times = poisson_arrivals(2.0, 24.0, seed=5, profile=DEFAULT_PROFILE)
    per_hour = np.bincount((times // 3600).astype(int), minlength=24)
    for hour in (0, 15):
        expected = 2.0 * DEFAULT_PROFILE[hour] * 3600
        assert abs(per_hour[hour] - expected) < 5 * math.sqrt(expected)
    flat = poisson_arrivals(2.0, 24.0, seed=5)
    assert abs(len(flat) - 2.0 * 86400) < 5 * math.sqrt(2.0 * 86400)


def test_partial_hour_and_zero_rate() -> None:
    times = poisson_arrivals(10.0, 0.25, seed=2)
    assert times.max() < 900.0
    assert len(poisson_arrivals(0.0, 1.0, seed=2)) == 0


def test_sizes_are_clipped_to_each_routes_fee_tiers() -> None:
    default_scenario = load_scenario("default", env={})
    flow = generate_flow(
        default_scenario,
        span_h=2.0,
        rate_per_s=2.0,
        seed=9,
        sizes={"USDC": LogNormal(median=10**9, sigma=4.0), "WETH": LogNormal(10**18, 4.0)},
    )
    for (src, dst, token), group in flow.group_by("src_chain", "dst_chain", "token"):
        route = default_scenario.route(src, dst, token)
        assert route is not None
        tiers = route.fee_tiers
        low, high = group["amount"].min(), group["amount"].max()
        assert isinstance(low, int) and isinstance(high, int)
        assert tiers[0].min_amount <= low and high <= tiers[-1].max_amount
    # A spread this wide must hit both bounds somewhere.
    usdc = flow.filter(pl.col("token") == "USDC")["amount"]
    assert usdc.min() == 10_000_000 and usdc.max() == 1_000_000_000_000


def test_default_sizes_use_scenario_prices() -> None:
    sizes = default_sizes("default")
    assert sizes["USDC"] == LogNormal(median=5_000 * 10**6, sigma=1.2)
    # 5,000 USD at 3,000 USD per WETH.
    assert sizes["WETH"].median == 5_000 * 10**18 // 3_000  # type: ignore[union-attr]


def test_route_mix_type_mix_and_conversions() -> None:
    flow = generate_flow(
        "default",
        span_h=4.0,
        rate_per_s=2.0,
        seed=12,
        profile=None,
        routes={(1, 8453, "USDC"): 3.0, (10, 42161, "WETH"): 1.0},
        exact_output_share=0.25,
        convert_probability=0.4,
        convert_delay=Uniform(2.0, 6.0),
    )
    n = flow.height
    share = (flow["token"] == "USDC").mean()
    assert abs(share - 0.75) < 4 * math.sqrt(0.75 * 0.25 / n)  # type: ignore[operator]
    assert set(flow["src_chain"].unique()) == {1, 10}
    outputs = (flow["type"] == "ExactOutput").mean()
    assert abs(outputs - 0.25) < 4 * math.sqrt(0.25 * 0.75 / n)  # type: ignore[operator]
    assert abs(flow["converts"].mean() - 0.4) < 4 * math.sqrt(0.24 / n)  # type: ignore[operator]
    assert flow["convert_delay"].min() >= 2.0 and flow["convert_delay"].max() < 6.0  # type: ignore[operator]


def test_fixed_sizes_and_delay_models() -> None:
    flow = generate_flow(
        "single-pool",
        span_h=0.5,
        rate_per_s=1.0,
        seed=1,
        sizes={"USDC": Fixed(10**9)},
        convert_delay=Constant(3.0),
    )
    assert flow["amount"].unique().to_list() == [10**9]
    assert flow["convert_delay"].unique().to_list() == [3.0]
    capped = Exponential(4.0, cap_s=5.0).sample(np.random.default_rng(0), 10_000)
    # E[min(X, c)] = mean * (1 - exp(-c / mean)) for an exponential X.
    assert capped.max() == 5.0 and abs(capped.mean() - 4.0 * (1 - math.exp(-1.25))) < 0.1


def test_amounts_are_exact_beyond_int64() -> None:
    # 300 WETH is 3e20 smallest units: past Int64, kept exact as Int128.
    flow = generate_flow(
        "default", span_h=0.2, seed=1, routes={(1, 10, "WETH"): 1.0},
        sizes={"WETH": Fixed(300 * 10**18)},
    )  # fmt: skip
    assert flow["amount"].dtype == pl.Int128
    assert flow["amount"][0] == 300 * 10**18


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rate_per_s": -1.0}, "rate_per_s: must be a finite number >= 0, got -1.0"),
        ({"span_h": 0}, "span_h: must be a finite number > 0, got 0"),
        ({"seed": -3}, "seed: must be an integer >= 0, got -3"),
        ({"profile": [1.0] * 23}, "profile: must hold 24 hourly multipliers, got 23"),
        ({"profile": [1.0] * 23 + [-2.0]}, "profile[23]: must be a finite number >= 0, got -2.0"),
        ({"exact_output_share": 1.5}, "exact_output_share: must be a finite number >= 0 and <= 1"),
        ({"convert_probability": "x"}, "convert_probability: must be a finite number >= 0 and"),
        ({"routes": {(1, 999, "USDC"): 1.0}}, "routes: route 1->999 USDC is not onboarded"),
        ({"routes": {(1, 10, "USDC"): 0.0}}, "routes: at least one weight must be > 0"),
        ({"sizes": {"USDC": Fixed(1)}}, "sizes['USDC']: Fixed amount 1 is outside the fee-tier"),
        ({"sizes": {"USDC": 5}}, "sizes['USDC']: must be a LogNormal or Fixed size model"),
        ({"convert_delay": 5.0}, "convert_delay: must be a Constant, Uniform or Exponential"),
        ({"scenario": "nope"}, "scenario: "),
    ],
)
def test_bad_generator_arguments(kwargs: dict, message: str) -> None:
    scenario = kwargs.pop("scenario", "default")
    with pytest.raises(ValueError) as info:
        generate_flow(scenario, span_h=kwargs.pop("span_h", 0.1), **kwargs)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: LogNormal(median=0), "LogNormal.median: must be an integer >= 1, got 0"),
        (lambda: LogNormal(10, sigma=-1.0), "LogNormal.sigma: must be a finite number >= 0"),
        (lambda: Fixed(-5), "Fixed.amount: must be an integer >= 1, got -5"),
        (lambda: Uniform(3.0, 1.0), "Uniform.high_s: must be >= low_s (3.0), got 1.0"),
        (lambda: Exponential(0.0), "Exponential.mean_s: must be a finite number > 0, got 0.0"),
        (lambda: Constant(float("nan")), "Constant.delay_s: must be a finite number >= 0"),
    ],
)
def test_bad_distribution_parameters(build, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build()
