"""The lock around the service's state (engine, world, chains, relay, clock offset).

JSON-RPC runs in worker threads (off the event loop, so that one client's batch never stalls
``/health``), while the other handlers and the event streams run on the loop: every one of them
holds :class:`FairLock` while it reads or writes the state. The lock is first come, first
served: a thread answering a batch of a thousand requests takes it per request, and a quote
arriving meanwhile is served after the request in progress, not after the whole batch (a plain
``threading.Lock`` lets the releasing thread take it straight back).

>>> import asyncio
>>> lock = FairLock()
>>> with lock:
...     lock.locked()
True
>>> async def quote():
...     async with lock.hold():
...         return lock.locked()
>>> asyncio.run(quote()), lock.locked()
(True, False)
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType

import anyio.to_thread

__all__ = ["FairLock"]


class FairLock:
    """A FIFO (ticket) lock usable from threads (``with``) and from the loop (``hold``)."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._next = 0
        self._serving = 0

    def locked(self) -> bool:
        """True while someone holds the lock or waits for it."""
        with self._cond:
            return self._serving != self._next

    def acquire(self) -> None:
        """Wait for this caller's turn (blocking: threads only)."""
        with self._cond:
            ticket = self._next
            self._next += 1
            while self._serving != ticket:
                self._cond.wait()

    def try_acquire(self) -> bool:
        """Take the lock when nobody holds it or waits for it; never blocks."""
        with self._cond:
            if self._serving != self._next:
                return False
            self._next += 1
            return True

    def release(self) -> None:
        with self._cond:
            self._serving += 1
            self._cond.notify_all()

    def __enter__(self) -> FairLock:
        self.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Hold the lock from the event loop: at once when it is free, otherwise waiting in a
        worker thread (the loop keeps serving meanwhile)."""
        if not self.try_acquire():
            taken = False

            def take() -> None:
                nonlocal taken
                self.acquire()
                taken = True

            try:
                await anyio.to_thread.run_sync(take)
            except BaseException:
                # anyio delivers a cancellation only once a started thread has returned: if it
                # took the lock, give it back before passing the cancellation on.
                if taken:
                    self.release()
                raise
        try:
            yield
        finally:
            self.release()
