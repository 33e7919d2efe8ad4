"""The whole-flow backtest: deterministic, conserving, and the shock measurably interacts."""

from __future__ import annotations

import dataclasses

import pytest
from polars.testing import assert_frame_equal

from toolkit.arguments import ArgumentError
from toolkit.backtest import WholeFlow, whole_flow
from toolkit.scenario import load_scenario

SMALL = WholeFlow(span_h=1.0, shock_at_share=0.25, shock_h=0.2, users_per_h=20.0)


@pytest.fixture(scope="module")
def shocked():  # type: ignore[no-untyped-def]
    return whole_flow(SMALL, seed=5, progress=False)


@pytest.fixture(scope="module")
def control():  # type: ignore[no-untyped-def]
    return whole_flow(dataclasses.replace(SMALL, shock=0.0), seed=5, progress=False)


def test_same_seed_same_frames(shocked) -> None:  # type: ignore[no-untyped-def]
    again = whole_flow(SMALL, seed=5, progress=False)
    for name in (
        "intents", "swaps", "credit", "borrow", "liquidations", "users", "inventory", "transfers"
    ):  # fmt: skip
        assert_frame_equal(getattr(again, name), getattr(shocked, name))
    assert again.summary == shocked.summary


def test_inventory_changes_by_exactly_what_settlements_booked_less_bridge_fees(shocked) -> None:  # type: ignore[no-untyped-def]
    # The default scenario's threshold policy: settlements credit the origin chain, transfers
    # pay their bridges; per token, nothing appears or vanishes.
    summary = shocked.summary
    assert summary.policy == "threshold" and summary.outstanding_end == 0
    assert summary.inventory_change == {
        token: summary.books_gain[token] - summary.bridge_fees[token]
        for token in summary.books_gain
    }
    assert sum(summary.pool_earned.values()) > 0
    assert shocked.transfers.height == summary.transfers
    steps = shocked.inventory.group_by("step").len()
    assert (steps["len"] == len(shocked.inventory["token"].unique()) * 4).all()


def test_instant_free_pool_balances_grow_by_exactly_the_fees_earned() -> None:
    # The named baseline: every settlement repays its lending pool in place.
    scenario = load_scenario("default").with_policy("instant-free")
    summary = whole_flow(SMALL, scenario, seed=5, progress=False).summary
    assert summary.outstanding_end == 0 and summary.transfers == 0
    assert summary.pool_balance_change == summary.pool_earned
    assert summary.inventory_change == summary.books_gain


def test_debt_is_draws_less_repayments_and_liquidations(shocked) -> None:  # type: ignore[no-untyped-def]
    s = shocked.summary
    expected = (
        s.opening_debt_usd + s.drawn_usd - s.repaid_usd - s.liquidated_usd
        - s.bad_debt_usd
    )  # fmt: skip
    assert s.end_debt_usd == pytest.approx(expected, rel=1e-9, abs=1e-3)
    assert shocked.credit["debt_usd"][-1] == pytest.approx(s.end_debt_usd)


def test_shock_liquidates_more_and_slips_more_than_control(shocked, control) -> None:  # type: ignore[no-untyped-def]
    assert shocked.summary.liquidations > control.summary.liquidations
    assert shocked.summary.collateral_sold_usd > control.summary.collateral_sold_usd
    assert shocked.summary.swap_slippage_bps > control.summary.swap_slippage_bps
    assert shocked.summary.depth_during_usd < control.summary.depth_during_usd


def test_interactions_report_phases_and_buckets(shocked) -> None:  # type: ignore[no-untyped-def]
    frame = shocked.interactions()
    depth = dict(frame.filter(measure="depth_2pct_usd").select("group", "value").iter_rows())
    assert depth["during"] < depth["before"]
    assert frame.filter(measure="correlation").height == 1


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("span_h", 0.0),
        ("shock", -1.0),
        ("accounts", 0),
        ("destination", 8453),
        ("bridge_bps", -1.0),
    ],
)
def test_bad_settings_name_the_field(field: str, value: object) -> None:
    with pytest.raises(ArgumentError, match=field):
        dataclasses.replace(WholeFlow(source=8453, destination=1), **{field: value})


def test_bad_seed_and_settings_type() -> None:
    with pytest.raises(ArgumentError, match="seed"):
        whole_flow(SMALL, seed=-1, progress=False)
    with pytest.raises(ArgumentError, match="settings"):
        whole_flow({"span_h": 1.0}, progress=False)  # type: ignore[arg-type]


OTHER_BOOKS = [
    (5, SMALL),
    (2, dataclasses.replace(SMALL, accounts=120, collateral_median_usd=20_000.0)),
    (11, dataclasses.replace(SMALL, shock=-0.45, max_sale_impact_bps=300.0)),
]


