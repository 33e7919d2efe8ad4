"""The world's mutable record of one escrowed order (private to :mod:`toolkit.world`).

A record is a list, not an object: one is made on every deposit of a replay, and a list
literal costs a fraction of a slotted instance's ``__init__`` (the engine's live reservations
are lists for the same reason). The index constants below name its slots; callers see
immutable :class:`~toolkit.world.order.OrderState` snapshots built from it on demand.

``exclusive_until`` is ``-inf`` when the order names no exclusive filler, and ``foreign`` says
whether that filler is someone other than the service: both are worked out once at deposit
rather than on every fill attempt.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from toolkit.scenario import Scenario
from toolkit.world.order import EscrowOrder, OrderStatus

__all__ = [
    "DEPOSITED_AT",
    "DEPOSITOR",
    "EXCLUSIVE_FILL",
    "EXCLUSIVE_UNTIL",
    "FILL",
    "FILLED_AT",
    "FOREIGN",
    "ORDER",
    "REFUNDED_AT",
    "SETTLED_AT",
    "STATUS",
    "Record",
    "escrowed_inputs",
    "new_record",
]

#: A record's layout: ``[order, status, depositor, deposited_at, filled_at, settled_at,
#: refunded_at, exclusive_fill, fill, exclusive_until, foreign]``.
Record = list
(
    ORDER,
    STATUS,
    DEPOSITOR,
    DEPOSITED_AT,
    FILLED_AT,
    SETTLED_AT,
    REFUNDED_AT,
    EXCLUSIVE_FILL,
    FILL,
    EXCLUSIVE_UNTIL,
    FOREIGN,
) = range(11)

_DEPOSITED = OrderStatus.DEPOSITED
_NO_EXCLUSIVITY = -math.inf


def new_record(
    order: EscrowOrder, depositor: str, now: float, filler: str, filler_lower: str
) -> Record:
    """A ``Deposited`` record; ``filler`` is the service's address as the scenario spells it
    (the common case needs no lower-casing) and ``filler_lower`` the same, lower-cased.

    >>> from toolkit.engine import OrderTerms
    >>> terms = OrderTerms(1, "0xa", 5, 8453, "0xb", 4)
    >>> order = EscrowOrder("0x01", "0xu", terms, "0xu", 100, 200, "0xABC", 60)
    >>> r = new_record(order, "0xu", 3.0, "0xAbc", "0xabc")
    >>> r[STATUS], r[EXCLUSIVE_UNTIL], r[FOREIGN]
    (<OrderStatus.DEPOSITED: 'Deposited'>, 60, False)
    """
    exclusive_for = order.exclusive_for
    if exclusive_for is None:
        until: float = _NO_EXCLUSIVITY
        foreign = False
    else:
        until = order.exclusive_until
        foreign = exclusive_for != filler and str(exclusive_for).lower() != filler_lower
    return [order, _DEPOSITED, depositor, now, None, None, None, False, None, until, foreign]


_FILLED = OrderStatus.FILLED


def escrowed_inputs(records: Iterable[Record], scenario: Scenario) -> dict[tuple[int, str], int]:
    """The inputs the escrows hold for ``records``, by (origin chain, token symbol): every
    order Deposited or Filled (a settlement releases its input to the service, a refund to its
    user). A token the scenario does not list is named by its address.

    >>> from toolkit.engine import OrderTerms
    >>> from toolkit.scenario import load_scenario
    >>> s = load_scenario("single-pool")
    >>> terms = OrderTerms(1, s.token(1, "USDC").address, 5, 8453, "0xb", 4)
    >>> order = EscrowOrder("0x01", "0xu", terms, "0xu", 100, 200)
    >>> escrowed_inputs([new_record(order, "0xu", 0.0, "0xf", "0xf")], s)
    {(1, 'USDC'): 5}
    """
    held: dict[tuple[int, str], int] = {}
    for record in records:
        if record[STATUS] is _DEPOSITED or record[STATUS] is _FILLED:
            terms = record[ORDER].terms
            token = scenario.token_by_address(terms.src_chain, terms.input_token)
            key = (terms.src_chain, terms.input_token if token is None else token.symbol)
            held[key] = held.get(key, 0) + terms.input_amount
    return held
