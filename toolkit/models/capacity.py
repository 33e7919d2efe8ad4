"""Pool capacity: loss-system formulas, pool sizing, and capacity observed in collected data.

- Erlang-B (:func:`erlang_b`, its inverses :func:`erlang_b_load` and
  :func:`erlang_b_servers`) and Kaufman-Roberts (:func:`kaufman_roberts`,
  :func:`kaufman_roberts_occupancy`, and :func:`kaufman_roberts_curve` at every capacity at
  once) for a pool refusing RFQs with a 404 when it is full. A pool's capacity stays put only
  under the ``instant-free`` rebalancing baseline, where these are the whole model; under a real
  policy the capacity is the inventory on the destination chain, which walks
  (:mod:`toolkit.models.inventory`, :mod:`toolkit.models.placement`).
- Sizing: :func:`mean_hold` (15 s quotes, 60 s orders), :func:`to_units`,
  :func:`offered_load`, :func:`max_rfq_rate_per_s` and :func:`pool_size_for`.
- From data: :func:`capacity_timeline` (``liquidity_events``) and
  :func:`empirical_blocking` (``rfq_observations``).

All functions are pure: numbers or polars frames in, numbers or polars frames out.
"""

from toolkit.models.loss import (
    erlang_b,
    erlang_b_load,
    erlang_b_servers,
    kaufman_roberts,
    kaufman_roberts_curve,
    kaufman_roberts_occupancy,
)
from toolkit.models.observed import capacity_timeline, empirical_blocking, observer_share
from toolkit.models.sizing import (
    Criterion,
    Mode,
    max_rfq_rate_per_s,
    mean_hold,
    offered_load,
    pool_size_for,
    to_units,
)

__all__ = [
    "Criterion",
    "Mode",
    "capacity_timeline",
    "empirical_blocking",
    "erlang_b",
    "erlang_b_load",
    "erlang_b_servers",
    "kaufman_roberts",
    "kaufman_roberts_curve",
    "kaufman_roberts_occupancy",
    "max_rfq_rate_per_s",
    "mean_hold",
    "observer_share",
    "offered_load",
    "pool_size_for",
    "to_units",
]
