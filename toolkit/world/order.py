"""Orders as the simulated escrow holds them, their status, and the world's errors."""

from __future__ import annotations

import math
from enum import StrEnum
from typing import NamedTuple

from toolkit.engine import Fill, OrderTerms, ReservedQuote
from toolkit.errors import ChainError
from toolkit.scenario import Scenario

__all__ = [
    "EscrowOrder",
    "OrderState",
    "OrderStatus",
    "Progress",
    "Reverted",
    "Tally",
    "WorldError",
]


_new = tuple.__new__


class WorldError(ChainError):
    """A request the simulated world refuses (unknown order, wrong contract, wrong time)."""


class Reverted(WorldError):
    """The escrow contract would revert; ``reason`` is the contract's error name.

    >>> str(Reverted("TimestampPassed", "fillDeadline 100 is not after now 120"))
    'TimestampPassed: fillDeadline 100 is not after now 120'
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class OrderStatus(StrEnum):
    """Where an escrowed order is in its life."""

    DEPOSITED = "Deposited"
    FILLED = "Filled"
    SETTLED = "Settled"
    REFUNDED = "Refunded"


class EscrowOrder(NamedTuple):
    """A single-input, single-output escrow order, decoded or built directly (backtests).

    ``terms`` holds chains, tokens and amounts; deadlines are Unix seconds. ``exclusive_for``
    may fill alone before ``exclusive_until``; None means anyone may fill at once.
    """

    order_id: str
    user: str
    terms: OrderTerms
    recipient: str
    fill_deadline: int
    expires: int
    exclusive_for: str | None = None
    exclusive_until: int = 0

    @classmethod
    def from_quote(
        cls, order_id: str, quote: ReservedQuote, now: float, scenario: Scenario, user: str
    ) -> EscrowOrder:
        """The order ``user`` escrows at ``now`` from ``quote`` (and receives), with the
        deadlines the transaction endpoint derives (:func:`toolkit.chain.builder.build_open`):
        exclusive to the scenario's filler until ``floor(now) + exclusive_s``, ``fillDeadline``
        ``open_s`` after that, ``expires`` the route's expiry buffer after the fillDeadline.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> scenario = load_scenario("default")
        >>> usdc = scenario.token(8453, "USDC").address
        >>> quote = Engine(scenario).quote(1, 8453, usdc, 10**9, now=100.4)
        >>> order = EscrowOrder.from_quote("or_1", quote, 100.4, scenario, "0x" + "11" * 20)
        >>> order.exclusive_until, order.fill_deadline, order.expires - order.fill_deadline
        (160, 460, 43200)
        >>> order.terms.output_amount == quote.output_amount
        True
        """
        windows = scenario.windows
        exclusive_until = math.floor(now) + windows.exclusive_s
        deadline = exclusive_until + windows.open_s
        src, dst = quote.src_chain, quote.dst_chain
        # Built as the tuples they are: a named tuple's __new__ is one more Python call each
        # (the replay escrows hundreds of thousands of these).
        terms = _new(
            OrderTerms,
            (src, quote.src_token, quote.input_amount, dst, quote.dst_token, quote.output_amount),
        )
        expires = deadline + scenario.expiry_buffer(src, dst)
        return _new(
            cls, (order_id, user, terms, user, deadline, expires, scenario.filler, exclusive_until)
        )


class OrderState(NamedTuple):
    """A snapshot of one order in the world. Times are None until the step happens."""

    order: EscrowOrder
    status: OrderStatus
    depositor: str
    deposited_at: float
    filled_at: float | None
    settled_at: float | None
    refunded_at: float | None
    exclusive_fill: bool
    fill: Fill | None


class Progress(NamedTuple):
    """What one :meth:`toolkit.world.World.advance` call did, as tuples of order ids.

    ``missed`` orders passed their fillDeadline unfilled (now reclaimable on the escrow);
    ``retried`` counts fill attempts that failed for capacity or price and were rescheduled.
    """

    filled: tuple[str, ...]
    settled: tuple[str, ...]
    missed: tuple[str, ...]
    refunded: tuple[str, ...]
    retried: int


class Tally:
    """What one :meth:`toolkit.world.World.advance` did, as its handlers go (the world's
    working counter; :meth:`progress` is the immutable result)."""

    __slots__ = ("filled", "missed", "refunded", "retried", "settled")

    def __init__(self) -> None:
        self.filled: list[str] = []
        self.settled: list[str] = []
        self.missed: list[str] = []
        self.refunded: list[str] = []
        self.retried = 0

    def progress(self) -> Progress:
        """The counts as a :class:`Progress`."""
        return Progress(
            tuple(self.filled),
            tuple(self.settled),
            tuple(self.missed),
            tuple(self.refunded),
            self.retried,
        )
