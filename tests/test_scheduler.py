"""The one event scheduler: time order, the tie rule (checked against SimPy's Environment),
feeds read in place, ``run(until)`` and ``step``, and the errors for bad input."""

from __future__ import annotations

import copy
import math
import weakref
from typing import Any

import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st
from simpy.core import EventPriority

from toolkit.arguments import ArgumentError
from toolkit.scheduler import Scheduler


def _recorder(log: list[Any], name: str) -> Any:
    return lambda at, payload: log.append((at, name, payload))


def test_events_run_in_time_order_then_by_priority_then_first_in_first_out() -> None:
    log: list[Any] = []
    sched = Scheduler()
    sched.schedule(2.0, _recorder(log, "b"), 1)
    sched.schedule(1.0, _recorder(log, "a"), 1)
    sched.schedule(2.0, _recorder(log, "late"), 1, priority=1)
    sched.schedule(2.0, _recorder(log, "b"), 2)
    sched.run()
    assert log == [(1.0, "a", 1), (2.0, "b", 1), (2.0, "b", 2), (2.0, "late", 1)]
    assert sched.now == 2.0 and sched.pending == 0 and sched.peek() == math.inf


def test_feed_rows_run_before_events_of_the_same_time_and_priority_feeds_in_order() -> None:
    log: list[Any] = []
    sched = Scheduler()
    sched.schedule(1.0, _recorder(log, "event"))
    sched.feed([1.0, 1.0, 3.0], _recorder(log, "first"))
    sched.feed([0.5, 1.0], _recorder(log, "second"))
    sched.feed([1.0], _recorder(log, "after"), priority=1)
    sched.run()
    assert [(at, name) for at, name, _ in log] == [
        (0.5, "second"),
        (1.0, "first"),
        (1.0, "first"),
        (1.0, "second"),
        (1.0, "event"),
        (1.0, "after"),
        (3.0, "first"),
    ]
    # a feed's payload is the row's index in its column
    assert [p for _, name, p in log if name == "first"] == [0, 1, 2]


def test_handlers_schedule_more_and_run_until_includes_its_instant() -> None:
    log: list[float] = []
    sched = Scheduler(start=10.0)

    def tick(at: float, left: int) -> None:
        log.append(at)
        if left:
            sched.schedule(at + 1.0, tick, left - 1)

    sched.schedule(10.0, tick, 5)
    sched.run(until=12.0)
    assert log == [10.0, 11.0, 12.0]
    assert sched.now == 12.0 and sched.peek() == 13.0 and sched.pending == 1
    sched.run(until=12.5)  # nothing due: now stays at the last event's instant
    assert sched.now == 12.0
    sched.run(until=math.nextafter(14.0, -math.inf))  # stops before the event at 14
    assert log[-1] == 13.0
    sched.step()
    assert log[-1] == 14.0 and sched.now == 14.0
    sched.run()
    assert log == [10.0, 11.0, 12.0, 13.0, 14.0, 15.0]


def test_step_runs_one_event_and_a_feed_row_counts_as_one() -> None:
    log: list[Any] = []
    sched = Scheduler()
    sched.feed([0.0, 0.0], _recorder(log, "row"))
    sched.schedule(0.0, _recorder(log, "event"))
    assert sched.pending == 3
    sched.step()
    assert log == [(0.0, "row", 0)] and sched.pending == 2
    sched.run(events=2)
    assert [name for _, name, _ in log] == ["row", "row", "event"]


