"""Clocks: the wall clock, and a VirtualClock that moves only when told, never backwards."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.clock import DEFAULT_START, WALL, VirtualClock


def test_starts_at_the_default_and_reads_the_same_until_moved() -> None:
    clock = VirtualClock()
    assert clock.now() == DEFAULT_START == 1_760_000_000.0
    time.sleep(0.01)
    assert clock() == clock.now() == DEFAULT_START


def test_advance_sleep_and_set_move_forward() -> None:
    clock = VirtualClock(100)
    assert clock.advance(2.5) == 102.5
    assert clock.sleep(0.5) is None
    assert clock() == 103.0
    assert clock.set(200) == 200.0
    assert clock.set(200) == 200.0  # setting the current time is fine
    assert clock.advance(0) == 200.0
    assert repr(clock) == "VirtualClock(now=200.0)"


def test_is_usable_where_a_time_function_is_expected() -> None:
    clock = VirtualClock(5.0)
    read: list[float] = []

    def consumer(now: object) -> None:
        assert callable(now)
        read.append(now())  # type: ignore[operator]

    consumer(clock)
    assert read == [5.0]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.advance(-1), "seconds: must be a finite number >= 0, got -"),
        (lambda c: c.advance(math.nan), "seconds: must be a finite number >= 0, got "),
        (lambda c: c.advance(math.inf), "seconds: must be a finite number >= 0, got "),
        (lambda c: c.advance("1"), "seconds: must be a finite number >= 0, got "),
        (lambda c: c.advance(True), "seconds: must be a finite number >= 0, got "),
        (lambda c: c.sleep(-0.1), "seconds: must be a finite number >= 0, got -"),
        (lambda c: c.set(9.0), "t: 9.0 is earlier than the clock's time 10.0"),
        (lambda c: c.set(None), "t: must be a finite number, got None"),
    ],
)
def test_bad_moves_are_refused_and_change_nothing(call: object, message: str) -> None:
    clock = VirtualClock(10.0)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(clock)  # type: ignore[operator]
    assert clock() == 10.0


def test_bad_start_is_refused() -> None:
    with pytest.raises(ValueError, match="start: must be a finite number, got "):
        VirtualClock(math.inf)
    with pytest.raises(ValueError, match="start: must be a finite number, got "):
        VirtualClock("now")  # type: ignore[arg-type]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), max_size=20))
def test_time_never_goes_backwards(steps: list[float]) -> None:
    clock = VirtualClock(0.0)
    seen = [clock()]
    for step in steps:
        clock.advance(step)
        seen.append(clock())
    assert seen == sorted(seen)
    assert seen[-1] == pytest.approx(math.fsum(steps), rel=1e-12, abs=1e-9)


def test_the_wall_clock_reads_and_sleeps_real_time() -> None:
    before = time.time()
    WALL.sleep(0.01)
    assert WALL() - before >= 0.01
