"""One discrete-event scheduler for every timed loop: the replay, the whole-flow backtest, the
world's filler and the traffic thread.

Modelled on SimPy's ``Environment``: :meth:`Scheduler.schedule` puts a handler on the calendar
at an instant, :meth:`Scheduler.run` calls the handlers in time order and moves :attr:`now`
from one instant to the next (never reading the wall clock: real time is the caller's adapter,
as the traffic thread waits on its clock between :meth:`Scheduler.step` calls). A handler is
called as ``handler(at, payload)``: one handler per kind of event, its state kept by its owner
(columns of numbers, not one object per event).

A *feed* (:meth:`Scheduler.feed`) is a sorted column of arrival times read in place: its rows
are never pushed on the heap, so a million arrivals cost a comparison each, not a heap entry.

The tie rule, so that a run is a pure function of its inputs: events due at the same instant run
by ``priority`` (lower first); at equal time and priority a feed's row runs before a scheduled
event (the feed was on the calendar first), feeds in the order they were added and each feed's
rows in order, scheduled events in the order they were scheduled (first in, first out).

Unlike SimPy's, ``run(until=t)`` also runs the events due exactly at ``t`` (the loops here
ask "everything due by now"; ``run(until=math.nextafter(t, -math.inf))`` stops before them),
and it leaves :attr:`Scheduler.now` at the last event's instant rather than at ``t``.

Stdlib only, and it imports only :mod:`toolkit.arguments`: every layer may use it.

>>> log = []
>>> sched = Scheduler()
>>> def ping(at, name):
...     log.append((at, name))
...     if name == "a":
...         sched.schedule(at + 1.0, ping, "c")
>>> sched.schedule(2.0, ping, "b")
>>> sched.schedule(1.0, ping, "a")
>>> sched.run(until=2.0)
>>> log, sched.now
([(1.0, 'a'), (2.0, 'b'), (2.0, 'c')], 2.0)
>>> sched.run(until=5.0); sched.now  # nothing was due: now stays at the last event's instant
2.0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from heapq import heappop, heappush
from itertools import pairwise
from typing import Any

from toolkit.arguments import ArgumentError, number, whole

__all__ = ["Handler", "Scheduler"]

#: What the scheduler calls: ``handler(at, payload)`` (a feed's payload is the row's index).
Handler = Callable[[float, Any], None]

_INF = math.inf


class _Feed:
    """A sorted column of arrival times read in place, and the handler of its rows."""

    __slots__ = ("at", "handler", "next", "priority", "rank", "times")

    def __init__(self, times: list[float], handler: Handler, priority: int, rank: int) -> None:
        self.times = times
        self.handler = handler
        self.priority = priority
        self.rank = rank
        self.next = 0  # the index of the row to run next
        self.at = times[0] if times else _INF  # that row's time

    def key(self) -> tuple[float, int, int]:
        return (self.at, self.priority, self.rank)


def _ignore(at: float, payload: Any) -> None:
    """The handler of :data:`_DRY`, which has no rows to call it with."""


#: The front feed when no feed has rows left (so the loop never tests for None).
_DRY = _Feed([], _ignore, 0, -1)


class Scheduler:
    """A calendar of ``(at, priority, order)`` events and feeds, run in that order.

    ``start`` is the initial :attr:`now`. See the module docstring for the tie rule.

    >>> sched = Scheduler(start=10.0)
    >>> sched.schedule(5.0, print, "late")
    Traceback (most recent call last):
    ...
    toolkit.arguments.ArgumentError: at: must be a finite time >= now (10.0), got 5.0
    """

    __slots__ = ("_feeds", "_front", "_heap", "_now", "_running", "_seq")

    def __init__(self, start: float = 0.0) -> None:
        self._now = number(start, "start")
        # (at, priority, seq, handler, payload): seq is unique, so handlers are never compared.
        self._heap: list[tuple[float, int, int, Handler, Any]] = []
        self._seq = 0
        self._feeds: list[_Feed] = []
        self._front = _DRY  # the feed whose row is due first
        self._running = False

    @property
    def now(self) -> float:
        """The instant of the event running, or of the last one run (``start`` before any)."""
        return self._now

    @property
    def pending(self) -> int:
        """How many events and feed rows are still to run."""
        return len(self._heap) + sum(len(f.times) - f.next for f in self._feeds)

    def __repr__(self) -> str:
        return f"Scheduler(now={self._now!r}, pending={self.pending})"

    def schedule(self, at: float, handler: Handler, payload: Any = None, priority: int = 0) -> None:
        """Call ``handler(at, payload)`` at ``at`` (not before :attr:`now`).

        >>> sched = Scheduler()
        >>> sched.schedule(1.5, lambda at, p: print(at, p), "x", priority=1)
        >>> sched.schedule(1.5, lambda at, p: print(at, p), "y")
        >>> sched.run()
        1.5 y
        1.5 x
        """
        if not self._now <= at < _INF:  # also refuses NaN
            raise ArgumentError("at", f"a finite time >= now ({self._now!r})", at)
        self._seq = seq = self._seq + 1
        heappush(self._heap, (at, priority, seq, handler, payload))

    def feed(self, times: Sequence[float], handler: Handler, *, priority: int = 0) -> None:
        """Call ``handler(times[i], i)`` for every row ``i`` of ``times`` (sorted, >= now).

        The column is read in place as the run reaches each row (a day of flow at scale is a
        million rows: heaping them all first costs seconds). Feeds are added before a run.

        >>> sched = Scheduler()
        >>> sched.feed([0.0, 2.0], lambda at, i: print("row", i, at))
        >>> sched.schedule(2.0, lambda at, p: print("event", at))
        >>> sched.run()
        row 0 0.0
        row 1 2.0
        event 2.0
        >>> sched.feed([3.0, 1.0], print)
        Traceback (most recent call last):
        ...
        toolkit.arguments.ArgumentError: times[1]: must be sorted times >= now (2.0), got 1.0
        """
        if self._running:
            raise RuntimeError("feed: add feeds before a run, not from its handlers")
        whole(priority, "priority")
        values = times.tolist() if hasattr(times, "tolist") else list(times)
        rule = f"sorted times >= now ({self._now!r})"
        if values and not values[0] >= self._now:
            raise ArgumentError("times[0]", rule, values[0])
        for i, (a, b) in enumerate(pairwise(values), start=1):
            if not b >= a:
                raise ArgumentError(f"times[{i}]", rule, b)
        rank = self._feeds[-1].rank + 1 if self._feeds else 0  # after every live feed
        self._feeds.append(_Feed(values, handler, priority, rank))
        self._front = self._first_feed()

    def _first_feed(self) -> _Feed:
        # Dry feeds are dropped, and their handlers with them: an owner whose handlers are its
        # own methods is then freed by reference counting once its run is over, not left to
        # the cycle collector with all its columns.
        self._feeds = live = [f for f in self._feeds if f.at < _INF]
        return min(live, key=_Feed.key, default=_DRY)

    def peek(self) -> float:
        """The instant of the next event or feed row (``inf`` when none is left).

        >>> Scheduler().peek()
        inf
        """
        at = self._front.at
        heap = self._heap
        return heap[0][0] if heap and heap[0][0] < at else at

    def step(self) -> None:
        """Run the next event alone (a real-time caller waits on its clock between steps).

        >>> sched = Scheduler()
        >>> sched.schedule(1.0, lambda at, p: print(p), "one")
        >>> sched.schedule(1.0, lambda at, p: print(p), "two")
        >>> sched.step(); sched.pending
        one
        1
        """
        self.run(events=1)

    def run(self, until: float | None = None, *, events: int | None = None) -> None:
        """Run the events due at or before ``until`` (default: all), in order.

        ``events`` stops the run after that many. :attr:`now` is left at the last event's
        instant, not moved on to ``until`` (as SimPy does): a loop that runs to each sampling
        instant in turn still knows when its last event happened.
        """
        if until is None:
            limit = _INF
        elif type(until) is float and self._now <= until < _INF:
            limit = until  # what number() returns, without building its rule text: a replay
            # runs to every sampling instant in turn (50,000 calls for a month of flow)
        else:
            limit = number(until, "until", minimum=self._now)
        budget = -1 if events is None else whole(events, "events", minimum=1)
        if self._running:
            raise RuntimeError("run: the scheduler is already running (called from a handler)")
        self._running = True
        try:
            self._loop(limit, budget)
        finally:
            self._running = False

    def _loop(self, limit: float, budget: int) -> None:
        # The hot loop of every replay: the front feed's column and head stay in locals; a feed
        # row costs a comparison with the heap's top, not a push and a pop.
        heap = self._heap
        many = len(self._feeds) > 1
        front = self._front
        times, f_at, f_prio, f_run = front.times, front.at, front.priority, front.handler
        nxt, n = front.next, len(times)
        while budget:  # -1 (no budget) counts down without reaching 0
            budget -= 1
            if heap:
                top = heap[0]
                at = top[0]
                if f_at > at or (f_at == at and f_prio > top[1]):
                    if at > limit:
                        break
                    heappop(heap)
                    self._now = at
                    top[3](at, top[4])
                    continue
            elif f_at == _INF:
                break
            at = f_at
            if at > limit:
                break
            k = nxt
            nxt += 1
            # Written back at once: a handler may peek() or count what is pending.
            front.next = nxt
            front.at = f_at = times[nxt] if nxt < n else _INF
            self._now = at
            if many or f_at == _INF:
                self._front = front = self._first_feed()
                handler = f_run
                times, f_at, f_prio, f_run = front.times, front.at, front.priority, front.handler
                nxt, n = front.next, len(times)
                handler(at, k)
            else:
                f_run(at, k)
