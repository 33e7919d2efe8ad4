"""Quote pricing from ``rfq_observations`` frames: fees, fee curves, tiers, timing, latency.

- :func:`effective_fee_bps`: the fee each 200 answer charged, from its exact amounts.
- :func:`fee_curve` and :func:`fee_by_amount_bucket`: fee against amount per route.
- :func:`compare_with_tiers` and :func:`tier_premium_summary`: observed fee against the
  published ``fee_tiers``.
- :func:`eta_validity_stats`, :func:`price_drift`, :func:`latency_stats`: timing.

Every function takes a polars frame with the store's column names and dtypes (extra columns
are fine), raises ``ValueError`` naming the function and the columns when one is missing or
mistyped, and returns a new polars frame; an empty input gives an empty frame with the same
columns as a full one.
"""

from toolkit.models.fees import effective_fee_bps, fee_by_amount_bucket, fee_curve
from toolkit.models.frames import ROUTE
from toolkit.models.quotes import eta_validity_stats, latency_stats, price_drift
from toolkit.models.tiers import compare_with_tiers, tier_premium_summary

__all__ = [
    "ROUTE",
    "compare_with_tiers",
    "effective_fee_bps",
    "eta_validity_stats",
    "fee_by_amount_bucket",
    "fee_curve",
    "latency_stats",
    "price_drift",
    "tier_premium_summary",
]
