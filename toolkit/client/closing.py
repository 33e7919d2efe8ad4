"""``with`` for anything that has ``close()``: the one context-manager protocol of the clients,
the embedded service and a :class:`~toolkit.client.Connection`.

>>> class Door(Closing):
...     def close(self) -> None:
...         print("closed")
>>> with Door():
...     pass
closed
"""

from __future__ import annotations

from abc import abstractmethod
from types import TracebackType
from typing import Self

__all__ = ["Closing"]


class Closing:
    """A base whose ``with`` block ends in ``close()`` (which the subclass defines)."""

    @abstractmethod
    def close(self) -> None:
        """Release what the object holds."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
