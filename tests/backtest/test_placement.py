"""The capital-placement surrogate against seeded replays of the engine, the scenario a placement
makes, and the whole plan (search, replays, intervals) on a short horizon."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from toolkit.backtest import generate_flow, replay
from toolkit.backtest.capital import plan_capital
from toolkit.backtest.placement import (
    holding_bridgings,
    holding_demands,
    holding_keys,
    placement_scenario,
    token_usd,
)
from toolkit.models.intervals import student_t
from toolkit.models.inventory import HoldingModel, PolicyShape
from toolkit.models.netflow import net_flow, requested_orders
from toolkit.scenario import load_scenario

WEEK_H = 168.0
RATE = 0.03


@pytest.fixture(scope="module")
def default():
    return load_scenario("default")


@pytest.fixture(scope="module")
def demands(default):
    # Four weeks of flow, a seed of its own: the surrogate never sees the replayed flows.
    return holding_demands(default, generate_flow(default, span_h=672.0, rate_per_s=RATE, seed=100))


def _capital(scenario, scale: float) -> dict[tuple[int, str], int]:
    return {
        key: int(sum(p.balance for p in scenario.pools if (p.chain, p.token) == key) * scale)
        for key in holding_keys(scenario)
    }


def _predicted(scenario, demands, capital, shape: PolicyShape, kappa: float) -> float:
    """The book's 404 share by the surrogate (RFQ-weighted over holdings)."""
    bridgings = holding_bridgings(scenario)
    usd = {k: v * token_usd(scenario, k[1]) for k, v in capital.items()}
    totals: dict[str, float] = {}
    for (_, token), v in usd.items():
        totals[token] = totals.get(token, 0.0) + v
    refused = rfqs = 0.0
    for d in demands:
        key = (d.chain, d.token)
        peers = sum(1 for e in demands if e.token == d.token)
        model = HoldingModel(d, bridgings[key], 4 * usd[key], peers=peers, resolution_usd=500.0)
        out = model.outlook(
            shape, np.array([usd[key]]), kappa, token_total_usd=totals[d.token],
            others_band_usd=(1 - kappa) * (totals[d.token] - usd[key]),
            horizon_s=WEEK_H * 3600, capital_rate=0.0,
        )  # fmt: skip
        refused += float(out.refused_rfqs[0])
        rfqs += d.rfq_per_s * WEEK_H * 3600
    return refused / rfqs


def _measured(variant) -> tuple[float, float]:
    """Mean 404 share over three seeded weeks and the half-width of its 95 % interval."""
    shares = [
        replay(generate_flow(variant, span_h=WEEK_H, rate_per_s=RATE, seed=s), variant, seed=s,
               interval_s=600.0).summary.rfq_404_share
        for s in (1, 2, 3)
    ]  # fmt: skip
    return float(np.mean(shares)), student_t(2) * float(np.std(shares, ddof=1)) / math.sqrt(3)


@pytest.mark.parametrize(
    ("policy", "scale", "kappa", "period_s"),
    [("none", 0.3, 0.5, None), ("periodic", 0.1, 0.5, 14_400), ("threshold", 0.1, 0.7, None)],
)
def test_surrogate_404_share_against_replays(default, demands, policy, scale, kappa, period_s):
    capital = _capital(default, scale)
    variant = placement_scenario(
        default, capital, policy=policy, threshold_fraction=dict.fromkeys(capital, kappa),
        period_s=period_s,
    )  # fmt: skip
    shape = PolicyShape(policy, period_s, float(default.rebalancing.overshoot_share),
                        float(default.rebalancing.min_transfer_usd))  # fmt: skip
    predicted = _predicted(default, demands, capital, shape, kappa)
    mean, half = _measured(variant)
    assert mean > 0  # the check must bite: these placements do refuse
    if policy == "threshold":
        # Conservative by design (a top-up's travel starts at the threshold), within 3x.
        assert mean - half <= predicted <= 3 * (mean + half), (predicted, mean, half)
    else:
        assert mean / 2 - half <= predicted <= 2 * mean + half, (predicted, mean, half)


def test_demands_carry_the_net_flow_in_usd(default):
    flow = generate_flow(default, span_h=24.0, rate_per_s=RATE, seed=5)
    got = {(d.chain, d.token): d for d in holding_demands(default, flow, span_s=86_400.0)}
    net = net_flow(requested_orders(flow.filter(pl.col("converts"))), span_s=86_400.0)
    for row in net.iter_rows(named=True):
        d = got[(row["chain"], row["token"])]
        usd = token_usd(default, row["token"])
        assert d.drain_usd_per_s == pytest.approx(-row["net_per_h"] * usd / 3600)
        assert d.variance_usd2_per_s == pytest.approx(row["net_variance_per_h"] * usd**2 / 3600)
    to_base = flow.filter((pl.col("dst_chain") == 8453) & (pl.col("token") == "USDC")).height
    assert got[(8453, "USDC")].rfq_per_s == pytest.approx(to_base / 86_400.0)


def test_placement_scenario_puts_capital_in_one_pool_and_sets_the_bands(default):
    capital = _capital(default, 0.1)
    kappa = dict.fromkeys(capital, 0.4)
    s = placement_scenario(default, capital, policy="threshold", threshold_fraction=kappa)
    base = [p for p in s.pools if (p.chain, p.token) == (8453, "USDC")]
    assert sorted(p.balance for p in base) == [1, capital[(8453, "USDC")] - 1]
    targets = {(t.chain, t.token): t for t in s.rebalancing.targets}
    usdc = sum(v for (_, token), v in capital.items() if token == "USDC")
    target = targets[(8453, "USDC")]
    assert float(target.target_share) == pytest.approx(capital[(8453, "USDC")] / usdc, abs=1e-9)
    assert float(target.threshold_share) == pytest.approx(
        0.4 * float(target.target_share), abs=1e-9
    )
    assert sum(t.target_share for t in targets.values() if t.token == "USDC") <= 1


def test_placement_scenario_names_bad_input(default):
    capital = _capital(default, 0.1)
    with pytest.raises(ValueError, match="capital: must name every pooled holding"):
        placement_scenario(default, {(1, "USDC"): 10**9}, policy="none")
    with pytest.raises(ValueError, match=r"capital\[\(1, 'USDC'\)\]"):
        placement_scenario(default, {**capital, (1, "USDC"): 1}, policy="none")
    with pytest.raises(ValueError, match="threshold_fraction"):
        placement_scenario(default, capital, policy="threshold")
    with pytest.raises(ValueError, match=r"threshold_fraction\[\(1, 'USDC'\)\]: must be in"):
        placement_scenario(
            default, capital, policy="threshold", threshold_fraction=dict.fromkeys(capital, 1.0)
        )


def test_a_short_plan_verifies_its_best_candidate_with_intervals():
    plan = plan_capital("default", horizon_h=24.0, max_share_404=0.02, estimate_days=7,
                        seeds=(1, 2, 3), top=2, refine=False)  # fmt: skip
    assert plan.search_s > 0 and len(plan.candidates) >= 3
    v = plan.verified
    assert v.height == 2 and (v["seeds"] == 3).all()
    assert (v["share_404_low"] <= v["share_404_mean"]).all()
    assert (v["share_404_mean"] <= v["share_404_high"]).all()
    best = plan.best()
    if best is not None:
        row = v.filter(pl.col("label") == best.label).row(0, named=True)
        assert row["share_404_high"] <= 0.02
    assert {"chain", "token", "net", "net_per_h_low", "net_per_h_high"} <= set(
        plan.net_flow.columns
    )
