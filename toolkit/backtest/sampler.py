"""Samples for the replay loop: every pool's figures and the service's inventory per (chain,
token) at fixed instants of virtual time."""

from __future__ import annotations

from typing import Any

from toolkit.engine import Engine
from toolkit.scenario import Scenario

__all__ = ["INVENTORY_FIELDS", "Sampler"]

#: The inventory figures sampled per (chain, token), :class:`toolkit.engine.Holding`'s amounts.
INVENTORY_FIELDS: tuple[str, ...] = (
    "on_chain",
    "unallocated",
    "reserved",
    "outstanding",
    "receivable_in",
    "in_flight_in",
    "in_flight_out",
)


class Sampler:
    """Pool snapshots plus RFQ and 404 counts per (chain, token) since the previous sample, and
    the inventory per (chain, token) (``inventory``: columns ``t``, ``chain``, ``token`` and
    :data:`INVENTORY_FIELDS`)."""

    def __init__(self, engine: Engine, scenario: Scenario, interval: float) -> None:
        self.engine = engine
        self.interval = interval
        self.count = 0
        self.next = 0.0
        groups: dict[tuple[int, str], int] = {}
        for pool in scenario.pools:
            groups.setdefault((pool.chain, pool.token), len(groups))
        self.groups = groups
        self.pool_group = [groups[(p.chain, p.token)] for p in scenario.pools]
        self.rfqs = [0] * len(groups)
        self.rejects = [0] * len(groups)
        self.revenue = {p.id: 0 for p in scenario.pools}
        self.columns: dict[str, list[Any]] = {
            name: []
            for name in (
                "t",
                "pool",
                "chain",
                "token",
                "pool_type",
                "capacity",
                "available",
                "reserved",
                "outstanding",
                "rfqs",
                "no_capacity",
                "fee_revenue",
            )
        }
        self.inventory: dict[str, list[Any]] = {
            name: [] for name in ("t", "chain", "token", *INVENTORY_FIELDS)
        }

    def take(self) -> None:
        """Take the sample due at ``next`` and schedule the one after it."""
        t = self.next
        c = self.columns
        rfqs, rejects, revenue = self.rfqs, self.rejects, self.revenue
        for state, group in zip(self.engine.pools(t), self.pool_group, strict=True):
            c["t"].append(t)
            c["pool"].append(state.id)
            c["chain"].append(state.chain)
            c["token"].append(state.symbol)
            c["pool_type"].append(state.type)
            c["capacity"].append(state.balance)
            c["available"].append(state.available)
            c["reserved"].append(state.reserved)
            c["outstanding"].append(state.outstanding)
            c["rfqs"].append(rfqs[group])
            c["no_capacity"].append(rejects[group])
            c["fee_revenue"].append(revenue[state.id])
        for g in range(len(rfqs)):
            rfqs[g] = 0
            rejects[g] = 0
        held = self.inventory
        for holding in self.engine.inventory(t):
            held["t"].append(t)
            held["chain"].append(holding.chain)
            held["token"].append(holding.symbol)
            for name in INVENTORY_FIELDS:
                held[name].append(getattr(holding, name))
        self.count += 1
        # Multiply instead of adding so that sample times do not drift.
        self.next = self.count * self.interval
