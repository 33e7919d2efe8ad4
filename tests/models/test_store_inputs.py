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


@pytest.fixture(scope="module")
def collected_credit() -> Iterator[tuple[Store, dict[str, float]]]:
    """Forty accounts of the default scenario collected from the embedded service, and the
    prices the service values their collateral at (USDC per token)."""
    from toolkit.client import ServiceClient
    from toolkit.client.credit import CreditClient
    from toolkit.clock import VirtualClock
    from toolkit.collect import CreditCollector
    from toolkit.scenario import load_scenario
    from toolkit.world.evm.credit import book_accounts

    accounts = book_accounts(load_scenario("default", env={}))[:40]
    with ServiceClient(embedded=True, clock=VirtualClock()) as client, Store(":memory:") as store:
        CreditCollector(client, store, accounts=accounts, progress=False).run()
        credit = CreditClient(client)
        protocol = store.query("SELECT * FROM credit_protocol")
        prices = {
            row["symbol"]: float(
                credit.collateral(
                    row["chain"], row["collateral"].partition(":")[2]
                ).collateral_price_usd
            )
            for row in protocol.unique("symbol", keep="first").iter_rows(named=True)
        }
        yield store, prices


def test_cards_take_the_stored_credit_book_as_positions(
    collected_credit: tuple[Store, dict[str, float]],
) -> None:
    from toolkit.models.cards import book_positions, card_swipes, simulate_cards
    from toolkit.report.load import stored_credit_book

    store, prices = collected_credit
    book = stored_credit_book(store, prices)
    positions = book_positions(book)
    assert list(positions) == list(book.accounts)
    # reference: the health factors the service's /info reported (4 decimals), as stored
    stored = book.stored_health_factor
    assert stored is not None
    indebted = [i for i, debt in enumerate(book.debt) if debt > 0]
    assert len(indebted) > 5
    for i in indebted:
        figures = positions[book.accounts[i]].figures(book.rules)
        assert figures.health_factor is not None
        assert float(figures.health_factor) == pytest.approx(stored[i], abs=2e-4)
    swipes = card_swipes(positions, rate_per_h=2, span_h=2, seed=4)
    run = simulate_cards(swipes, positions, rules=book.rules, seed=4)
    assert run.summary.swipes == swipes.height > 50 and run.summary.approved > 0
    approved = run.decisions.filter(pl.col("approved"))
    assert approved["health_factor"].drop_nulls().min() >= 1.3  # type: ignore[operator]


def test_top_ups_replay_the_stored_configs_from_the_stored_book(
    collected_credit: tuple[Store, dict[str, float]],
) -> None:
    from toolkit.arguments import ArgumentError
    from toolkit.models.topup import simulate_topups, spending
    from toolkit.models.topup_configs import stored_topups
    from toolkit.report.load import stored_credit_book
    from toolkit.store.queries import topup_configs

    store, prices = collected_credit
    book = stored_credit_book(store, prices)
    configs = topup_configs(store)
    assert configs.height > 0
    spends = spending(rate_per_d=3, median=30 * 10**6, sigma=0.5, span_d=14, seed=2)
    table = stored_topups(configs, book, spends)
    assert table.height == configs.height
    assert table["account"].to_list() == configs["account"].to_list()
    # one config by hand: the account's values, weights and debt from the book
    first = table.row(0, named=True)
    i = book.accounts.index(first["account"].lower())
    values = book.values()[i]
    ltv = sum(
        v * book.rules.rule(a).ltv_bps / 10_000 for a, v in zip(book.assets, values, strict=True)
    )
    maintenance = float(values @ book.maintenance_ltv)
    by_hand = simulate_topups(
        spends,
        collateral_value=round(values.sum() * 10**6),
        maintenance_ltv=maintenance / values.sum(),
        ltv=min(ltv, maintenance) / values.sum(),
        threshold=first["threshold"],
        target_balance=first["target_balance"],
        min_health_factor=first["health_factor_floor"],
        principal=round(float(book.debt[i]) * 10**6),
        rules=book.rules,
    )
    assert {k: first[k] for k in by_hand.summary.as_dict()} == pytest.approx(
        by_hand.summary.as_dict()
    )
    floors = configs["health_factor_bps"].cast(pl.Float64) / 10_000
    assert (table["health_factor_floor"] >= floors.clip(lower_bound=1.0)).all()
    with pytest.raises(ArgumentError, match="configs: must be accounts the book holds"):
        stored_topups(configs.with_columns(account=pl.lit("0xnobody")), book, spends)


def test_impact_curves_take_the_stored_routes_priced(store: Store) -> None:
    curves = impact_curves(route_costs(store))
    assert curves.height == 0 and {"impact_bps", "gas_bps", "total_bps"} <= set(curves.columns)
