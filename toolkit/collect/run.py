"""What every collector shares: a run in the store, a progress bar, batching, Ctrl-C, resume.

A collection is a *run* (``collection_runs``): started with the collector's parameters and the
target URL (never credentials), then ``completed``, ``interrupted`` (Ctrl-C) or ``failed`` (an
error, which is re-raised after the run is closed). On Ctrl-C the collector stops cleanly: the
rows already read are written, the run is marked ``interrupted`` and :meth:`Collector.run`
*returns* its :class:`RunResult` (so a notebook cell or the CLI can print the run id to resume)
instead of raising. ``run(resume=run_id)`` continues an interrupted or failed run with the
parameters it was started with.

A run in which every request failed ends ``failed`` with :class:`CollectionFailed` naming the
first error, whichever collector ran it: collectors :meth:`~BaseCollector.note` the requests
whose errors they keep as observations (a refused quote, a missing pool), and a request error
(``request_errors``) raised before anything answered — in the collection or while planning it —
ends the run the same way (the error is its ``__cause__``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx

from toolkit.arguments import whole
from toolkit.client import ServiceClient, ServiceError, Unauthorized
from toolkit.collect.prices import record_scenario
from toolkit.collect.rows import utc
from toolkit.collect.writer import BatchWriter
from toolkit.errors import ToolkitError
from toolkit.progress import progress_bar
from toolkit.scenario import Scenario
from toolkit.store import Recording, Store

__all__ = [
    "BaseCollector",
    "CollectionFailed",
    "Collector",
    "Progress",
    "RunResult",
    "rows_in_run",
]


class CollectionFailed(ToolkitError, RuntimeError):
    """Every request of a run failed: the run is recorded ``failed``; the message is the
    first error, and ``__cause__`` the error raised, when the run stopped on one."""


class _Unanswered(Exception):
    """Raised inside the recording when nothing answered, so the run is recorded ``failed``;
    ``error`` is the request error that stopped the run, if one did."""

    def __init__(self, error: BaseException | None = None) -> None:
        super().__init__()
        self.error = error


_BY_RUN = (
    "credit_protocol",
    "credit_accounts",
    "credit_operators",
    "credit_topup_configs",
    "credit_collateral",
    "rfq_observations",
    "transactions",
    "borrow_quotes",
    "liquidity_events",
    "chain_blocks",
    "chain_logs",
    "token_transfers",
    "token_approvals",
    "weth_flows",
    "swap_routes",
    "swap_route_legs",
    "amm_pools",
    "pool_swaps",
    "pool_liquidity",
    "pool_syncs",
    "pool_flashes",
    "nft_transfers",
    "escrow_events",
    "escrow_order_legs",
    "output_fills",
)
_BY_SNAPSHOT = (
    "token_snapshots",
    "pool_snapshots",
    "fee_tiers",
    "amm_pool_snapshots",
    "amm_pool_ticks",
)

Progress = Any
"""The progress bar handed to :meth:`Collector._collect` (a ``tqdm.auto`` bar)."""


@dataclass(frozen=True)
class RunResult:
    """The outcome of one :meth:`Collector.run` call.

    ``rows_written`` counts the rows this call inserted; ``total_rows`` every row stored under
    the run (resumed runs included); ``by_table`` splits ``rows_written`` by table.
    """

    run_id: str
    kind: str
    status: str
    rows_written: int
    total_rows: int
    target_url: str
    db_path: str
    by_table: Mapping[str, int]

    def summary(self) -> str:
        """One line for a terminal.

        >>> RunResult("r1", "rfq", "completed", 5, 5, "http://h", ":memory:", {}).summary()
        'rfq run r1 completed: 5 rows written (5 in the run) to :memory:'
        """
        return (
            f"{self.kind} run {self.run_id} {self.status}: {self.rows_written} rows written "
            f"({self.total_rows} in the run) to {self.db_path}"
        )


def rows_in_run(store: Store, run_id: str) -> int:
    """Rows stored under ``run_id``: by ``run_id``, and by ``snapshot_id`` for the snapshot
    tables (``run_id`` itself, or ``run_id:...`` for snapshots taken from the event stream).

    >>> rows_in_run(Store(":memory:"), "r1")
    0
    """
    parts = [f"SELECT count(*) AS n FROM {t} WHERE run_id = $run" for t in _BY_RUN]
    parts += [
        f"SELECT count(*) AS n FROM {t} "
        f"WHERE snapshot_id = $run OR starts_with(snapshot_id, $prefix)"
        for t in _BY_SNAPSHOT
    ]
    frame = store.query(
        f"SELECT sum(n)::BIGINT AS n FROM ({' UNION ALL '.join(parts)})",
        {"run": run_id, "prefix": run_id + ":"},
    )
    value = frame["n"][0]
    return int(value) if value is not None else 0


class BaseCollector:
    """The run machinery every collector shares, whatever it reads from: the store, the
    progress bar, batched writes, Ctrl-C and resume. Subclasses define ``kind``, the
    :meth:`target_url` recorded with the run, the plan and the collection loop.
    ``progress=False`` hides the bar; rows are written in batches of ``batch_size``.
    """

    kind: ClassVar[str] = ""
    unit: ClassVar[str] = "request"
    #: Errors of a request to the target (not of the caller's input): raised before anything
    #: answered, they end the run as :class:`CollectionFailed`. Unauthorized is left as it is:
    #: the caller names the key to set.
    request_errors: ClassVar[tuple[type[Exception], ...]] = (ServiceError, httpx.HTTPError)

    def __init__(self, store: Store, *, progress: bool = True, batch_size: int = 500) -> None:
        if not isinstance(store, Store):
            raise ValueError("store: must be a toolkit.store.Store")
        self.store = store
        self.progress = bool(progress)
        self.batch_size = whole(batch_size, "batch_size", minimum=1)
        self._answered = 0
        self._first_error: str | None = None

    def note(self, ok: bool, error: str | None = None) -> None:
        """Count one request's outcome: a run in which every request failed ends ``failed``
        (:class:`CollectionFailed` with the first error) rather than ``completed``. Collectors
        note the requests whose errors they swallow (a refused quote, a missing pool) and
        at least one answered request of those that raise."""
        if ok:
            self._answered += 1
        elif self._first_error is None:
            self._first_error = error or "no answer"

    def target_url(self) -> str:
        """The URL the run records as its target (never with credentials)."""
        raise TypeError(f"{type(self).__name__} does not define its target")

    # -- to override ---------------------------------------------------------------------

    def parameters(self) -> dict[str, Any]:
        """The run's parameters as JSON-ready data (enough to resume it)."""
        raise TypeError(f"{type(self).__name__} does not define its parameters")

    def restore(self, parameters: Mapping[str, Any]) -> None:
        """Take back the parameters of a run being resumed."""
        raise TypeError(f"{type(self).__name__} cannot resume runs")

    def rows_in(self, run_id: str, writer: BatchWriter) -> int:
        """The rows the run has stored, recorded with it (:func:`rows_in_run`; a collector
        whose tables carry no run id counts what its writer wrote)."""
        return rows_in_run(self.store, run_id)

    def prepare(self) -> None:
        """Work before a new run is recorded (e.g. discover the grid); errors leave no run."""

    def scenario(self) -> Scenario | None:
        """The scenario of a simulated (embedded) target, whose prices the run stores with
        source ``scenario``; None for a served or real target."""
        return None

    def total(self) -> int | None:
        """Units of work for the progress bar, or None when open-ended."""
        return None

    def collect(self, run_id: str, writer: BatchWriter, bar: Progress, resumed: bool) -> None:
        """The collection loop."""
        raise TypeError(f"{type(self).__name__} does not define its collection")

    # -- the run -------------------------------------------------------------------------

    def run(self, *, resume: str | None = None) -> RunResult:
        """Collect into the store as a new run, or continue run ``resume``.

        Returns the :class:`RunResult` (also after Ctrl-C, with status ``interrupted``);
        any other error marks the run ``failed`` and is raised.
        """
        self._start(resume)
        writer = BatchWriter(self.store, batch_size=self.batch_size)
        recording = self.store.recording(
            self.kind,
            self.parameters(),
            self.target_url(),
            resume=resume,
            count_rows=lambda run_id: self.rows_in(run_id, writer),
        )
        run: Recording | None = None
        try:
            with recording as run:
                scenario = self.scenario()
                if scenario is not None:
                    clock = getattr(self, "clock", None)
                    at = utc(clock() if clock is not None else time.time())
                    record_scenario(self.store, scenario, at)
                bar = progress_bar(
                    total=self.total(),
                    desc=f"{self.kind} {run.run_id[:8]}",
                    unit=self.unit,
                    enabled=self.progress,
                )
                try:
                    self.collect(run.run_id, writer, bar, resume is not None)
                except self.request_errors as exc:
                    if self._answered or isinstance(exc, Unauthorized):
                        raise
                    self.note(False, str(exc))
                    raise _Unanswered(exc) from exc
                finally:
                    bar.close()
                    writer.flush()
                if self._answered == 0 and self._first_error is not None:
                    raise _Unanswered()
        except _Unanswered as stop:
            raise CollectionFailed(self._first_error) from stop.error
        except KeyboardInterrupt:
            if run is None:  # interrupted before the run was recorded: nothing to return
                raise
            # recorded as interrupted, with every row read so far written
        return self._result(run, writer)

    def _start(self, resume: str | None) -> None:
        """Plan a new run (a first request that fails is recorded as a failed run), or restore
        the plan of the run to resume."""
        if resume is None:
            try:
                self.prepare()
            except self.request_errors as exc:
                if isinstance(exc, Unauthorized):
                    raise
                self._record_unanswered(exc)
            return
        record = self.store.run_record(resume)
        if record["kind"] != self.kind:
            raise ValueError(
                f"resume: run {resume} is a {record['kind']} run, not a {self.kind} run"
            )
        self.restore(record["parameters"])

    def _result(self, run: Recording, writer: BatchWriter) -> RunResult:
        record = self.store.run_record(run.run_id)
        path = self.store.path
        return RunResult(
            run_id=run.run_id,
            kind=self.kind,
            status=run.status,
            rows_written=writer.written,
            total_rows=int(record["rows_written"] or 0),
            target_url=str(record["target_url"]),
            db_path=":memory:" if path is None else str(path),
            by_table=dict(writer.by_table),
        )

    def _record_unanswered(self, exc: Exception) -> None:
        """Record a run that failed before its plan was known (its first request failed):
        ``failed`` with the parameters known so far, then :class:`CollectionFailed`."""
        try:
            parameters = self.parameters()
        except (AssertionError, TypeError, ValueError, AttributeError):
            parameters = {}
        self.note(False, str(exc))
        try:
            with self.store.recording(self.kind, parameters, self.target_url()):
                raise _Unanswered(exc) from exc
        except _Unanswered:
            raise CollectionFailed(self._first_error) from exc


class Collector(BaseCollector):
    """Base of the collectors of the service: subclasses define ``kind``, the plan and the
    collection loop.

    Time is the client's: collectors read ``client.clock`` (observation times, round pacing,
    deadlines) and sleep on it, so on an embedded service with a virtual clock a sweep with a
    15 s interval takes no wall time. ``progress=False`` hides the bar; rows are written in
    batches of ``batch_size``.
    """

    def __init__(
        self,
        client: ServiceClient,
        store: Store,
        *,
        progress: bool = True,
        batch_size: int = 500,
    ) -> None:
        if not isinstance(client, ServiceClient):
            raise ValueError("client: must be a toolkit.client.ServiceClient")
        super().__init__(store, progress=progress, batch_size=batch_size)
        self.client = client
        self.clock = client.clock

    def __repr__(self) -> str:
        return f"{type(self).__name__}(client={self.client!r}, store={self.store!r})"

    def target_url(self) -> str:
        return self.client.base_url

    def scenario(self) -> Scenario | None:
        embedded = self.client.embedded
        return None if embedded is None else embedded.scenario
