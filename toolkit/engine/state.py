"""The engine's mutable internals: pools, routes and reservations as ``__slots__`` objects.

Private to the engine; callers see immutable snapshots from :mod:`toolkit.engine.results`.
"""

from __future__ import annotations

from toolkit.engine.results import PoolState

__all__ = [
    "AMOUNT",
    "EXPIRES",
    "GROUP",
    "KEY",
    "KIND",
    "LIVE",
    "POOL",
    "QUOTE",
    "SEQ",
    "LiveReservation",
    "PoolSlot",
    "RouteSlot",
    "group_marker",
]


class PoolSlot:
    """A pool's live figures; ``available`` is derived, never stored."""

    __slots__ = ("address", "balance", "chain", "id", "outstanding", "reserved", "symbol", "type")

    def __init__(
        self, pool_id: str, chain: int, symbol: str, pool_type: str, address: str, balance: int
    ) -> None:
        self.id = pool_id
        self.chain = chain
        self.symbol = symbol
        self.type = pool_type
        self.address = address
        self.balance = balance
        self.reserved = 0
        self.outstanding = 0

    def state(self) -> PoolState:
        """An immutable snapshot."""
        r, o, b = self.reserved, self.outstanding, self.balance
        return PoolState(
            self.id, self.chain, self.symbol, self.type, self.address, b, r, o, b - r - o
        )


class RouteSlot:
    """An onboarded route with everything a quote needs precomputed."""

    __slots__ = (
        "dst",
        "dst_token",
        "eta",
        "fill_cost",
        "pools",
        "src",
        "src_token",
        "symbol",
        "tiers",
    )

    def __init__(
        self,
        src: int,
        dst: int,
        symbol: str,
        tiers: tuple[tuple[int, int, int], ...],
        pools: tuple[PoolSlot, ...],
        fill_cost: int,
        eta: int,
        src_token: str,
        dst_token: str,
    ) -> None:
        self.src = src
        self.dst = dst
        self.symbol = symbol
        self.tiers = tiers
        self.pools = pools
        self.fill_cost = fill_cost
        self.eta = eta
        self.src_token = src_token
        self.dst_token = dst_token


#: A live reservation is a list, not an object: it is created on every quote, and a list
#: costs a quarter of a slotted instance. It is also its own heap entry, ordered by
#: ``[expires, seq]`` (``seq`` is unique, so comparisons never reach the other items), unless it
#: joins a whole second's group (see :mod:`toolkit.engine.core`). Re-keying makes a new list
#: and marks the old one dead, so a scheduled entry is never mutated in place.
#: Layout: ``[expires, seq, key, kind, pool, amount, quote, live]``.
LiveReservation = list
EXPIRES, SEQ, KEY, KIND, POOL, AMOUNT, QUOTE, LIVE = range(8)
#: The kind of a heap entry that stands for a whole second's group of quotes.
GROUP = "group"


def group_marker(second: int, seq: int) -> LiveReservation:
    """The heap entry of a whole second's group of quotes (see :mod:`toolkit.engine.core`).

    It sorts with the group's first quote (``seq``) and is never live.
    """
    return [second, seq, None, GROUP, None, 0, None, False]
