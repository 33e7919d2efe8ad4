"""Clocks: the wall clock, a VirtualClock that moves only when told, never backwards, and the
OffsetClock a development chain runs on."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.clock import DEFAULT_START, WALL, OffsetClock, VirtualClock


def test_starts_at_the_default_and_reads_the_same_until_moved() -> None:
    clock = VirtualClock()
    assert clock.now() == DEFAULT_START == 1_760_000_000.0
    time.sleep(0.01)
    assert clock() == clock.now() == DEFAULT_START


def test_advance_sleep_and_set_move_forward() -> None:
    clock = VirtualClock(100)
    assert clock.advance(2.5) == 102.5
    clock.sleep(0.5)  # returns nothing: a drop-in for time.sleep
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
        read.append(now())

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


def test_an_offset_clock_runs_ahead_of_the_clock_it_wraps() -> None:
    base = VirtualClock(1_000.0)
    clock = OffsetClock(base)
    clock.offset += 30
    assert (clock(), clock.now()) == (1_030.0, 1_030.0)
    clock.sleep(5)  # waits on the wrapped clock, which a virtual clock does by moving
    assert (base(), clock()) == (1_005.0, 1_035.0)
    saved = clock.save()
    clock.offset += 100
    clock.restore(saved)
    assert clock() == 1_035.0


def test_an_offset_clock_refuses_what_is_not_a_clock() -> None:
    with pytest.raises(TypeError, match="clock: must be a callable returning seconds"):
        OffsetClock(1_000.0)  # type: ignore[arg-type]


def test_the_simulated_chains_and_the_service_share_one_clock_type() -> None:
    from toolkit.server.service import Service
    from toolkit.testing import embedded_service

    with embedded_service("single-pool") as svc:
        service = svc.app.state.service  # type: ignore[attr-defined]
        assert isinstance(service, Service) and isinstance(service, OffsetClock)
        assert service.rpc.clock is service
        before = service()
        answer = service.rpc.handle(
            8453, {"jsonrpc": "2.0", "id": 1, "method": "evm_increaseTime", "params": [60]}
        )
        assert answer["result"] == "0x3c" and service.offset == 60.0
        assert service() == pytest.approx(before + 60.0)