def test_bad_input_is_refused_with_the_argument_and_the_rule_and_changes_nothing() -> None:
    sched = Scheduler(start=5.0)
    sched.schedule(6.0, _recorder([], "x"))
    rule = r"must be a finite time >= now \(5.0\)"
    with pytest.raises(ArgumentError, match=rf"^at: {rule}, got 4.0$"):
        sched.schedule(4.0, _recorder([], "x"))
    with pytest.raises(ArgumentError, match=rf"^at: {rule}, got nan$"):
        sched.schedule(math.nan, _recorder([], "x"))
    with pytest.raises(ArgumentError, match=rf"^at: {rule}, got inf$"):
        sched.schedule(math.inf, _recorder([], "x"))
    with pytest.raises(ArgumentError, match=r"^times\[2\]: must be sorted times >= now"):
        sched.feed([5.0, 7.0, 6.0], _recorder([], "x"))
    with pytest.raises(ArgumentError, match=r"^times\[0\]: must be sorted times >= now"):
        sched.feed([1.0], _recorder([], "x"))
    with pytest.raises(ArgumentError, match=r"^until: must be a finite number >= 5"):
        sched.run(until=1.0)
    with pytest.raises(ArgumentError, match=r"^events: must be an integer >= 1"):
        sched.run(events=0)
    with pytest.raises(ArgumentError, match=r"^start: must be a finite number"):
        Scheduler(start=math.inf)
    assert sched.pending == 1 and sched.peek() == 6.0 and sched.now == 5.0


def test_a_handler_may_not_add_feeds_or_run_the_scheduler_again() -> None:
    sched = Scheduler()
    sched.schedule(1.0, lambda at, _: sched.feed([2.0], print))
    with pytest.raises(RuntimeError, match="feed: add feeds before a run"):
        sched.run()
    sched.schedule(2.0, lambda at, _: sched.run())
    with pytest.raises(RuntimeError, match="run: the scheduler is already running"):
        sched.run()
    assert repr(sched) == "Scheduler(now=2.0, pending=0)"


class _Owner:
    """A handler's owner, as the world is: deep copies must keep handler and owner together."""

    def __init__(self) -> None:
        self.seen: list[float] = []
        self.scheduler = Scheduler()
        self.scheduler.schedule(1.0, self.handle)

    def handle(self, at: float, payload: Any) -> None:
        self.seen.append(at)


def test_a_deep_copy_runs_the_copied_owners_handlers() -> None:
    owner = _Owner()
    twin = copy.deepcopy(owner)
    twin.scheduler.run()
    assert twin.seen == [1.0] and owner.seen == []


def _simpy_order(events: list[tuple[float, int]], feed: list[float]) -> list[tuple[str, int]]:
    """The order SimPy 4 runs the same calendar in: every event a zero-delay callback chain
    scheduled at start, the feed's rows first (they were on the calendar first)."""
    env = simpy.Environment()
    order: list[tuple[str, int]] = []

    def at(t: float, priority: int, label: tuple[str, int]) -> None:
        event = env.event()
        event.callbacks.append(lambda _: order.append(label))
        event._ok = True
        event._value = None
        # SimPy's tie rule: (time, priority, insertion order); NORMAL = 1, URGENT = 0.
        env.schedule(event, priority=EventPriority(simpy.core.NORMAL + priority), delay=t)

    for i, t in enumerate(feed):
        at(t, 0, ("row", i))
    for i, (t, priority) in enumerate(events):
        at(t, priority, ("event", i))
    env.run()
    return order


@settings(max_examples=150, deadline=None)
@given(
    events=st.lists(
        st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.0, 7.25]), st.integers(0, 2)), max_size=30
    ),
    feed=st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 7.25]), max_size=30).map(sorted),
)
def test_the_run_order_is_simpys_for_the_same_calendar(
    events: list[tuple[float, int]], feed: list[float]
) -> None:
    order: list[tuple[str, int]] = []
    sched = Scheduler()
    for i, (t, priority) in enumerate(events):
        sched.schedule(t, lambda at, i: order.append(("event", i)), i, priority=priority)
    sched.feed(feed, lambda at, i: order.append(("row", i)))
    sched.run()
    assert order == _simpy_order(events, feed)


def test_a_run_to_the_end_keeps_no_handler_so_its_owner_is_freed_without_the_collector() -> None:
    class Owner:
        def __init__(self) -> None:
            self.scheduler = Scheduler()
            self.scheduler.feed([0.0, 1.0], self.arrive)

        def arrive(self, at: float, k: int) -> None:
            self.scheduler.schedule(at + 1.0, self.leave, k)

        def leave(self, at: float, k: int) -> None:
            pass

    owner = Owner()
    owner.scheduler.run()
    alive = weakref.ref(owner)
    del owner  # reference counting alone: the replay's columns go as soon as its trace does
    assert alive() is None
