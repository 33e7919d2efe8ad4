"""Clocks: the time a client, its collectors and the embedded service agree on.

A clock is called for the current Unix time in seconds and has ``sleep(seconds)``: that is the
one :class:`Clock` type every part of the toolkit takes (clients, collectors, the embedded
service, the simulated chains' JSON-RPC). The :data:`WALL` clock is real time; a
:class:`VirtualClock` moves only when told to (or when something sleeps on it), so a sweep with
a 15 s interval finishes at once in a notebook and repeats exactly in a regression test; an
:class:`OffsetClock` runs ahead of another by what a development chain's ``evm_increaseTime``
added. A client carries its clock: its collectors read it and sleep on it, and an embedded
service it starts runs on it.

Stdlib only, and it imports no other toolkit module: every layer may use it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Protocol

from toolkit.arguments import number

__all__ = [
    "DEFAULT_START",
    "WALL",
    "Clock",
    "OffsetClock",
    "ScaledClock",
    "VirtualClock",
    "WallClock",
    "sleep_async",
]


class Clock(Protocol):
    """What the toolkit needs of a clock: the time now, and a way to wait."""

    def __call__(self) -> float:
        """The current Unix time, in seconds."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (a virtual clock moves forward instead)."""
        ...


class WallClock:
    """Real time: ``time.time`` and ``time.sleep``.

    >>> WALL() > 1_700_000_000
    True
    """

    def __call__(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def __repr__(self) -> str:
        return "WALL"


#: The wall clock, the default of every client that talks to a real service.
WALL = WallClock()


async def sleep_async(clock: Clock, seconds: float) -> None:
    """Wait ``seconds`` on ``clock`` from a coroutine: on the wall clock (or a scaled one, for
    ``seconds / speed``) without blocking the event loop; a virtual clock moves by itself (then
    the loop gets a turn).

    >>> import asyncio
    >>> clock = VirtualClock(0.0)
    >>> asyncio.run(sleep_async(clock, 2.5)); clock()
    2.5
    """
    if isinstance(clock, WallClock):
        await asyncio.sleep(seconds)
    elif isinstance(clock, ScaledClock):
        await asyncio.sleep(max(0.0, seconds) / clock.speed)
    else:
        clock.sleep(seconds)
        await asyncio.sleep(0)


#: 2025-10-09 08:53:20 UTC: a round, recent Unix time, so quote timestamps look plausible.
DEFAULT_START = 1_760_000_000.0


class VirtualClock:
    """A clock for ``create_app(clock=...)``, backtests and tests; it never reads the wall clock.

    Calling the clock (or :meth:`now`) returns the current virtual Unix time in seconds.
    :meth:`advance` and :meth:`sleep` move it forward, :meth:`set` jumps to a later time. It
    never moves backwards, because the engine refuses a ``now`` earlier than one it has seen.
    Reads and moves are thread-safe: the embedded service reads it on its own event-loop thread.

    >>> clock = VirtualClock()
    >>> clock()
    1760000000.0
    >>> clock.advance(15)
    1760000015.0
    >>> clock.set(1_760_000_100)
    1760000100.0
    """

    def __init__(self, start: float = DEFAULT_START) -> None:
        self._now = number(start, "start")
        self._lock = threading.Lock()

    def now(self) -> float:
        """The current virtual time, in seconds since the Unix epoch."""
        with self._lock:
            return self._now

    def __call__(self) -> float:
        return self.now()

    def advance(self, seconds: float) -> float:
        """Move the clock forward by ``seconds`` (>= 0) and return the new time.

        >>> VirtualClock(100.0).advance(2.5)
        102.5
        """
        step = number(seconds, "seconds", minimum=0)  # the clock never goes back
        with self._lock:
            self._now += step
            return self._now

    def sleep(self, seconds: float) -> None:
        """Advance by ``seconds`` and return nothing: a drop-in for ``time.sleep``.

        A client on this clock sleeps here, so its retry back-offs take virtual time.

        >>> clock = VirtualClock(0.0)
        >>> clock.sleep(1.5); clock()
        1.5
        """
        self.advance(seconds)

    def set(self, t: float) -> float:
        """Jump to time ``t`` (not earlier than now) and return it.

        >>> VirtualClock(10.0).set(12)
        12.0
        """
        target = number(t, "t")
        with self._lock:
            if target < self._now:
                raise ValueError(
                    f"t: {target!r} is earlier than the clock's time {self._now!r}; "
                    "a virtual clock never goes back (the engine refuses an earlier now)"
                )
            self._now = target
            return self._now

    def __repr__(self) -> str:
        return f"VirtualClock(now={self.now()!r})"


class ScaledClock:
    """Simulated time that runs ``speed`` times faster than the wall clock, from ``start``.

    For a live embedded service whose markets should move faster than real time (``toolkit
    demo`` shows half an hour of trading in a couple of minutes): every reader sees the same
    time, derived from the monotonic wall clock, so threads need no coordination, and
    :meth:`sleep` waits ``seconds / speed`` of real time. Quote windows, block times and
    settlement delays all shrink by ``speed`` in wall time; nothing else changes.

    >>> clock = ScaledClock(60.0, start=1_000.0)
    >>> clock.sleep(30.0)  # half a real second
    >>> 1_030.0 <= clock() < 1_060.0
    True
    >>> ScaledClock(0)
    Traceback (most recent call last):
    ...
    toolkit.arguments.ArgumentError: speed: must be a finite number > 0, got 0
    """

    def __init__(self, speed: float, start: float | None = None) -> None:
        self.speed = number(speed, "speed", above=0)
        self.start = time.time() if start is None else number(start, "start")
        self._origin = time.monotonic()

    def __call__(self) -> float:
        return self.start + (time.monotonic() - self._origin) * self.speed

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of simulated time: ``seconds / speed`` of real time."""
        time.sleep(max(0.0, seconds) / self.speed)

    def __repr__(self) -> str:
        return f"ScaledClock(speed={self.speed!r})"


class OffsetClock:
    """A clock that wraps another and runs ``offset`` seconds ahead of it: a development
    chain's time, which ``evm_increaseTime`` and ``evm_mine`` move (the simulated chains'
    JSON-RPC takes one). ``sleep`` waits on the wrapped clock; :meth:`save` and
    :meth:`restore` are what ``evm_snapshot`` and ``evm_revert`` keep of it (the offset; the
    embedded service, an offset clock itself, keeps its engine and world too).

    >>> clock = OffsetClock(VirtualClock(100.0))
    >>> clock.offset += 5
    >>> clock(), clock.now()
    (105.0, 105.0)
    >>> clock.sleep(1.0); clock()  # the wrapped clock moved
    106.0
    """

    def __init__(self, base: Clock) -> None:
        if not callable(base):
            raise TypeError("clock: must be a callable returning seconds")
        self.base = base
        self.offset = 0.0

    def now(self) -> float:
        """The wrapped clock's time plus the offset."""
        return float(self.base()) + self.offset

    def __call__(self) -> float:
        return self.now()

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` on the wrapped clock."""
        self.base.sleep(seconds)

    def save(self) -> Any:
        """What a snapshot keeps of this clock: its offset."""
        return self.offset

    def restore(self, state: Any) -> None:
        """Go back to a :meth:`save`."""
        self.offset = state

    def __repr__(self) -> str:
        return f"OffsetClock({self.base!r}, offset={self.offset!r})"
