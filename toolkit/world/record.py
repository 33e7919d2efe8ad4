"""The world's mutable record of one escrowed order (private to :mod:`toolkit.world`)."""

from __future__ import annotations

import math

from toolkit.engine import Fill
from toolkit.world.order import EscrowOrder, OrderStatus

__all__ = ["Record"]


class Record:
    """One order's mutable life in the world.

    ``exclusive_until`` is ``-inf`` when the order names no exclusive filler, and ``foreign``
    says whether that filler is someone other than the service: both are worked out once at
    deposit rather than on every fill attempt.
    """

    __slots__ = (
        "deposited_at",
        "depositor",
        "exclusive_fill",
        "exclusive_until",
        "fill",
        "filled_at",
        "foreign",
        "order",
        "refunded_at",
        "settled_at",
        "status",
    )

    def __init__(self, order: EscrowOrder, depositor: str, now: float, filler: str) -> None:
        self.order = order
        self.status = OrderStatus.DEPOSITED
        self.depositor = depositor
        self.deposited_at = now
        self.filled_at: float | None = None
        self.settled_at: float | None = None
        self.refunded_at: float | None = None
        self.exclusive_fill = False
        self.fill: Fill | None = None
        exclusive_for = order.exclusive_for
        if exclusive_for is None:
            self.exclusive_until: float = -math.inf
            self.foreign = False
        else:
            self.exclusive_until = order.exclusive_until
            self.foreign = str(exclusive_for).lower() != filler
