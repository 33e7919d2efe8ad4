"""The follow loop: cadences, transient errors retried with the rows kept, a follower that
cannot go on stopped while the others continue, the stop event, and the status rows."""

from __future__ import annotations

import threading
import time
from typing import Any

import polars as pl
import pytest

from toolkit.collect.follow import Follower, FollowStatus, follow, transient
from toolkit.collect.writer import BatchWriter
from toolkit.errors import InputError
from toolkit.store import Store, StoreBusy, polars_schema


class Fake:
    """A follower of the protocol whose polls run ``script`` (an exception raises)."""

    def __init__(self, name: str, every_s: float, script: list[Any], stop_after: int = 0) -> None:
        self.name, self.every_s = name, every_s
        self.status = FollowStatus(name, "chain", "http://u:secret@node:8545", every_s)
        self.script = list(script)
        self.polls: list[float] = []
        self.stopped: str | None = None
        self.started = False

    def start(self) -> None:
        self.started = True
        self.status.run_id = f"run-{self.name}"

    def poll(self, now: float) -> bool:
        self.polls.append(time.monotonic())
        step = self.script.pop(0) if self.script else None
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, threading.Event):
            step.set()
        self.status.flushed(1)
        return False

    def stop(self, state: str) -> None:
        self.stopped = state
        self.status.state = "failed" if state == "failed" else "stopped"


def _run(store: Store, followers: list[Any], seconds: float) -> dict[str, str]:
    stop = threading.Event()
    timer = threading.Timer(seconds, stop.set)
    timer.start()
    try:
        return dict(follow(store, followers, stop))
    finally:
        timer.cancel()


def test_fakes_follow_the_protocol() -> None:
    assert isinstance(Fake("a", 1.0, []), Follower)


def test_each_follower_polls_on_its_cadence_and_records_its_status() -> None:
    store = Store(":memory:")
    fast, slow = Fake("fast", 0.1, []), Fake("slow", 0.5, [])
    states = _run(store, [fast, slow], 1.2)
    assert states == {"fast": "stopped", "slow": "stopped"}
    assert 8 <= len(fast.polls) <= 14
    assert 2 <= len(slow.polls) <= 4
    assert fast.stopped == slow.stopped == "interrupted"
    rows = {r["name"]: r for r in store.statuses().iter_rows(named=True)}
    assert rows["fast"]["polls"] == len(fast.polls)
    assert rows["fast"]["state"] == "stopped"
    assert rows["fast"]["target_url"] == "http://node:8545"  # never the password


def test_a_transient_error_is_retried_after_a_backoff_and_counted() -> None:
    store = Store(":memory:")
    flaky = Fake("flaky", 0.05, [StoreBusy("the database is locked"), None, None])
    _run(store, [flaky], 2.6)
    assert len(flaky.polls) >= 3
    assert flaky.polls[1] - flaky.polls[0] >= 1.9  # backoff 2 s after the first failure
    row = store.statuses().row(0, named=True)
    assert row["errors"] == 1
    assert row["last_error"] == "StoreBusy: the database is locked"
    assert row["state"] == "stopped"


def test_a_follower_that_cannot_go_on_stops_and_the_others_continue() -> None:
    store = Store(":memory:")
    broken = Fake("broken", 0.05, [InputError("events: unknown")])
    healthy = Fake("healthy", 0.05, [])
    states = _run(store, [broken, healthy], 0.6)
    assert states == {"broken": "failed", "healthy": "stopped"}
    assert broken.stopped == "failed" and len(broken.polls) == 1
    assert len(healthy.polls) >= 5
    assert store.statuses().filter(pl.col("name") == "broken")["state"].to_list() == ["failed"]


def test_the_stop_event_ends_the_loop_between_polls() -> None:
    store = Store(":memory:")
    stop = threading.Event()
    slowpoke = Fake("slow", 30.0, [])
    trigger = Fake("trigger", 0.05, [None, stop])  # its second poll sets the stop event
    started = time.monotonic()
    follow(store, [slowpoke, trigger], stop)
    assert time.monotonic() - started < 2
    assert slowpoke.stopped == trigger.stopped == "interrupted"


def test_names_must_be_unique_and_a_start_failure_stops_the_started() -> None:
    store = Store(":memory:")
    with pytest.raises(InputError, match="names must be unique"):
        follow(store, [Fake("a", 1, []), Fake("a", 1, [])], threading.Event())
    first = Fake("first", 1, [])
    second = Fake("second", 1, [])
    second.start = lambda: (_ for _ in ()).throw(InputError("chain: no node"))  # type: ignore[method-assign]
    with pytest.raises(InputError, match="no node"):
        follow(store, [first, second], threading.Event())
    assert first.stopped == "failed"


def test_transient_errors_are_the_ones_a_later_poll_may_get_past() -> None:
    import httpx

    from toolkit.client import Unauthorized
    from toolkit.collect.rpc import RpcFailure

    assert transient(httpx.ConnectError("refused"))
    assert transient(RpcFailure("eth_getLogs", -32000, "header not found"))
    assert not transient(Unauthorized("401", status=401))
    assert not transient(ValueError("bug"))


def test_a_busy_store_keeps_the_rows_for_the_next_flush(monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(":memory:")
    writer = BatchWriter(store)
    rows = [
        {"run_id": "r", "chain": 1, "from_block": b, "to_block": b, "logs": 0} for b in range(3)
    ]
    writer.add("chain_ranges", rows)
    original = Store.append
    calls = iter([StoreBusy("busy")])

    def busy_once(self: Store, table: str, frame: pl.DataFrame) -> int:
        error = next(calls, None)
        if error is not None:
            raise error
        return original(self, table, frame)

    monkeypatch.setattr(Store, "append", busy_once)
    with pytest.raises(StoreBusy):
        writer.flush()
    assert writer.pending() == 3
    assert writer.flush() == 3
    assert store.table("chain_ranges").height == 3
    assert store.table("chain_ranges").schema == polars_schema("chain_ranges")
