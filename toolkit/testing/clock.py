"""A virtual clock: time that moves only when the test says so."""

from __future__ import annotations

import math
import threading

__all__ = ["DEFAULT_START", "VirtualClock"]

#: 2025-10-09 08:53:20 UTC: a round, recent Unix time, so quote timestamps look plausible.
DEFAULT_START = 1_760_000_000.0


def _seconds(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name}: must be a finite number of seconds, got {value!r}")
    return float(value)


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
        self._now = _seconds(start, "start")
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
        step = _seconds(seconds, "seconds")
        if step < 0:
            raise ValueError(f"seconds: must be >= 0 (the clock never goes back), got {seconds!r}")
        with self._lock:
            self._now += step
            return self._now

    def sleep(self, seconds: float) -> None:
        """Advance by ``seconds`` and return nothing: a drop-in for ``time.sleep``.

        Pass it as a client's ``sleep=`` so that retry back-offs take virtual time.

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
        target = _seconds(t, "t")
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
