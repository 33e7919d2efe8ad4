"""Frames the models take, each read by one query: the store side of each model's input.

Each function returns a polars frame whose columns a model family documents as its input:

- :func:`backtest_runs` and :func:`backtest_pool_totals`: :mod:`toolkit.models.economics`
  (after pricing the exact amounts), with :func:`backtest_rebalancing` (each run's
  rebalancing cost);
- :func:`backtest_orders`, :func:`backtest_inventory` and :func:`backtest_transfers`: one
  run's filled orders, inventory samples and transfers, for :mod:`toolkit.models.netflow` and
  :mod:`toolkit.models.rebalancing`;
- :func:`swap_routes`: :func:`toolkit.models.routes.impact_against_best` (in the report's
  units);
- :func:`route_costs`: :func:`toolkit.models.routes.impact_curves` (each route priced at the
  stored USD prices and its chain's gas price, as :class:`toolkit.backtest.routes.RouteLab`
  measures them on a simulation);
- :func:`market_requests`: :mod:`toolkit.models.netflow` (through
  :func:`~toolkit.models.netflow.requested_orders`) and :func:`toolkit.backtest.calibrate`;
- :func:`toolkit.store.orders.chain_orders` (its own module: the orders rebuilt from the
  settlers' logs): the same model (through :func:`~toolkit.models.netflow.observed_orders`)
  and :func:`toolkit.backtest.calibrate`;
- :func:`topup_configs`: :func:`toolkit.models.topup_configs.stored_topups` (with the credit
  book the store gives, :func:`toolkit.report.load.stored_credit_book`, which the card simulation
  takes too: :func:`toolkit.models.cards.book_positions`);
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

from toolkit.store.prices import price_table, prices_at

if TYPE_CHECKING:
    from toolkit.store.store import Store

__all__ = [
    "backtest_inventory",
    "backtest_orders",
    "backtest_pool_totals",
    "backtest_rebalancing",
    "backtest_runs",
    "backtest_transfers",
    "market_requests",
    "route_costs",
    "swap_routes",
    "topup_configs",
]

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


# Each backtest run's rebalancing cost: the bridges' fees (exact, priced from the JSON text the
# replay wrote at the scenario's prices) and the source transactions' gas.
_REBALANCING = """
SELECT run_id, count(*) AS transfers,
       coalesce(sum(CAST(json_extract_string(attributes, '$.cost_usd') AS DOUBLE)), 0)
           AS rebalancing_cost_usd
FROM backtest_transfers GROUP BY run_id ORDER BY run_id
"""


def backtest_rebalancing(store: Store) -> pl.DataFrame:
    """Each backtest run that sent transfers: ``run_id``, ``transfers`` and
    ``rebalancing_cost_usd`` (fees and gas, at the prices the replay priced them at).

    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     backtest_rebalancing(store).columns
    ['run_id', 'transfers', 'rebalancing_cost_usd']
    """
    return store.query(_REBALANCING)


def backtest_orders(store: Store, run_id: str) -> pl.DataFrame:
    """One backtest run's filled orders: ``src_chain, dst_chain, token, input_amount,
    output_amount`` (exact): the input of :func:`toolkit.models.netflow.net_flow`.

    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     backtest_orders(store, "bt").columns[:3]
    ['src_chain', 'dst_chain', 'token']
    """
    return store.query(
        "SELECT src_chain, dst_chain, token, input_amount, output_amount FROM backtest_requests "
        "WHERE run_id = ? AND outcome = 'filled' ORDER BY t, request_id",
        [run_id],
    )


def backtest_inventory(store: Store, run_id: str) -> pl.DataFrame:
    """One backtest run's inventory samples as stored, by time then chain and token.

    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     backtest_inventory(store, "bt").columns[:4]
    ['t', 'chain', 'token', 'on_chain']
    """
    return store.query(
        "SELECT t, chain, token, on_chain, unallocated, reserved, outstanding, receivable_in, "
        "in_flight_in, in_flight_out FROM backtest_inventory WHERE run_id = ? "
        "ORDER BY t, chain, token",
        [run_id],
    )


def backtest_transfers(store: Store, run_id: str) -> pl.DataFrame:
    """One backtest run's rebalancing transfers in the order sent: ``transfer_id, token,
    src_chain, dst_chain, amount, fee`` (exact), ``sent_at, arrives_at, arrived, bridge,
    gas_usd`` and ``cost_usd`` (fee and gas, as the replay priced them).

    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     backtest_transfers(store, "bt").columns[-1]
    'cost_usd'
    """
    return store.query(
        "SELECT transfer_id, token, src_chain, dst_chain, amount, fee, sent_at, arrives_at, "
        "arrived, bridge, gas_usd, "
        "CAST(json_extract_string(attributes, '$.cost_usd') AS DOUBLE) AS cost_usd "
        "FROM backtest_transfers WHERE run_id = ? ORDER BY transfer_id",
        [run_id],
    )


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


# First attempts of the market's RFQs: runs of kind traffic (other users' requests, stored by
# toolkit.simulate.traffic.record_traffic), never a collector's own sweep.
_MARKET_REQUESTS = """
SELECT o.run_id, o.attempt_id, o.observed_at, o.src_chain, o.dst_chain, o.token, o.quote_type,
       o.amount, o.status
