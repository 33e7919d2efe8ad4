"""Following for ever: one loop runs every follower (``--follow``, ``toolkit watch``).

**The follower protocol.** A follower is an object with

- ``name`` (unique in a database: its row in ``collector_status``) and ``every_s`` (its
  cadence: seconds between the starts of two polls);
- ``status``: a :class:`FollowStatus` it keeps current (the loop writes it to
  ``collector_status`` after every poll, so ``toolkit status`` reads it from any process);
- ``start()``: record (or resume) its run and plan its first read; errors leave no follower;
- ``poll(now) -> bool``: **one step that reads and flushes once** (``now``: Unix seconds), True
  when it is behind and wants the next poll at once (a chain far from its head);
- ``stop(state)``: flush what is buffered and close its run (``state``: ``interrupted`` after a
  signal, ``failed`` after an error it cannot get past).

A new kind of follower (a health-factor watch, say) implements these five names and nothing
else; :class:`RunFollower` gives them to any follower that records a collection run. The loop
(:func:`follow`) calls ``poll`` when a follower is due; a poll that raises a *transient* error
(a request or node error, a busy database: :func:`transient`) is counted in the status and
retried after a backoff, its rows kept in the writer's buffer; any other error stops that
follower (``failed``) and the others go on. ``stop_event`` ends the loop between polls: each
follower flushes and records its run, and the loop returns.

Events go to the ``toolkit.follow`` logger, one record per event with its fields in
``record.fields`` (the CLI prints them as JSON lines with ``--log-json``).
"""

from __future__ import annotations

import logging
import math
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

import httpx
from web3.exceptions import Web3Exception

from toolkit.client import Unauthorized
from toolkit.collect.prices import record_scenario
from toolkit.collect.rows import utc
from toolkit.collect.run import BaseCollector
from toolkit.collect.writer import BatchWriter
from toolkit.errors import CapacityError, ChainError, HttpError, InputError
from toolkit.store import Store, StoreBusy
from toolkit.urls import redact_url

__all__ = [
    "LOGGER",
    "STATUS_EVERY_S",
    "FollowStatus",
    "Follower",
    "RunFollower",
    "follow",
    "log_event",
    "transient",
]

#: The logger of every follower event (``record.fields``: the event's fields).
LOGGER = logging.getLogger("toolkit.follow")
_LONGEST_BACKOFF_S = 60.0
_RATE_WINDOW_S = 60.0
#: A follower's status row is written at most this often (and at every error, start, stop):
#: each write opens the database file, which a fast cadence would otherwise do twice a poll.
STATUS_EVERY_S = 1.0


