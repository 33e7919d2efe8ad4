"""Calibration: a scenario and a flow model built from what the collectors stored, so a backtest
can ask what-if questions of real observations.

From a store: pool balances from ``pool_snapshots`` (the largest available amount seen per
pool: a snapshot shows what is free, and an idle pool is all free), fee tiers from the latest
``fee_tiers`` snapshot of each route, and the flow from the market's RFQs in
``rfq_observations`` (first attempts of runs of kind ``traffic``: other users' requests, see
:func:`toolkit.simulate.traffic.record_traffic`): the arrival rate, the mix of routes, and a
log-normal size model per token fitted to the amounts (median and log-space spread), and the
flow's direction: the net flow each chain sees per hour, with its 95 % interval
(:func:`toolkit.models.netflow.net_flow`). The direction is read from the orders the chains saw
where the store has them (:func:`toolkit.store.orders.chain_orders`, collected by ``collect
chain``: the inputs the escrows released and the outputs the settlers delivered, over the span
from the first order opened to the last movement), and from the requested amounts of the
market's RFQs otherwise; :attr:`Calibration.net_flow_source` says which (``chain`` or
``rfq``). A
collector's own sweeps are left out: their rate, routes and amounts are the sweep's design (a
grid paced by its interval), not users' demand, and fitting them would replay the collector.
Everything else (chains, windows, pricing, keys) comes
from the ``base`` scenario, whose pools and routes the observations replace where they have
them.

(It lives in :mod:`toolkit.backtest`, not :mod:`toolkit.scenario`: the scenario package stays
free of DuckDB, and a calibration exists to feed a backtest.)

>>> from toolkit.client import ServiceClient
>>> from toolkit.clock import ScaledClock
>>> from toolkit.collect import RfqSweep, Snapshot
>>> from toolkit.simulate import Traffic
>>> from toolkit.simulate.traffic import record_traffic
>>> from toolkit.store import Store
>>> users = generate_flow("default", span_h=0.02, rate_per_s=1.0, seed=3)
>>> client = ServiceClient(embedded=True, clock=ScaledClock(100.0))
>>> with client, Store(":memory:") as store:
...     _ = Snapshot(client, store, progress=False).run()
...     with Traffic(client.embedded, users) as traffic:
...         _ = RfqSweep(client, store, rounds=1, interval_s=15, progress=False).run()
...         traffic.join(timeout=30)
...     _ = record_traffic(store, traffic)
...     fitted = calibrate(store, "default")
>>> fitted.scenario.name, sum(fitted.routes.values()) == users.height
('default-calibrated', True)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from toolkit.arguments import number, whole
from toolkit.flows import LogNormal, SizeModel, generate_flow
from toolkit.models.netflow import net_flow, observed_orders, requested_orders
from toolkit.scenario import FeeTier, Pool, Route, Scenario, load_scenario
from toolkit.store import Store, StoreError
from toolkit.store.orders import chain_orders
from toolkit.store.queries import market_requests

__all__ = ["Calibration", "calibrate"]


@dataclass(frozen=True)
class Calibration:
    """A calibrated ``scenario`` and the observed flow: ``rate_per_s`` (first RFQ attempts
    per second), ``routes`` (weights by ``(src, dst, token)``), ``sizes`` (per token) and
    ``net_flow``, its direction: per ``(chain, token)`` what the requests would have the
    service receive and deliver there, ``net`` and ``net_per_h`` with its 95 % interval
    (:func:`toolkit.models.netflow.net_flow`; negative drains the chain), and
    ``net_flow_source``, where that direction was read: ``chain`` (the orders the chains saw
    move value) or ``rfq`` (the market's requested amounts)."""

    scenario: Scenario
    rate_per_s: float
    routes: Mapping[tuple[int, int, str], float]
    sizes: Mapping[str, SizeModel]
    net_flow: pl.DataFrame
    net_flow_source: str

    def flow(self, *, span_h: float, seed: int = 0) -> pl.DataFrame:
        """A flow of the observed rate, route mix and sizes on the calibrated scenario."""
        return generate_flow(
            self.scenario,
            span_h=number(span_h, "span_h", above=0),
            rate_per_s=self.rate_per_s,
            seed=whole(seed, "seed", minimum=0),
            profile=None,
            routes=dict(self.routes),
            sizes=dict(self.sizes),
        )


def calibrate(store: Store, base: Scenario | str = "default") -> Calibration:
    """Calibrate ``base`` on the observations in ``store`` (module docstring)."""
    scenario = load_scenario(base)
    observed = market_requests(store)
    if observed.height < 2:
        raise StoreError(
            "rfq_observations: need at least two of other users' RFQs (runs of kind traffic) "
            "to calibrate demand on; a collector's own sweeps are its design, not users' demand"
        )
    pools = _pools(store.table("pool_snapshots"), scenario)
    routes = _routes(store.table("fee_tiers"), scenario)
    calibrated = dataclasses.replace(
        scenario, name=f"{scenario.name}-calibrated", pools=pools, routes=routes
    )
    span = observed.select(
        (pl.col("observed_at").max() - pl.col("observed_at").min()).dt.total_microseconds()
    ).item()
    seconds = max(1.0, span / 1e6)
    onboarded = {(r.src, r.dst, r.token) for r in calibrated.routes}
    # Routes and tokens in sorted order: the flow draws routes and sizes in the order of these
    # mappings, and a group_by's order changes from one run to the next.
    keys = ("src_chain", "dst_chain", "token")
    mix = observed.group_by(*keys).len().sort(*keys)
    weights = {
        (int(s), int(d), str(t)): float(n)
        for s, d, t, n in mix.iter_rows()
        if (int(s), int(d), str(t)) in onboarded
    }
    sizes: dict[str, SizeModel] = {}
    for (token,), part in observed.sort("token").group_by("token", maintain_order=True):
        logs = part.select(pl.col("amount").cast(pl.Float64).log().alias("x"))
        sigma = float(logs.select(pl.col("x").std()).item() or 0.0) if part.height > 1 else 0.0
        median = int(math.exp(float(logs.select(pl.col("x").median()).item())))
        sizes[str(token)] = LogNormal(median=max(1, median), sigma=sigma)
    direction, source = _direction(store, observed, seconds)
    rate = observed.height / seconds
    return Calibration(calibrated, rate, weights, sizes, direction, source)


def _direction(store: Store, requests: pl.DataFrame, seconds: float) -> tuple[pl.DataFrame, str]:
    """The net flow from the orders the chains saw move value, else from the requests."""
    orders = chain_orders(store)
    moved = observed_orders(orders)
    if moved.height == 0:
        return net_flow(requested_orders(requests), span_s=seconds), "rfq"
    seen = orders.select(
        pl.col("opened_at").min().alias("first"),
        pl.max_horizontal(pl.col("filled_at").max(), pl.col("finalised_at").max()).alias("last"),
    )
    first, last = seen.row(0)
    span = max(1.0, (last - first).total_seconds()) if first is not None and last else 1.0
    return net_flow(moved, span_s=span), "chain"


def _pools(snapshots: pl.DataFrame, scenario: Scenario) -> tuple[Pool, ...]:
    seen = snapshots.group_by("chain", "token", "pool_type").agg(pl.col("balance").max())
    largest = {(int(c), str(t), str(k)): int(b) for c, t, k, b in seen.iter_rows()}
    return tuple(
        dataclasses.replace(p, balance=max(1, largest.get((p.chain, p.token, p.type), p.balance)))
        for p in scenario.pools
    )


def _routes(tiers: pl.DataFrame, scenario: Scenario) -> tuple[Route, ...]:
    if tiers.height == 0:
        return scenario.routes
    latest = tiers.filter(
        pl.col("observed_at") == pl.col("observed_at").max().over("src_chain", "dst_chain", "token")
    ).sort("tier")
    observed: dict[tuple[int, int, str], tuple[FeeTier, ...]] = {}
    for (src, dst, token), part in latest.group_by("src_chain", "dst_chain", "token"):
        observed[(int(str(src)), int(str(dst)), str(token))] = tuple(
            FeeTier(round(float(f)), int(lo), int(hi))
            for f, lo, hi in part.select("fee_bps", "min_amount", "max_amount").iter_rows()
        )
    return tuple(
        dataclasses.replace(r, fee_tiers=observed.get((r.src, r.dst, r.token), r.fee_tiers))
        for r in scenario.routes
    )
