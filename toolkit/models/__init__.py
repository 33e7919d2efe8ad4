"""Analytics on collected frames: quote pricing, pool capacity, swap routes and credit health.

Pure functions: polars frames (with the store's column names and dtypes) or numbers in,
polars frames or numbers out; no I/O, no clock. Amounts stay exact (Int128); floats appear
only for derived figures such as fees in basis points and blocking probabilities.

``toolkit.models.pricing``, ``toolkit.models.capacity``, ``toolkit.models.health``,
``toolkit.models.topup`` and ``toolkit.models.cards`` hold the functions by topic; the most used
are re-exported here.
"""

from toolkit.models.capacity import (
    capacity_timeline,
    empirical_blocking,
    erlang_b,
    erlang_b_load,
    erlang_b_servers,
    kaufman_roberts,
    kaufman_roberts_occupancy,
    max_rfq_rate,
    mean_hold,
    observer_share,
    offered_load,
    pool_size_for,
    to_units,
)
from toolkit.models.cards import card_swipes, compare_prefunded, simulate_cards
from toolkit.models.cascade import PoolMarket, liquidation_cascade
from toolkit.models.health import (
    CreditBook,
    MarketParameters,
    collected_book,
    concentration,
    health_factor,
    liquidations,
    monte_carlo,
    stress,
    tail_risk,
)
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
    delay_outcomes,
    firm_vs_indicative,
    gas_threshold,
    grid_split,
    impact_curves,
    needed_slippage,
    network_comparison,
    route_comparison,
    slippage_for_revert_rate,
)
from toolkit.models.topup import cheapest_config, simulate_topups, spending

__all__ = [
    "CreditBook",
    "MarketParameters",
    "PoolMarket",
    "capacity_timeline",
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
    "gas_threshold",
    "grid_split",
    "health_factor",
    "impact_curves",
    "kaufman_roberts",
    "kaufman_roberts_occupancy",
    "latency_stats",
    "liquidation_cascade",
    "liquidations",
    "max_rfq_rate",
    "mean_hold",
    "monte_carlo",
    "needed_slippage",
    "network_comparison",
    "observer_share",
    "offered_load",
    "pool_size_for",
    "price_drift",
    "route_comparison",
    "simulate_cards",
    "simulate_topups",
    "slippage_for_revert_rate",
    "spending",
    "stress",
    "tail_risk",
    "tier_premium_summary",
    "to_units",
]
