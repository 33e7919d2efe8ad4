"""Auto top-up: the operator's draws follow the config, fees are the product's, capacity holds."""

from __future__ import annotations

import polars as pl
import pytest

from toolkit.arguments import ArgumentError
from toolkit.credit import DEFAULT_RULES
from toolkit.models.topup import TopUpRun, cheapest_config, simulate_topups, spending

USD = 10**6


def run(spends: pl.DataFrame, **overrides: object) -> TopUpRun:
    settings = {
        "collateral_value": 10_000 * USD,
        "maintenance_ltv": 0.925,
        "ltv": 0.9,
        "threshold": 100 * USD,
        "target_balance": 300 * USD,
    } | overrides
    return simulate_topups(spends, **settings)  # type: ignore[arg-type]


def test_a_spend_below_the_threshold_draws_back_to_the_target_net_of_the_fee() -> None:
    spends = pl.DataFrame({"t": [10.0, 20.0], "amount": [150 * USD, 100 * USD]})
    events = run(spends).events
    first, _, second = events.rows(named=True)
    # enabling tops the empty receiver up to 300 delivered: a draw of 300 / 0.995
    assert first["draw"] == -(-300 * USD * 10_000 // 9_950)
    assert first["draw"] - first["fee"] >= 300 * USD
    assert first["fee"] == DEFAULT_RULES.draw_fee(first["draw"])
    # 300 - 150 = 150 stays above 100: no draw; then 50 < 100: back to 300
    assert (
        second["balance"] - second["draw"] + second["fee"]
        == 50 * USD + events["balance"][0] - 300 * USD
    )
    assert second["balance"] >= 300 * USD and second["principal"] == first["draw"] + second["draw"]


def test_draws_stop_at_the_credit_capacity_and_spends_are_then_declined() -> None:
    spends = pl.DataFrame({"t": [float(i) for i in range(1, 40)], "amount": [100 * USD] * 39})
    result = run(spends, collateral_value=1_000 * USD)  # capacity 900
    assert result.events["principal"].max() == 900 * USD
    assert result.summary.declined > 0


def test_the_health_floor_caps_the_debt() -> None:
    spends = pl.DataFrame({"t": [float(i) for i in range(1, 40)], "amount": [100 * USD] * 39})
    result = run(spends, collateral_value=1_000 * USD, min_health_factor=1.5)
    # 1,000 x 0.925 / 1.5 = 616.67: the operator never draws past it
    highest = result.events["principal"].max()
    assert isinstance(highest, int) and highest <= 616_666_667
    assert result.summary.min_health_factor >= 1.5


def test_the_cheapest_funded_config_comes_first() -> None:
    spends = spending(rate_per_d=4, median=40 * USD, sigma=0.5, span_d=30, seed=1)
    grid = cheapest_config(
        spends,
        thresholds=[50 * USD, 200 * USD],
        targets=[200 * USD, 500 * USD],
        collateral_value=10_000 * USD,
        maintenance_ltv=0.925,
        ltv=0.9,
    )
    funded = grid.filter("funded")
    assert funded.height >= 1 and grid["funded"][0]
    assert funded["cost"].to_list() == sorted(funded["cost"].to_list())
    assert (grid.filter(~pl.col("funded"))["declined"] > 0).all()


def test_spending_is_seeded() -> None:
    a = spending(rate_per_d=10, median=25 * USD, sigma=0.4, span_d=3, seed=7)
    b = spending(rate_per_d=10, median=25 * USD, sigma=0.4, span_d=3, seed=7)
    assert a.equals(b) and a["t"].is_sorted() and (a["amount"] >= 1).all()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"target_balance": 50 * USD}, "target_balance: must be an integer >= 100000000"),
        ({"min_health_factor": 0.9}, "min_health_factor: must be a finite number >= 1"),
        ({"ltv": 0.95}, "ltv: must be a finite number >= 0 and <= 0.925"),
    ],
)
def test_bad_configs_name_the_field(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        run(pl.DataFrame({"t": [1.0], "amount": [1]}), **overrides)
