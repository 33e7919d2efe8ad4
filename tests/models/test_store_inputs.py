"""Each model family's input is what the store gives: its tables as stored, or one query of
toolkit.store.queries. A column renamed on either side fails here, not in a notebook."""

from __future__ import annotations

from collections.abc import Callable, Iterator

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
    observer_share,
    price_drift,
    tier_premium_summary,
)
from toolkit.models.economics import capital_sweep, pool_economics
from toolkit.models.routes import impact_against_best, impact_curves
from toolkit.store import Store
from toolkit.store.queries import backtest_pool_totals, backtest_runs, route_costs, swap_routes


@pytest.fixture
def store() -> Iterator[Store]:
    with Store(":memory:") as opened:
        yield opened


def _table(store: Store, name: str) -> pl.DataFrame:
    return store.query(f"SELECT * FROM {name}")


@pytest.mark.parametrize(
    "model",
    [effective_fee_bps, fee_curve, fee_by_amount_bucket, eta_validity_stats, latency_stats,
     price_drift, empirical_blocking],
)  # fmt: skip
def test_pricing_and_capacity_models_take_rfq_observations_as_stored(
    store: Store, model: Callable[[pl.DataFrame], pl.DataFrame]
) -> None:
    out = model(_table(store, "rfq_observations"))
    assert isinstance(out, pl.DataFrame) and out.height == 0


def test_tier_and_pool_models_take_their_tables_as_stored(store: Store) -> None:
    rfq = _table(store, "rfq_observations")
    compared = compare_with_tiers(rfq, _table(store, "fee_tiers"))
    assert "premium_bps" in compared.columns
    assert tier_premium_summary(compared).height == 0
    assert capacity_timeline(_table(store, "liquidity_events")).height == 0
    held = observer_share(
        rfq, _table(store, "pool_snapshots"), transactions=_table(store, "transactions")
    )
    assert held.columns == ["dst_chain", "token", "quotes", "held_mean_share", "held_peak_share"]


def test_economics_take_the_backtest_queries_once_priced(store: Store) -> None:
    totals = backtest_pool_totals(store)
    priced = totals.select(
        "run_id", "pool", "start_t", "end_t", "mean_utilization",
        *(pl.lit(None, pl.String).alias(c) for c in ("label", "chain", "token", "pool_type")),
        *(pl.lit(None, pl.Float64).alias(c) for c in ("capital_tokens", "capital_usd",
                                                       "fee_revenue_tokens", "fee_revenue_usd")),
    )  # fmt: skip
    assert pool_economics(priced, "any").height == 0
    assert capital_sweep(backtest_runs(store), priced).height == 0


def test_stored_swap_routes_carry_what_impact_needs_but_a_mid(store: Store) -> None:
    routes = swap_routes(store)
    assert {"network", "token_in", "token_out", "amount_in", "amount_out", "status"} <= set(
        routes.columns
    )
    assert "mid_out" not in routes.columns  # unpriced: impact_against_best, or route_costs
    rated = routes.select(
        "network",
        pl.concat_str("token_in", "token_out", separator="→").alias("pair"),
        (pl.col("amount_out").cast(pl.Float64) / pl.col("amount_in").cast(pl.Float64)).alias(
            "rate"
        ),
    )
    assert impact_against_best(rated).columns == ["network", "pair", "rate", "impact_bps"]


def test_impact_curves_take_the_stored_routes_priced(store: Store) -> None:
    curves = impact_curves(route_costs(store))
    assert curves.height == 0 and {"impact_bps", "gas_bps", "total_bps"} <= set(curves.columns)