def log_event(event: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log one follower event: ``event`` and its fields (URLs already redacted by the caller).

    >>> log_event("start", follower="chain:1")
    """
    LOGGER.log(level, event, extra={"fields": {"event": event, **fields}})


def transient(exc: BaseException) -> bool:
    """Whether a poll that raised ``exc`` may succeed later: a request, node or database busy
    error (retried with backoff), not a rejected key, bad input or a bug (the follower stops).

    >>> transient(StoreBusy("busy")), transient(InputError("chain: bad"))
    (True, False)
    """
    if isinstance(exc, Unauthorized | InputError):
        return False
    kinds = (StoreBusy, httpx.HTTPError, HttpError, ChainError, CapacityError, Web3Exception)
    return isinstance(exc, (*kinds, OSError, TimeoutError))


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class FollowStatus:
    """What a follower is doing, as ``collector_status`` holds it (one row per ``name``)."""

    name: str
    kind: str
    target_url: str
    every_s: float
    run_id: str | None = None
    state: str = "running"
    started_at: datetime = field(default_factory=_now)
    last_flush_at: datetime | None = None
    head_block: int | None = None
    stored_block: int | None = None
    lag_s: float | None = None
    polls: int = 0
    rows_written: int = 0
    errors: int = 0
    last_error: str | None = None
    last_error_at: datetime | None = None
    reorgs: int = 0
    _recent: deque[tuple[float, int]] = field(default_factory=deque, repr=False)

    def flushed(self, rows: int) -> None:
        """Count a flush of ``rows`` rows (the rate is over the last minute)."""
        at = time.monotonic()
        self.last_flush_at = _now()
        self.rows_written += rows
        self._recent.append((at, rows))
        while self._recent and at - self._recent[0][0] > _RATE_WINDOW_S:
            self._recent.popleft()

    def failed(self, exc: BaseException) -> None:
        """Count an error; its message (never a secret: errors name redacted URLs) is kept."""
        self.errors += 1
        self.last_error = f"{type(exc).__name__}: {exc}"[:500]
        self.last_error_at = _now()

    def rows_per_s(self) -> float | None:
        """Rows written per second over the last minute (None before two flushes)."""
        if len(self._recent) < 2:
            return None
        span = self._recent[-1][0] - self._recent[0][0]
        return sum(rows for _, rows in list(self._recent)[1:]) / span if span > 0 else None

    def row(self) -> dict[str, Any]:
        """The ``collector_status`` row.

        >>> FollowStatus("chain:1", "chain", "http://u:p@node:8545", 2.0).row()["target_url"]
        'http://node:8545'
        """
        lag = None
        if self.head_block is not None and self.stored_block is not None:
            lag = max(0, self.head_block - self.stored_block)
        return {
            "name": self.name, "kind": self.kind, "run_id": self.run_id,
            "target_url": redact_url(self.target_url), "state": self.state,
            "pid": os.getpid(), "host": socket.gethostname(), "every_s": self.every_s,
            "started_at": self.started_at, "updated_at": _now(),
            "last_flush_at": self.last_flush_at, "head_block": self.head_block,
            "stored_block": self.stored_block, "lag_blocks": lag, "lag_s": self.lag_s,
            "polls": self.polls, "rows_written": self.rows_written,
            "rows_per_s": self.rows_per_s(), "errors": self.errors,
            "last_error": self.last_error, "last_error_at": self.last_error_at,
            "reorgs": self.reorgs,
        }  # fmt: skip


@runtime_checkable
class Follower(Protocol):
    """The follower protocol (module docstring)."""

    name: str
    every_s: float
    status: FollowStatus

    def start(self) -> None: ...

    def poll(self, now: float) -> bool: ...

    def stop(self, state: str) -> None: ...


class RunFollower:
    """A follower whose polls are a collection run: the run is recorded at ``start`` (or the
    run ``resume`` continued), each poll's rows go through one :class:`BatchWriter` flushed once
    at the end of the poll, and ``stop`` flushes and closes the run. Subclasses define
    :meth:`begin` (plan the first read, ``resumed`` or not) and :meth:`step` (one read)."""

    def __init__(
        self,
        collector: BaseCollector,
        *,
        every_s: float,
        name: str | None = None,
        resume: str | None = None,
    ) -> None:
        if not every_s > 0:
            raise InputError(f"every_s: must be above 0, got {every_s}", field="every_s")
        self.collector = collector
        self.store: Store = collector.store
        self.every_s = float(every_s)
        self.name = name or collector.kind
        self.resume = resume
        self.writer = BatchWriter(self.store, batch_size=10**9, flush_s=10**9)
        self.status = FollowStatus(self.name, collector.kind, collector.target_url(), every_s)

    @property
    def run_id(self) -> str:
        """The run this follower records (set by :meth:`start`)."""
        if self.status.run_id is None:
            raise RuntimeError(f"{self.name}: not started")
        return self.status.run_id

    def parameters(self) -> dict[str, Any]:
        """The run's parameters: the collector's, marked as followed, with the cadence."""
        return self.collector.parameters() | {"follow": True, "every_s": self.every_s}

    def prepare(self) -> None:
        """Plan a new run (the collector's plan unless overridden)."""
        self.collector.prepare()

    def restore(self, parameters: Mapping[str, Any]) -> None:
        """Take back the parameters of the run being resumed."""
        self.collector.restore(parameters)

    def start(self) -> None:
        if self.resume is None:
            self.prepare()
            self.status.run_id = self.store.start_run(
                self.collector.kind, self.parameters(), self.collector.target_url()
            )
        else:
            record = self.store.run_record(self.resume)
            if record["kind"] != self.collector.kind:
                raise InputError(
                    f"resume: run {self.resume} is a {record['kind']} run, not a "
                    f"{self.collector.kind} run",
                    field="resume",
                )
            self.restore(record["parameters"])
            self.store.resume_run(self.resume)
            self.status.run_id = self.resume
        scenario = self.collector.scenario()
        if scenario is not None:  # a simulated target's prices, as a collector's run records
            clock = getattr(self.collector, "clock", time.time)
            record_scenario(self.store, scenario, utc(clock()))
        self.begin(resumed=self.resume is not None)
        log_event("start", follower=self.name, run_id=self.run_id, resumed=self.resume is not None)

    def begin(self, resumed: bool) -> None:
        """Plan the first read: where a resumed run left off, or where a new one starts."""

    def step(self, now: float) -> bool:
        """Read once into ``self.writer``; True when behind (poll again at once)."""
        raise TypeError(f"{type(self).__name__} does not define its step")

    def flush(self) -> int:
        """Write the poll's rows, with what the subclass checks before and records after them,
        in one session (the database file opened once a poll)."""
        with self.store.session():
            self.before_flush()
            rows = self.writer.flush()
            self.after_flush()
        return rows

    def before_flush(self) -> None:
        """Checks against the store before the poll's rows go in (stale rows to replace)."""

    def after_flush(self) -> None:
        """Writes that must follow the poll's rows (a range's record, finality)."""

    def poll(self, now: float) -> bool:
        behind = self.step(now)
        rows = self.flush()
        self.status.flushed(rows)
        return behind

    def stop(self, state: str) -> None:
        try:
            self.flush()
        finally:
            rows = self.collector.rows_in(self.run_id, self.writer)
            self.store.finish_run(self.run_id, state, rows)
            self.status.state = "failed" if state == "failed" else "stopped"
            log_event("stop", follower=self.name, run_id=self.run_id, state=state, rows=rows)


def _record(store: Store, follower: Follower, recorded: dict[str, float] | None = None) -> None:
    """Write ``follower``'s status; with ``recorded`` (name → when last written), at most every
    :data:`STATUS_EVERY_S` seconds."""
    now = time.monotonic()
    if recorded is not None:
        if now - recorded.get(follower.name, -math.inf) < STATUS_EVERY_S:
            return
        recorded[follower.name] = now
    try:
        store.record_status(follower.status.row())
    except StoreBusy as exc:  # the next poll records it; the rows are what matters
        log_event("status_skipped", logging.WARNING, follower=follower.name, error=str(exc))


def _poll(
    store: Store, follower: Follower, failures: dict[str, int], recorded: dict[str, float]
) -> float | None:
    """Poll ``follower`` once; the seconds until its next poll, or None when it stopped."""
    started = time.monotonic()
    before = follower.status.rows_written
    try:
        behind = follower.poll(time.time())
    except Exception as exc:  # classified: transient ones retried, the rest stop it
        follower.status.failed(exc)
        fields = {"follower": follower.name, "error": follower.status.last_error}
        if not transient(exc):
            log_event("failed", logging.ERROR, **fields)
            follower.stop("failed")
            _record(store, follower)
            return None
        failures[follower.name] = failures.get(follower.name, 0) + 1
        delay = min(2.0 ** failures[follower.name], _LONGEST_BACKOFF_S)
        log_event("error", logging.WARNING, retry_in_s=delay, **fields)
        _record(store, follower)
        return delay
    failures.pop(follower.name, None)
    status = follower.status
    status.polls += 1
    _record(store, follower, recorded)
    written = status.rows_written - before
    log_event(
        "poll", logging.INFO if written else logging.DEBUG, follower=follower.name,
        rows=written, head=status.head_block, stored=status.stored_block, lag_s=status.lag_s,
        behind=behind,
    )  # fmt: skip
    if behind:
        return 0.0
    return max(0.0, follower.every_s - (time.monotonic() - started))


def follow(
    store: Store, followers: Sequence[Follower], stop_event: threading.Event
) -> Mapping[str, str]:
    """Run ``followers`` until ``stop_event`` is set or none is left; return each one's final
    state (``stopped`` or ``failed``). Each is started first (an error there propagates,
    after the ones already started are stopped).

    >>> follow(Store(":memory:"), [], threading.Event())
    {}
    """
    names = [f.name for f in followers]
    if len(set(names)) != len(names):
        raise InputError(f"followers: names must be unique, got {names}", field="name")
    started: list[Follower] = []
    try:
        for follower in followers:
            follower.start()
            started.append(follower)
            _record(store, follower)
    except BaseException:
        _stop_all(store, started, "failed")
        raise
    due = {f.name: time.monotonic() for f in started}
    running = list(started)
    failures: dict[str, int] = {}
    recorded: dict[str, float] = {}
    try:
        while running and not stop_event.is_set():
            follower = min(running, key=lambda f: due[f.name])
            wait = due[follower.name] - time.monotonic()
            if wait > 0:
                stop_event.wait(wait)
                continue
            delay = _poll(store, follower, failures, recorded)
            if delay is None:
                running.remove(follower)
            else:
                due[follower.name] = time.monotonic() + delay
    finally:
        _stop_all(store, running, "interrupted")
    return {f.name: f.status.state for f in started}


def _stop_all(store: Store, followers: Sequence[Follower], state: str) -> None:
    """Stop each follower (flush, close its run), even when one of them fails to."""
    errors: list[BaseException] = []
    for follower in followers:
        try:
            follower.stop(state)
        except Exception as exc:  # the others still stop; the first is raised
            follower.status.failed(exc)
            errors.append(exc)
        _record(store, follower)
    if errors:
        raise errors[0]
