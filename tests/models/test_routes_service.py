"""The route models end to end: inputs collected from an embedded service by
:class:`toolkit.backtest.routes.RouteLab` (the swap endpoint, the intents RFQ, routes executed on
the simulated chains after background flow), and by the swap collector into a store."""

from __future__ import annotations

import polars as pl
import pytest

from toolkit.backtest.routes import RouteLab
from toolkit.client import EmbeddedService, SwapClient, chain_web3
from toolkit.clock import VirtualClock
from toolkit.collect.swap import SwapSweep, default_points
from toolkit.models import (
    delay_outcomes,
    firm_vs_indicative,
    gas_threshold,
    impact_curves,
    network_comparison,
    route_comparison,
)
from toolkit.store import Store
from toolkit.store.queries import route_costs


@pytest.fixture(scope="module")
def lab() -> RouteLab:
    return RouteLab(seed=3)


def test_the_endpoint_answers_become_impact_curves(lab: RouteLab) -> None:
    curves = impact_curves(lab.observe([("USDC", "WETH")], [1e3, 1e5, 1e7]))
    assert curves.height == 6
    for network in ("mainnet", "base"):
        impact = curves.filter(pl.col("network") == network)["impact_bps"].to_list()
        assert impact == sorted(impact) and impact[0] >= 5.0  # the 5 bps pool's fee at least
    compared = network_comparison(curves)
    assert (compared["gas_bps_mainnet"] > 100 * compared["gas_bps_base"]).all()
    assert compared["cheaper"].to_list()[0] == "base"  # $1000: mainnet's gas dominates
    limits = gas_threshold(curves).filter(pl.col("network") == "mainnet")
    assert limits["observed_usd"][0] == 1e5


def test_the_default_pools_compare_with_the_grid(lab: RouteLab) -> None:
    frame = route_comparison(lab.venues("mainnet"), "USDC", "WETH", [10**13])  # $10M
    assert frame["paths"][0] > 1
    assert frame["grid_gain_bps"][0] >= 0 and frame["split_gain_bps"][0] > 0


def test_a_stale_route_delivers_its_quote_exactly_when_nothing_moves() -> None:
    still = RouteLab(seed=1)
    trials = still.delay_trials(
        "base", ("USDC", "WETH"), 1e5, [2, 10], trials=2, noise_trades=0, volatility=0.0
    )
    assert trials.height == 4
    assert (trials["executed_out"] == trials["quoted_out"]).all()


def test_stale_routes_and_the_two_strategies(lab: RouteLab) -> None:
    legs = lab.strategy_legs([1e4, 1e6])  # before the flow moves the pools
    trials = lab.delay_trials("base", ("USDC", "WETH"), 1e5, [2, 40], trials=8, noise_usd=200_000.0)
    assert trials.height == 16
    moved = trials.filter(pl.col("executed_out") != pl.col("quoted_out")).height
    assert moved >= 8  # the pools moved between quote and execution
    outcomes = delay_outcomes(trials, [0, 50, 10_000])
    for delay in (2.0, 40.0):
        rates = outcomes.filter(pl.col("delay_s") == delay)["revert_share"].to_list()
        assert rates == sorted(rates, reverse=True) and rates[-1] == 0.0
    mainnet = lab.delay_trials("mainnet", ("USDC", "WETH"), 1e5, [12], trials=3)
    revert_shares = delay_outcomes(pl.concat([trials, mainnet]), [50]).select(
        "network", "delay_s", "revert_share"
    )
    table = firm_vs_indicative(legs, revert_shares)
    assert table.height == 4
    assert sorted(set(table["strategy"])) == ["intents then swap", "swap then intents"]
    small = table.filter(pl.col("size_usd") == 1e4)
    assert (small["cost_bps"] > 0).all() and not small["refused"].any()
    # a mainnet swap's gas weighs on the swap-first strategy at $10k, not the Base swap's
    gas = dict(zip(small["strategy"], small["gas_bps"], strict=True))
    assert gas["swap then intents"] > 100 * gas["intents then swap"]
    assert table["failure_share"].is_between(0.0, 1.0).all()


def test_overlapping_trials_give_more_trials_clustered_by_their_overlap() -> None:
    # A trial every block on Base (2 s), executed 2 s and 6 s later: trials quoted within one
    # longest delay (3 blocks) of each other share a cluster.
    lab = RouteLab(seed=5)
    trials = lab.delay_trials(
        "base", ("USDC", "WETH"), 1e4, [2, 6], trials=9, stride_blocks=1, noise_usd=5e4
    )
    assert trials.height == 18
    assert trials.group_by("trial").len()["len"].to_list() == [2] * 9
    assert sorted(set(trials["cluster"])) == [0, 1, 2]
    outcomes = delay_outcomes(trials, [0, 10_000])
    assert (outcomes["trials"] == 9).all()
    assert (outcomes["revert_ci95_low"] <= outcomes["revert_share"]).all()
    assert (outcomes["revert_share"] <= outcomes["revert_ci95_high"]).all()
    lab.close()


def test_impact_curves_take_the_stores_own_frame_of_a_collection() -> None:
    """A swap sweep against the embedded service, read back by ``route_costs``: the same impact
    as RouteLab measures on the same pools (reference: the pools' Uniswap math against the
    scenario's prices), and gas at the gas price the chain answered."""
    sizes = [1e3, 1e5, 1e7]
    with EmbeddedService("default", env={}, clock=VirtualClock()) as service:
        store = Store(":memory:")
        web3s = {"mainnet": chain_web3(1, embedded=service)}  # no web3 for base: no gas price
        points = default_points(["mainnet", "base"], [("USDC", "WETH")], sizes)
        client = SwapClient(embedded=service, env={})
        run = SwapSweep(client, store, points=points, web3s=web3s, progress=False).run()
        gas_price = int(web3s["mainnet"].eth.gas_price)
    assert run.status == "completed"
    curves = impact_curves(route_costs(store))
    assert curves.height == 6 and set(curves["pair"].to_list()) == {"USDC/WETH"}
    assert curves["amount_in_usd"].to_list() == sizes * 2
    measured = impact_curves(RouteLab(seed=1).observe([("USDC", "WETH")], sizes))  # fresh pools
    assert curves["impact_bps"].to_list() == pytest.approx(measured["impact_bps"].to_list())
    mainnet = curves.filter(pl.col("network") == "mainnet")
    assert mainnet["gas_price_wei"].to_list() == [gas_price] * 3
    expected = [g * gas_price / 1e18 * 3000 for g in mainnet["gas_used"].to_list()]  # ETH $3000
    assert mainnet["gas_usd"].to_list() == pytest.approx(expected)
    base = curves.filter(pl.col("network") == "base")
    assert base["gas_usd"].null_count() == 3 and base["impact_bps"].null_count() == 0
