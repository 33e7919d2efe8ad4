"""The clock the dispatcher reads and the development namespace moves."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class DevClock(Protocol):
    """The time the dispatcher reads and the development namespace moves, and what
    ``evm_snapshot`` keeps beside the ledgers (``save``/``restore``: the offset at least)."""

    offset: float

    def now(self) -> float: ...

    def save(self) -> Any: ...

    def restore(self, state: Any) -> None: ...


class OffsetClock:
    """A clock plus an offset (what ``evm_increaseTime`` moves).

    >>> clock = OffsetClock(lambda: 100.0)
    >>> clock.offset += 5
    >>> clock.now()
    105.0
    """

    def __init__(self, base: Callable[[], float]) -> None:
        self._base = base
        self.offset = 0.0

    def now(self) -> float:
        return float(self._base()) + self.offset

    def save(self) -> float:
        """What a snapshot keeps of this clock: its offset."""
        return self.offset

    def restore(self, state: float) -> None:
        """Go back to a saved offset."""
        self.offset = state
