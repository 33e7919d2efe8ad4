"""The engine's mutable internals: pools, routes and reservations as ``__slots__`` objects.

Private to the engine; callers see immutable snapshots from :mod:`toolkit.engine.results`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

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
    "TIMED",
    "HoldingSlot",
    "LiveReservation",
    "PoolSlot",
    "RouteSlot",
    "group_marker",
    "timed_entry",
]


class PoolSlot:
    """A pool's live figures; ``available`` is derived, never stored.

    ``balance`` is the capital booked to the pool: its tokens on its chain plus what it lent
    and awaits (``outstanding``, its receivable), so its tokens on chain are ``balance -
    outstanding``. ``opening`` is the balance it started with; ``holding`` the inventory of its
    token on its chain that it belongs to.
    """

    __slots__ = (
        "address",
        "balance",
        "chain",
        "holding",
        "id",
        "opening",
        "outstanding",
        "reserved",
        "symbol",
        "type",
    )

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
        self.opening = balance
        self.holding: HoldingSlot | None = None

    def state(self) -> PoolState:
        """An immutable snapshot."""
        r, o, b = self.reserved, self.outstanding, self.balance
        return PoolState(
            self.id, self.chain, self.symbol, self.type, self.address, b, r, o, b - r - o
        )


class HoldingSlot:
    """The service's inventory of one token on one chain: its pools there, what it holds
    outside them (``unallocated``: settlements and transfers that found no pool), what
    settlements to come owe it (``receivable_in``) and what bridges carry to and from it
    (what will arrive). ``target`` and ``threshold`` are its rebalancing band as shares of the
    token's whole inventory (:func:`toolkit.scenario.rebalancing.resolve_targets`)."""

    __slots__ = (
        "chain",
        "in_flight_in",
        "in_flight_out",
        "pools",
        "receivable_in",
        "symbol",
        "target",
        "threshold",
        "unallocated",
    )

    def __init__(self, chain: int, symbol: str, target: Fraction, threshold: Fraction) -> None:
        self.chain = chain
        self.symbol = symbol
        self.pools: tuple[PoolSlot, ...] = ()
        self.unallocated = 0
        self.receivable_in = 0
        self.in_flight_in = 0
        self.in_flight_out = 0
        self.target = target
        self.threshold = threshold

    def on_chain(self) -> int:
        """Tokens the service holds on the chain: its pools' ``balance - outstanding`` and the
        unallocated balance."""
        held = self.unallocated
        for pool in self.pools:
            held += pool.balance - pool.outstanding
        return held

    def figure(self) -> int:
        """What counts toward the chain's share: on chain, in flight to it, owed to it."""
        return self.on_chain() + self.in_flight_in + self.receivable_in

    def sendable(self) -> int:
        """What a transfer may take now: the unallocated balance and the pools' available."""
        free = self.unallocated
        for pool in self.pools:
            free += pool.balance - pool.reserved - pool.outstanding
        return free


class RouteSlot:
    """An onboarded route with everything a quote needs precomputed."""

    __slots__ = (
        "dst",
        "dst_token",
        "eta",
        "fill_cost",
        "loan_repayment",
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
        loan_repayment: int,
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
        # Where a loan quoted on this route is repaid (an RFQ is repaid on ``src``).
        self.loan_repayment = loan_repayment


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


#: The kind of a heap entry that runs a handler when it falls due (a transfer's arrival, a
#: periodic rebalance): ``[at, seq, key, TIMED, None, 0, handler, False]``, never live, so
#: the lapse path skips it and :meth:`ReservationCore._expire` calls ``handler(at, key)``.
TIMED = "timed"


def timed_entry(at: float, seq: int, key: Any, handler: Any) -> LiveReservation:
    """The heap entry of a handler due at ``at`` (see :data:`TIMED`)."""
    return [at, seq, key, TIMED, None, 0, handler, False]
