"""Analytics on collected frames: quote pricing, pool capacity, swap routes, economics and
credit health.

Pure functions: polars frames (with the store's column names and dtypes) or numbers in,
polars frames or numbers out; no I/O, no clock. Amounts stay exact (Int128); floats appear
only for derived figures such as fees in basis points and blocking probabilities. The figures
several families share (price impact, slippage and cost in bps, the 404 share) are defined
once, in :mod:`toolkit.models.bps`.

Each family's input, and where a store gives it (``store.query("SELECT * FROM name")`` for a
table as stored; :mod:`toolkit.store.queries` for a query):

==========================  ===================================================================
family                      store input
==========================  ===================================================================
pricing (fees, tiers,       ``rfq_observations`` as stored; ``fee_tiers`` for the tier
quotes)                     comparison
capacity (observed)         ``liquidity_events`` (:func:`capacity_timeline`),
                            ``rfq_observations`` (:func:`empirical_blocking`), with
                            ``pool_snapshots`` and ``transactions`` (:func:`observer_share`)
capacity (formulas)         numbers: rates, holds and pool sizes
routes                      :func:`toolkit.store.queries.swap_routes` priced by the caller,
                            through :func:`impact_against_best` (no pool mid is stored);
                            :func:`impact_curves` and the delay models take what
                            :class:`toolkit.backtest.routes.RouteLab` measures;
                            :func:`toolkit.models.real_routes.snapshot_venues` takes
                            ``amm_pool_snapshots`` and ``amm_pool_ticks``
net flow                    orders with both amounts: a backtest's filled requests,
                            :func:`toolkit.store.queries.market_requests` through
                            :func:`~toolkit.models.netflow.requested_orders`, or the orders
                            seen on chain, :func:`toolkit.store.orders.chain_orders` through
                            :func:`~toolkit.models.netflow.observed_orders`
capital placement           net flow, RFQ sizes and bridge figures per holding
                            (:mod:`toolkit.backtest.placement` builds them from a scenario
                            and a flow)
economics                   :func:`toolkit.store.queries.backtest_pool_totals` and
                            :func:`~toolkit.store.queries.backtest_runs`, priced by the caller
health                      the credit book (:mod:`toolkit.models.health`)
cards, top-up               simulated swipes and spends (:func:`card_swipes`, :func:`spending`)
==========================  ===================================================================

``toolkit.models.pricing``, ``toolkit.models.capacity``, ``toolkit.models.routes`` (with
``toolkit.models.splits`` and ``toolkit.models.slippage``),
``toolkit.models.netflow``, ``toolkit.models.inventory`` (the surrogate of a holding under a
rebalancing policy, with ``toolkit.models.levels`` and ``toolkit.models.passage``),
``toolkit.models.placement`` (the capital and policy search), ``toolkit.models.economics``,
``toolkit.models.health``,
``toolkit.models.topup`` and ``toolkit.models.cards`` hold the functions by topic; the most used
are re-exported here.
"""

from toolkit.models.bps import answer_counts, gain_bps, share_404, shortfall_bps
from toolkit.models.capacity import (
    capacity_timeline,
    empirical_blocking,
    erlang_b,
    erlang_b_load,
    erlang_b_servers,
    kaufman_roberts,
    kaufman_roberts_curve,
    kaufman_roberts_occupancy,
    max_rfq_rate_per_s,
    mean_hold,
    observer_share,
    offered_load,
    pool_size_for,
    to_units,
)
from toolkit.models.cards import card_swipes, compare_prefunded, simulate_cards
from toolkit.models.cascade import PoolMarket, liquidation_cascade
from toolkit.models.economics import annualised_pct, capital_sweep, pool_economics
from toolkit.models.health import (
    CreditBook,
    MarketParameters,
    collected_book,
    concentration,
    health_factor,
    liquidations,
    monte_carlo,
    monte_carlo_levels,
    stress,
    tail_risk,
)
from toolkit.models.netflow import net_flow, requested_orders, route_flow
from toolkit.models.placement import search_placement
from toolkit.models.pricing import (
    compare_with_tiers,
    effective_fee_bps,
    eta_validity_stats,
    fee_by_amount_bucket,
    fee_curve,
    latency_stats,
    price_drift,
    tier_premium_summary,
)
from toolkit.models.routes import (
    firm_vs_indicative,
    gas_threshold,
    impact_against_best,
    impact_curves,
    network_comparison,
)
from toolkit.models.slippage import delay_outcomes, needed_slippage, slippage_for_revert_share
from toolkit.models.splits import grid_split, route_comparison
from toolkit.models.topup import cheapest_config, simulate_topups, spending

__all__ = [
    "CreditBook",
    "MarketParameters",
    "PoolMarket",
    "annualised_pct",
    "answer_counts",
    "capacity_timeline",
    "capital_sweep",
    "card_swipes",
    "cheapest_config",
    "collected_book",
    "compare_prefunded",
    "compare_with_tiers",
    "concentration",
    "delay_outcomes",
    "effective_fee_bps",
    "empirical_blocking",
    "erlang_b",
    "erlang_b_load",
    "erlang_b_servers",
    "eta_validity_stats",
    "fee_by_amount_bucket",
    "fee_curve",
    "firm_vs_indicative",
    "gain_bps",
    "gas_threshold",
    "grid_split",
    "health_factor",
    "impact_against_best",
    "impact_curves",
    "kaufman_roberts",
    "kaufman_roberts_curve",
    "kaufman_roberts_occupancy",
    "latency_stats",
    "liquidation_cascade",
    "liquidations",
    "max_rfq_rate_per_s",
    "mean_hold",
    "monte_carlo",
    "monte_carlo_levels",
    "needed_slippage",
    "net_flow",
    "network_comparison",
    "observer_share",
    "offered_load",
    "pool_economics",
    "pool_size_for",
    "price_drift",
    "requested_orders",
    "route_comparison",
    "route_flow",
    "search_placement",
    "share_404",
    "shortfall_bps",
    "simulate_cards",
    "simulate_topups",
    "slippage_for_revert_share",
    "spending",
    "stress",
    "tail_risk",
    "tier_premium_summary",
    "to_units",
]
