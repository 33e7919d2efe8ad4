"""Frames the models take, each read by one query: the store side of each model's input.

Each function returns a polars frame whose columns a model family documents as its input:

- :func:`backtest_runs` and :func:`backtest_pool_totals`: :mod:`toolkit.models.economics`
  (after pricing the exact amounts);
- :func:`swap_routes`: :func:`toolkit.models.routes.impact_against_best` (in the report's
  units: no pool mid price is stored, so :func:`toolkit.models.routes.impact_curves`' input
  is what :class:`toolkit.backtest.routes.RouteLab` measures);
- :func:`topup_configs`: :func:`toolkit.models.topup.stored_topups` (with the credit book the
  store gives, :func:`toolkit.report.load.stored_credit_book`, which the card simulation takes
  too: :func:`toolkit.models.cards.book_positions`);
- ``rfq_observations``, ``fee_tiers``, ``liquidity_events`` and ``pool_snapshots`` are read as
  stored (``store.query("SELECT * FROM …")``): their columns are the pricing and capacity
  models' input as they are.

>>> from toolkit.store import Store
>>> with Store(":memory:") as store:
...     backtest_pool_totals(store).columns[:4]
['run_id', 'pool', 'chain', 'token']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from toolkit.store.store import Store

__all__ = ["backtest_pool_totals", "backtest_runs", "swap_routes", "topup_configs"]

# Every backtest run with its parameters, request count and 404 count.
_BACKTEST_RUNS = """
SELECT r.run_id, r.started_at, r.parameters,
       count(q.run_id) AS requests,
       count(q.run_id) FILTER (WHERE q.status = 404) AS refused
FROM collection_runs r LEFT JOIN backtest_requests q ON q.run_id = r.run_id
WHERE r.kind = 'backtest'
GROUP BY r.run_id, r.started_at, r.parameters
ORDER BY r.started_at, r.run_id
"""

# Each backtest pool: its balance at the first sample (the capital), its cumulative fee revenue
# at the last (exact, from the JSON text), the span sampled and its mean utilization.
_POOL_TOTALS = """
SELECT run_id, pool, any_value(chain) AS chain, any_value(token) AS token,
       any_value(pool_type) AS pool_type, arg_min(capacity, t) AS capital,
       min(t) AS start_t, max(t) AS end_t, avg(utilization) AS mean_utilization,
       CAST(json_extract_string(arg_max(attributes, t), '$.fee_revenue') AS HUGEINT)
           AS fee_revenue
FROM backtest_pools GROUP BY run_id, pool ORDER BY run_id, pool
"""


def backtest_runs(store: Store) -> pl.DataFrame:
    """Every backtest run, oldest first: ``run_id, started_at, parameters`` (JSON text),
    ``requests`` and ``refused`` (requests answered 404).

    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     backtest_runs(store).columns
    ['run_id', 'started_at', 'parameters', 'requests', 'refused']
    """
    return store.query(_BACKTEST_RUNS)


def backtest_pool_totals(store: Store) -> pl.DataFrame:
    """Each backtest pool of every run: ``run_id, pool, chain, token, pool_type``, ``capital``
    (its balance at the first sample, smallest units), ``start_t, end_t`` (virtual seconds),
    ``mean_utilization`` and ``fee_revenue`` (cumulative at the last sample, smallest units).
    """
    return store.query(_POOL_TOTALS)


def swap_routes(store: Store) -> pl.DataFrame:
    """The swap routes the collectors stored (every status), oldest first: ``run_id, attempt_id,
    observed_at, network, token_in, token_out, amount_in, status, latency_ms, amount_out,
    min_amount_out, gas_used, error`` (amounts exact, in smallest units).

    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     swap_routes(store).height
    0
    """
    return store.query(
        "SELECT run_id, attempt_id, observed_at, network, token_in, token_out, amount_in, "
        "status, latency_ms, amount_out, min_amount_out, gas_used, error "
        "FROM swap_routes ORDER BY observed_at, run_id, attempt_id"
    )


# Each (account, receiver)'s newest auto top-up config across every credit run, as for the
# credit book: a run that looked at fewer accounts does not hide an earlier run's configs.
_TOPUP_CONFIGS = """
SELECT run_id, observed_at, account, receiver, asset, threshold, target_balance,
       health_factor_bps
FROM credit_topup_configs
QUALIFY row_number() OVER (PARTITION BY account, receiver, asset
                           ORDER BY observed_at DESC, run_id DESC, round DESC) = 1
ORDER BY account, receiver, asset
"""


def topup_configs(store: Store) -> pl.DataFrame:
    """Each account's latest auto top-up config per receiver and credit asset: ``run_id,
    observed_at, account, receiver, asset``, ``threshold`` and ``target_balance`` (the credit
    asset's smallest units, exact) and ``health_factor_bps`` (the floor a top-up keeps, 10000
    = 1.0).

    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     topup_configs(store).columns[2:]
    ['account', 'receiver', 'asset', 'threshold', 'target_balance', 'health_factor_bps']
    """
    return store.query(_TOPUP_CONFIGS)