@pytest.mark.parametrize(("seed", "settings"), OTHER_BOOKS)
def test_every_counted_liquidation_moved_debt_and_collateral(
    seed: int, settings: WholeFlow
) -> None:
    """A step counts calls only when debt was repaid and collateral seized; no account is
    counted twice in a step for calls that moved nothing, and the accounts liquidated over the
    run are at most the book."""
    run = whole_flow(settings, seed=seed, progress=False)
    frame = run.liquidations
    counted = frame.filter(frame["liquidations"] > 0)
    assert counted.height > 0
    assert (counted["debt_repaid_usd"] > 0).all()
    assert (counted["collateral_seized_usd"] > 0).all()
    idle = frame.filter(frame["liquidations"] == 0)
    assert (idle["debt_repaid_usd"] == 0).all() and (idle["collateral_seized_usd"] == 0).all()
    assert (frame["accounts_liquidated"] <= frame["liquidations"]).all()
    assert run.summary.accounts_liquidated <= settings.accounts
    assert run.summary.liquidations <= 5 * run.summary.accounts_liquidated * settings.steps


@pytest.mark.parametrize(("seed", "settings"), OTHER_BOOKS)
def test_sales_follow_the_policy_and_conserve_the_collateral(
    seed: int, settings: WholeFlow
) -> None:
    """Each step sells at most the policy's cap; what was seized is sold or still held."""
    run = whole_flow(settings, seed=seed, progress=False)
    frame = run.liquidations
    assert (frame["collateral_sold_weth"] <= frame["max_sale_weth"] + 1e-12).all()
    seized, sold = frame["collateral_seized_weth"].sum(), frame["collateral_sold_weth"].sum()
    assert seized == pytest.approx(sold + run.summary.inventory_end_weth, rel=1e-9)
    assert frame["sales_impact_bps"].max() <= settings.max_sale_impact_bps * 1.05


@pytest.mark.parametrize(("seed", "settings"), OTHER_BOOKS)
def test_the_shock_is_the_path_its_name_says(seed: int, settings: WholeFlow) -> None:
    """Once the drawdown is done the reference path is exactly (1 + shock) times the control's."""
    run = whole_flow(settings, seed=seed, progress=False)
    swaps = run.swaps
    assert swaps["shock_pct"][-1] == pytest.approx(settings.shock * 100, abs=1e-9)
    assert swaps["shock_pct"].min() == pytest.approx(settings.shock * 100, abs=1e-9)
    assert (swaps["control_usd"] > 0).all()


def test_liquidations_off_is_the_control_for_the_sales() -> None:
    off = whole_flow(dataclasses.replace(SMALL, liquidations=False), seed=5, progress=False)
    assert off.summary.liquidations == off.summary.accounts_liquidated == 0
    assert off.summary.collateral_sold_usd == 0
    assert off.summary.min_health_factor < 1  # the shock left accounts under water
    assert off.summary.shock_pct_end == pytest.approx(SMALL.shock * 100)


def test_bad_sale_policy_names_the_field() -> None:
    with pytest.raises(ArgumentError, match="max_sale_impact_bps"):
        WholeFlow(max_sale_impact_bps=0.0)
    with pytest.raises(ArgumentError, match="liquidations: must be True or False"):
        WholeFlow(liquidations=1)  # type: ignore[arg-type]


def test_summary_is_frozen_and_its_frame_holds_the_scalar_figures(shocked) -> None:  # type: ignore[no-untyped-def]
    s = shocked.summary
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.users = 0  # type: ignore[misc]
    row = s.to_frame().row(0, named=True)
    assert row["users"] == shocked.users.height
    assert row["rfq_404_share"] == s.rfq_404_share and 0.0 <= s.rfq_404_share <= 1.0
    assert "pool_earned" not in row and row["outstanding_end"] == 0


def test_each_run_steps_its_own_copy_of_the_ledger_at_genesis() -> None:
    from toolkit.backtest.wholeflow.market import Market, genesis_ledger, scaled
    from toolkit.backtest.wholeflow.settings import GENESIS
    from toolkit.scenario import load_scenario
    from toolkit.world.evm import Chains
    from toolkit.world.swap import state_key

    scenario = scaled(load_scenario("default", env={}), SMALL.depth_scale)
    fresh = Chains(scenario, genesis=GENESIS).ledger(SMALL.source)
    stepped = genesis_ledger(scenario, SMALL.source)
    assert state_key(stepped) == state_key(fresh)
    market = Market(scenario, stepped, seed=1)
    market.traders.step(GENESIS + 60.0, market.weth_usd() * 0.9)  # a 10 % move on this copy
    assert state_key(stepped) != state_key(fresh)
    assert state_key(genesis_ledger(scenario, SMALL.source)) == state_key(fresh)
