"""The engine's append-only event log entries.

Every change to a pool is one :class:`Event` with a strictly increasing integer ``id`` (1, 2,
3, ... with no gaps) and the pool's state *after* the change. Fee changes are events too
(``kind == "fee"``, ``pool`` is None, ``key`` is the route ``"src:dst:SYMBOL"`` and ``detail``
holds the new fee tiers).

Kinds:

- ``created``: a reservation was made (``key`` is the quote id); ``reserved`` grew by ``amount``.
- ``rekeyed``: a quote reservation became an order reservation (``key`` is the order id,
  ``detail`` the quote id). Only its duration changed, so it is not a liquidity event.
- ``released``: a reservation lapsed; capacity returned to the pool. ``time`` is the lapse time.
- ``filled``: an order's reservation was consumed by a fill (reserved -> outstanding).
- ``filled_direct``: an order without a live reservation was filled from available liquidity.
- ``borrowed``: a borrow quote's reservation was consumed by an authorization.
- ``repaid``: an outstanding amount was repaid at settlement; ``detail`` is the fee earned,
  added to the pool's balance.
- ``fee``: a route's fee tiers changed.

:data:`LIQUIDITY_KINDS` are the kinds the liquidity event stream pushes: reservations created,
consumed or deleted and repayments; duration-only extensions (``rekeyed``) do not fire.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = [
    "BORROWED",
    "CREATED",
    "FEE",
    "FILLED",
    "FILLED_DIRECT",
    "LIQUIDITY_KINDS",
    "REKEYED",
    "RELEASED",
    "REPAID",
    "Event",
]

CREATED = "created"
REKEYED = "rekeyed"
RELEASED = "released"
FILLED = "filled"
FILLED_DIRECT = "filled_direct"
BORROWED = "borrowed"
REPAID = "repaid"
FEE = "fee"

LIQUIDITY_KINDS: frozenset[str] = frozenset(
    {CREATED, RELEASED, FILLED, FILLED_DIRECT, BORROWED, REPAID}
)


class Event(NamedTuple):
    """One entry of the event log.

    >>> e = Event(1, 100.0, "created", "qt_00000000000001", "8453:USDC:usdc", 5, 95, 5, 0, 100)
    >>> e.available + e.reserved + e.outstanding == e.balance
    True
    """

    id: int
    time: float
    kind: str
    key: str
    pool: str | None
    amount: int
    available: int
    reserved: int
    outstanding: int
    balance: int
    detail: Any = None

    @property
    def is_liquidity(self) -> bool:
        """True when the liquidity stream pushes this event (see :data:`LIQUIDITY_KINDS`)."""
        return self.kind in LIQUIDITY_KINDS
