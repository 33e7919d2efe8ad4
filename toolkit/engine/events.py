"""The engine's append-only event log entries.

Every change to a pool is one :class:`Event` with a strictly increasing integer ``id`` (1, 2,
3, ... with no gaps) and the pool's state *after* the change. Fee changes are events too
(``kind == "fee"``, ``pool`` is None, ``key`` is the route ``"src:dst:SYMBOL"`` and ``detail``
holds the new fee tiers).

Kinds:

- ``created``: a reservation was made (``key`` is the quote id, or ``rs_{seed}_{n}`` for hold
  ``n``); ``reserved`` grew by ``amount``.
- ``rekeyed``: a quote reservation became an order reservation (``key`` is the order id,
  ``detail`` the quote id). Only its duration changed, so it is not a liquidity event.
- ``released``: a reservation lapsed; capacity returned to the pool. ``time`` is the lapse time.
- ``filled``: an order's reservation was consumed by a fill (reserved -> outstanding).
- ``filled_direct``: an order without a live reservation was filled from available liquidity.
- ``borrowed``: a borrow quote's reservation was consumed by an authorization.
- ``repaid``: under the ``instant-free`` policy, an outstanding amount was repaid in place at
  settlement; ``detail`` is the fee earned, added to the pool's balance.
- ``settled``: under every other policy, a settlement paid the pool's receivable elsewhere (on
  the repayment chain): ``outstanding`` and ``balance`` both fell by ``amount``; ``detail`` is
  the fee earned.
- ``credited``: a settlement's input arrived on the repayment chain: the pool's ``balance`` grew
  by ``amount`` (``pool`` None: the chain has no pool of the token, the amount is unallocated;
  ``detail`` is then ``(chain, symbol)``).
- ``unfilled``: a fill's transaction reverted: ``outstanding`` fell by ``amount``.
- ``transfer_out``: a rebalancing transfer left: the pool's ``balance`` fell by ``amount``
  (``pool`` None: from the unallocated balance); ``key`` is ``tr_{id}``, ``detail`` the
  transfer id.
- ``transfer_in``: a transfer arrived: the pool's ``balance`` grew by ``amount`` (``pool`` None:
  unallocated); ``key`` and ``detail`` as for ``transfer_out``.
- ``fee``: a route's fee tiers changed.

:data:`LIQUIDITY_KINDS` are the kinds the liquidity event stream pushes: reservations created,
consumed or deleted, repayments and settlements, credits, reverted fills and transfers;
duration-only extensions (``rekeyed``) do not fire. Events without a pool (``fee``, and
unallocated credits and transfers) carry no pool figures.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = [
    "BORROWED",
    "CREATED",
    "CREDITED",
    "FEE",
    "FILLED",
    "FILLED_DIRECT",
    "LIQUIDITY_KINDS",
    "REKEYED",
    "RELEASED",
    "REPAID",
    "SETTLED",
    "TRANSFER_IN",
    "TRANSFER_OUT",
    "UNFILLED",
    "Event",
    "rebuild_events",
]

CREATED = "created"
REKEYED = "rekeyed"
RELEASED = "released"
FILLED = "filled"
FILLED_DIRECT = "filled_direct"
BORROWED = "borrowed"
REPAID = "repaid"
SETTLED = "settled"
CREDITED = "credited"
UNFILLED = "unfilled"
TRANSFER_OUT = "transfer_out"
TRANSFER_IN = "transfer_in"
FEE = "fee"
# Slots per record in the engine's flat log: time, kind, key, pool, amount, detail.
_W = 6

LIQUIDITY_KINDS: frozenset[str] = frozenset(
    {
        CREATED,
        RELEASED,
        FILLED,
        FILLED_DIRECT,
        BORROWED,
        REPAID,
        SETTLED,
        CREDITED,
        UNFILLED,
        TRANSFER_OUT,
        TRANSFER_IN,
    }
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


def rebuild_events(
    records: list[Any], last_id: int, figures: dict[Any, list[int]], hold_prefix: str
) -> list[Event]:
    """Events from the engine's flat log records (6 slots each, oldest first).

    ``last_id`` is the newest record's id and ``figures`` maps each pool slot to its current
    ``[reserved, outstanding, balance]``: walking back from them and undoing each event gives
    the figures after every older one (see :mod:`toolkit.engine.core`). Holds are logged under
    their number; their id is ``hold_prefix`` followed by it.

    >>> rebuild_events([], 0, {}, "rs_0_")
    []
    """
    count = len(records) // _W
    out: list[Event] = [None] * count  # type: ignore[list-item]
    eid = last_id
    for i in range(count - 1, -1, -1):
        time, kind, key, pool, amount, detail = records[i * _W : (i + 1) * _W]
        if type(key) is int:
            key = hold_prefix + str(key)
        if pool is None:
            out[i] = Event(eid, time, kind, key, None, amount, 0, 0, 0, 0, detail)
        else:
            fig = figures[pool]
            r, o, b = fig
            out[i] = Event(eid, time, kind, key, pool.id, amount, b - r - o, r, o, b, detail)
            if kind == CREATED:
                fig[0] = r - amount
            elif kind == RELEASED:
                fig[0] = r + amount
            elif kind in (FILLED, BORROWED):
                fig[0] = r + amount
                fig[1] = o - amount
            elif kind == FILLED_DIRECT:
                fig[1] = o - amount
            elif kind == REPAID:
                fig[1] = o + amount
                fig[2] = b - detail
            elif kind == SETTLED:
                fig[1] = o + amount
                fig[2] = b + amount
            elif kind in (CREDITED, TRANSFER_IN):
                fig[2] = b - amount
            elif kind == TRANSFER_OUT:
                fig[2] = b + amount
            elif kind == UNFILLED:
                fig[1] = o + amount
        eid -= 1
    return out