FROM rfq_observations o JOIN collection_runs r ON r.run_id = o.run_id
WHERE r.kind = 'traffic' AND o.retry = 0
ORDER BY o.observed_at, o.run_id, o.attempt_id
"""


def market_requests(store: Store) -> pl.DataFrame:
    """The market's requests, oldest first: the first attempt of every RFQ stored by runs of
    kind ``traffic`` (other users' demand; a collector's own sweeps are its design and left
    out): ``run_id, attempt_id, observed_at, src_chain, dst_chain, token, quote_type, amount``
    (smallest units, exact) and ``status`` (the service's answer: 200 granted, 404 refused).

    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     market_requests(store).columns[3:]
    ['src_chain', 'dst_chain', 'token', 'quote_type', 'amount', 'status']
    """
    return store.query(_MARKET_REQUESTS)


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


# Each stored route with its chain's token names (one row per cached address).
_ROUTES_NAMED = """
WITH names AS (
    SELECT chain, address, any_value(upper(symbol)) AS symbol, any_value(decimals) AS decimals
    FROM tokens GROUP BY chain, address
)
SELECT r.run_id, r.attempt_id, r.observed_at, r.network, r.chain, r.token_in, r.token_out,
       i.symbol AS symbol_in, o.symbol AS symbol_out, i.decimals AS decimals_in,
       o.decimals AS decimals_out, r.amount_in, r.status, r.amount_out, r.gas_used,
       r.gas_price_wei
FROM swap_routes r
LEFT JOIN names i ON i.chain = r.chain AND i.address = lower(r.token_in)
LEFT JOIN names o ON o.chain = r.chain AND o.address = lower(r.token_out)
ORDER BY r.observed_at, r.run_id, r.attempt_id
"""


def route_costs(store: Store) -> pl.DataFrame:
    """The stored swap routes (every status), oldest first, priced: the input of
    :func:`toolkit.models.routes.impact_curves`.

    Columns: ``run_id, attempt_id, observed_at, network, chain, token_in, token_out``,
    ``pair`` (``SYMBOL_IN/SYMBOL_OUT``, from the ``tokens`` names), ``amount_in`` (smallest
    units), ``amount_in_usd``, ``status``, ``amount_out`` (smallest units), ``mid_out`` (what
    the input buys at the stored USD prices of both tokens, in the output's smallest units),
    ``gas_used``, ``gas_price_wei`` (the chain's, read when the route was answered) and
    ``gas_usd`` (``gas_used`` at that gas price, ETH at its stored price). Prices are the
    ``prices`` table's at the route's time and chain (:func:`toolkit.store.prices.prices_at`:
    a pool's mid price, an oracle's or a simulated run's scenario price); a figure whose price,
    token name or gas price is not stored is null.

    Parameters
    ----------
    store : Store
        A store holding ``swap_routes`` (written by :class:`toolkit.collect.swap.SwapSweep`),
        ``tokens`` and ``prices``.

    Returns
    -------
    polars.DataFrame
        One row per stored route attempt with the columns above.

    Examples
    --------
    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     route_costs(store).select("pair", "amount_in_usd", "mid_out", "gas_usd").height
    0
    """
    routes = store.query(_ROUTES_NAMED)
    table = price_table(store)

    def usd(symbol: str) -> pl.Series:
        wanted = routes.select(
            pl.col(symbol).alias("symbol"), "chain", pl.col("observed_at").alias("at")
        )
        return prices_at(table, wanted)

    eth = routes.select(pl.lit("ETH").alias("symbol"), "chain", pl.col("observed_at").alias("at"))
    whole_in = pl.col("amount_in").cast(pl.Float64) / pl.lit(10.0).pow(pl.col("decimals_in"))
    return (
        routes.with_columns(
            _usd_in=usd("symbol_in"), _usd_out=usd("symbol_out"), _eth=prices_at(table, eth)
        )
        .with_columns(
            pair=pl.concat_str("symbol_in", pl.lit("/"), "symbol_out"),
            amount_in_usd=whole_in * pl.col("_usd_in"),
        )
        .with_columns(
            mid_out=pl.col("amount_in_usd")
            / pl.col("_usd_out")
            * pl.lit(10.0).pow(pl.col("decimals_out")),
            gas_usd=pl.col("gas_used").cast(pl.Float64)
            * pl.col("gas_price_wei").cast(pl.Float64)
            / 1e18
            * pl.col("_eth"),
        )
        .select(
            "run_id",
            "attempt_id",
            "observed_at",
            "network",
            "chain",
            "token_in",
            "token_out",
            "pair",
            "amount_in",
            "amount_in_usd",
            "status",
            "amount_out",
            "mid_out",
            "gas_used",
            "gas_price_wei",
            "gas_usd",
        )
    )
