"""Orders as the simulated escrow holds them, their status, and the world's errors."""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from toolkit.engine import Fill, OrderTerms
from toolkit.errors import ChainError

__all__ = [
    "EscrowOrder",
    "OrderState",
    "OrderStatus",
    "Progress",
    "Reverted",
    "WorldError",
]


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
