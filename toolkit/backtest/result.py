"""The outcome of a replay: a request frame, pool and inventory time series, the rebalancing
transfers and a summary.

Column names follow the store's ``backtest_requests``, ``backtest_pools``,
``backtest_inventory`` and ``backtest_transfers`` tables, so :meth:`BacktestResult.to_store`
writes them as they are (columns the tables lack go into their JSON ``attributes`` column).

``requests`` (one row per flow row, in flow order):

- ``request_id``, ``t`` (first arrival), ``src_chain``, ``dst_chain``, ``token``,
  ``quote_type``, ``amount``: the flow row;
- ``outcome``: ``filled``, ``expired`` (quoted but never filled: not converted, or the fill was
  refused after a late conversion), ``no_capacity`` (404 on the last attempt) or ``no_route``;
- ``status``: the HTTP status of the last RFQ attempt (200, 404 or 400); ``attempts``;
- ``pool``, ``quote_id``, ``order_id``, ``input_amount``, ``output_amount``, ``fee_bps`` (tier
  fee plus utilization premium) of the successful quote;
- ``quoted_at``, ``ordered_at`` (transaction call), ``filled_at``, ``settled_at``: virtual
  seconds; ``earned``: what the pool's balance gained at settlement; ``error``: why a request
  ended without a fill, when the engine said so.

``pools`` (one row per pool per sample, every ``interval`` seconds of virtual time):
``t``, ``pool``, ``chain``, ``token``, ``pool_type``, ``capacity`` (the pool's balance),
``available``, ``reserved``, ``outstanding``, ``utilization`` (``(reserved + outstanding) /
capacity``; 1 for a pool whose balance is spent: it has nothing available), ``rfqs`` and
``no_capacity`` (RFQ attempts for the pool's chain and token since the previous sample, and
how many got a 404; every pool of that chain and token shows the same counts),
``no_capacity_share`` and ``fee_revenue`` (cumulative fees earned on this pool's loans).

``inventory`` and ``transfers``: see :mod:`toolkit.backtest.inventory`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import polars as pl

from toolkit.backtest.inventory import (
    INVENTORY_SCHEMA,
    TRANSFERS_SCHEMA,
    inventory_frame,
    transfers_frame,
)
from toolkit.backtest.loop import NO_CAPACITY, NO_ROUTE, OUTCOMES, Trace
from toolkit.backtest.summary import BacktestSummary, summarize
from toolkit.flows import FlowColumns
from toolkit.scenario import Scenario, ScenarioError, load_scenario
from toolkit.scenario.prices import scenario_prices
from toolkit.store import Store, load_prices, table_spec

__all__ = ["BacktestResult", "build_result"]

# A result's frames carry these store columns as they are; writing adds the run id, the kind and
# the JSON attributes (every column a table lacks). One definition: the store's schema.
_ADDED = ("run_id", "kind", "attributes")
_REQUEST_STORE_COLUMNS = tuple(c for c in table_spec("backtest_requests").names if c not in _ADDED)
_POOL_STORE_COLUMNS = tuple(c for c in table_spec("backtest_pools").names if c not in _ADDED)
_INVENTORY_STORE_COLUMNS = tuple(
    c for c in table_spec("backtest_inventory").names if c not in _ADDED
)
_TRANSFER_STORE_COLUMNS = tuple(
    c for c in table_spec("backtest_transfers").names if c not in _ADDED
)


@dataclass(frozen=True)
class BacktestResult:
    """What a replay produced: ``requests``, ``pools``, ``inventory`` and ``transfers`` frames
    and their :class:`~toolkit.backtest.summary.BacktestSummary` (counts, shares, per-pool,
    per-token and per-holding figures, rebalancing and economics).

    >>> from toolkit.backtest import generate_flow, replay
    >>> result = replay(generate_flow("default", span_h=0.2, seed=1), "default", seed=1)
    >>> result.summary.requests == result.requests.height
    True
    """

    requests: pl.DataFrame
    pools: pl.DataFrame
    summary: BacktestSummary
    parameters: dict[str, Any] = field(default_factory=dict)
    inventory: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=INVENTORY_SCHEMA))
    transfers: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=TRANSFERS_SCHEMA))

    def to_store(
        self, store: Store, *, run_id: str | None = None, started_at: datetime | None = None
    ) -> str:
        """Write the result to ``store`` under a new ``backtest`` run; return the run id.

        Rows go to ``backtest_requests``, ``backtest_pools``, ``backtest_inventory`` and
        ``backtest_transfers``; a ``collection_runs`` row of kind ``backtest`` records
        ``parameters`` (the rebalancing ``policy`` among them) and ends ``completed``
        (``failed`` if a write fails, ``interrupted`` on Ctrl-C). ``run_id`` defaults to a new
        uuid and ``started_at`` to the store's clock.

        >>> from toolkit.backtest import generate_flow, replay
        >>> from toolkit.store import Store
        >>> result = replay(generate_flow("single-pool", span_h=0.1, seed=2), "single-pool")
        >>> with Store(":memory:") as store:
        ...     run = result.to_store(store, run_id="bt-1")
        ...     stored = store.query("SELECT count(*) AS n FROM backtest_requests")["n"][0]
        ...     store.run_record(run)["status"], stored == result.requests.height
        ('completed', True)
        """
        target = f"backtest://{self.summary.scenario}"
        recording = store.recording(
            "backtest", self.parameters, target, run_id=run_id, started_at=started_at
        )
        # One open of the file for the run and its rows (a store holds it per call otherwise).
        with store.session(), recording as run:
            store.append("backtest_requests", self.request_rows(run.run_id))
            store.append("backtest_pools", self.pool_rows(run.run_id))
            store.append("backtest_inventory", self.inventory_rows(run.run_id))
            store.append("backtest_transfers", self.transfer_rows(run.run_id))
            self._store_prices(store, run.run_id)
        return run.run_id

    def _store_prices(self, store: Store, run_id: str) -> None:
        """The scenario's prices (source ``scenario``) at the run's start, so the report
        prices this simulated run as the simulation did; a scenario given only as an object
        (no name to load it by) has its prices stored by whoever built it."""
        try:
            scenario = load_scenario(self.summary.scenario)
        except ScenarioError:
            return
        started = store.run_record(run_id)["started_at"]
        load_prices(store, scenario_prices(scenario, started), source="scenario")

    def request_rows(self, run_id: str) -> pl.DataFrame:
        """``requests`` shaped as ``backtest_requests`` rows for ``run_id``."""
        extra = [c for c in self.requests.columns if c not in _REQUEST_STORE_COLUMNS]
        return self.requests.select(
            pl.lit(run_id).alias("run_id"),
            *_REQUEST_STORE_COLUMNS,
            pl.lit("rfq").alias("kind"),
            _attributes(extra),
        )

    def pool_rows(self, run_id: str) -> pl.DataFrame:
        """``pools`` shaped as ``backtest_pools`` rows for ``run_id``."""
        extra = [c for c in self.pools.columns if c not in _POOL_STORE_COLUMNS]
        return self.pools.select(
            pl.lit(run_id).alias("run_id"), *_POOL_STORE_COLUMNS, _attributes(extra)
        )

    def inventory_rows(self, run_id: str) -> pl.DataFrame:
        """``inventory`` shaped as ``backtest_inventory`` rows for ``run_id``."""
        extra = [c for c in self.inventory.columns if c not in _INVENTORY_STORE_COLUMNS]
        return self.inventory.select(
            pl.lit(run_id).alias("run_id"), *_INVENTORY_STORE_COLUMNS, _attributes(extra)
        )

    def transfer_rows(self, run_id: str) -> pl.DataFrame:
        """``transfers`` shaped as ``backtest_transfers`` rows for ``run_id``."""
        extra = [c for c in self.transfers.columns if c not in _TRANSFER_STORE_COLUMNS]
        return self.transfers.select(
            pl.lit(run_id).alias("run_id"), *_TRANSFER_STORE_COLUMNS, _attributes(extra)
        )


#: Amounts that may go into ``attributes``: written as text (JSON readers round past 2**53).
_EXACT = ("earned", "fee_revenue", "received")


def _attributes(columns: list[str]) -> pl.Expr:
    # Most JSON readers round numbers past 2**53; amounts go in as text to stay exact.
    fields = [pl.col(c).cast(pl.String) if c in _EXACT else pl.col(c) for c in columns]
    return pl.struct(fields).struct.json_encode().alias("attributes")


def _requests_frame(flow: FlowColumns, trace: Trace) -> pl.DataFrame:
    outcome = pl.Series("outcome", trace.outcome, dtype=pl.Enum(OUTCOMES))
    status = (
        pl.when(outcome == NO_ROUTE)
        .then(400)
        .when(outcome == NO_CAPACITY)
        .then(404)
        .otherwise(200)
        .cast(pl.Int32)
        .alias("status")
    )
    return flow.frame.with_columns(
        outcome.cast(pl.String),
        pl.select(status).to_series(),
        pl.Series("attempts", trace.attempts, dtype=pl.Int32),
        pl.Series("pool", trace.pool, dtype=pl.String),
        pl.Series("quote_id", trace.quote_id, dtype=pl.String),
        pl.Series("order_id", trace.order_id, dtype=pl.String),
        pl.Series("input_amount", trace.input_amount, dtype=pl.Int128),
        pl.Series("output_amount", trace.output_amount, dtype=pl.Int128),
        pl.Series("fee_bps", trace.fee_bps, dtype=pl.Float64),
        pl.Series("quoted_at", trace.quoted_at, dtype=pl.Float64),
        pl.Series("ordered_at", trace.ordered_at, dtype=pl.Float64),
        pl.Series("filled_at", trace.filled_at, dtype=pl.Float64),
        pl.Series("settled_at", trace.settled_at, dtype=pl.Float64),
        pl.Series("earned", trace.earned, dtype=pl.Int128),
        pl.Series("error", trace.error, dtype=pl.String),
    )


def _pools_frame(samples: Mapping[str, list[Any]]) -> pl.DataFrame:
    frame = pl.DataFrame(
        {
            "t": pl.Series(samples["t"], dtype=pl.Float64),
            "pool": pl.Series(samples["pool"], dtype=pl.String),
            "chain": pl.Series(samples["chain"], dtype=pl.Int64),
            "token": pl.Series(samples["token"], dtype=pl.String),
            "pool_type": pl.Series(samples["pool_type"], dtype=pl.String),
            "capacity": pl.Series(samples["capacity"], dtype=pl.Int128),
            "available": pl.Series(samples["available"], dtype=pl.Int128),
            "reserved": pl.Series(samples["reserved"], dtype=pl.Int128),
            "outstanding": pl.Series(samples["outstanding"], dtype=pl.Int128),
            "utilization": pl.Series(
                [
                    (r + o) / b if b else 1.0
                    for r, o, b in zip(
                        samples["reserved"],
                        samples["outstanding"],
                        samples["capacity"],
                        strict=True,
                    )
                ],
                dtype=pl.Float64,
            ),
            "rfqs": pl.Series(samples["rfqs"], dtype=pl.Int64),
            "no_capacity": pl.Series(samples["no_capacity"], dtype=pl.Int64),
            "no_capacity_share": pl.Series(
                [
                    x / n if n else 0.0
                    for x, n in zip(samples["no_capacity"], samples["rfqs"], strict=True)
                ],
                dtype=pl.Float64,
            ),
            "fee_revenue": pl.Series(samples["fee_revenue"], dtype=pl.Int128),
        }
    )
    return frame


def build_result(
    scenario: Scenario,
    flow: FlowColumns,
    trace: Trace,
    *,
    seed: int,
    parameters: Mapping[str, Any],
    final_balances: Mapping[str, int],
) -> BacktestResult:
    """Assemble frames and summary from the loop's trace (columns built once, at the end)."""
    pools = _pools_frame(trace.samples)
    return BacktestResult(
        requests=_requests_frame(flow, trace),
        pools=pools,
        summary=summarize(scenario, seed, flow, trace, pools, final_balances),
        parameters=json.loads(json.dumps(dict(parameters))),
        inventory=inventory_frame(trace.inventory),
        transfers=transfers_frame(trace.transfers, scenario),
    )
