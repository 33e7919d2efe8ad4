"""The runs a Store records, defined once: start, finish, resume, the :meth:`RunLog.recording`
block that does all three, and the reads of the ``runs`` table (:mod:`toolkit.store.runs` holds
the SQL; :class:`~toolkit.store.Store` takes these methods from :class:`RunLog`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
import polars as pl

from toolkit.store import runs

__all__ = ["Recording", "RunLog"]


@dataclass
class Recording:
    """The run a :meth:`Store.recording` block records: its ``run_id``, and its ``status`` once
    the block has ended (``running`` inside it)."""

    run_id: str
    status: str = "running"


class RunLog:
    """The run methods of :class:`~toolkit.store.Store`, on its lock and connection."""

    # The Store provides these: the connection of one call, under the file's lock
    # (``_writing`` refuses a read-only store).
    _connected: Callable[[], contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]]
    _writing: Callable[[], contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]]

    def start_run(
        self,
        kind: str,
        parameters: Mapping[str, Any],
        target_url: str,
        *,
        run_id: str | None = None,
        started_at: datetime | None = None,
        target_kind: str | None = None,
    ) -> str:
        """Record a new run (status ``running``) and return its id, a uuid4 unless given.

        ``kind`` is one of rfq, borrow, liquidity, snapshot, backtest, chain. ``parameters`` is
        stored as JSON; secret-looking keys are refused and URLs inside are stripped of
        credentials. ``target_url`` is stored as :func:`toolkit.urls.redact_url` shows it.

        Example:
            >>> from toolkit.store import Store
            >>> store = Store(":memory:")
            >>> run = store.start_run("rfq", {"rounds": 2}, "https://u:p@host/x?apiKey=abc")
            >>> store.run_record(run)["target_url"]
            'https://host/x?apiKey=***'
        """
        with self._writing() as con:
            return runs.start_run(
                con,
                kind,
                parameters,
                target_url,
                run_id=run_id,
                started_at=started_at,
                target_kind=target_kind,
            )

    def finish_run(
        self,
        run_id: str,
        status: str,
        rows_written: int | None = None,
        *,
        ended_at: datetime | None = None,
    ) -> None:
        """Close a running run as completed, interrupted or failed.

        ``rows_written`` defaults to the rows stored under ``run_id`` across all tables.

        Example:
            >>> from toolkit.store import Store
            >>> store = Store(":memory:")
            >>> run = store.start_run("snapshot", {}, "https://host/api")
            >>> store.finish_run(run, "completed")
            >>> store.run_record(run)["rows_written"]
            0
        """
        with self._writing() as con:
            runs.finish_run(con, run_id, status, rows_written, ended_at=ended_at)

    def resume_run(self, run_id: str) -> None:
        """Set an interrupted or failed run back to running; a completed run is refused.

        Example:
            >>> from toolkit.store import Store
            >>> store = Store(":memory:")
            >>> run = store.start_run("rfq", {}, "https://host/api")
            >>> store.finish_run(run, "interrupted"); store.resume_run(run)
            >>> store.run_record(run)["status"]
            'running'
        """
        with self._writing() as con:
            runs.resume_run(con, run_id)

    @contextlib.contextmanager
    def recording(
        self,
        kind: str,
        parameters: Mapping[str, Any],
        target_url: str,
        *,
        resume: str | None = None,
        run_id: str | None = None,
        started_at: datetime | None = None,
        count_rows: Callable[[str], int] | None = None,
        target_kind: str | None = None,
    ) -> Iterator[Recording]:
        """The lifecycle of a run, defined once: the block's work is recorded as one run.

        A new run starts (``running``), or the interrupted or failed run ``resume`` continues.
        The run ends ``completed`` when the block ends normally, ``interrupted`` on Ctrl-C and
        ``failed`` on any other error; either is re-raised after the run is closed.
        ``rows_written`` is ``count_rows(run_id)`` when given, else the rows stored under the
        run id across all tables.

        Example:
            >>> from toolkit.store import Store
            >>> store = Store(":memory:")
            >>> with store.recording("backtest", {"hours": 1}, "backtest://default") as run:
            ...     pass
            >>> run.status, store.run_record(run.run_id)["status"]
            ('completed', 'completed')
            >>> with store.recording("snapshot", {}, "https://host/api") as run:
            ...     raise RuntimeError("boom")
            Traceback (most recent call last):
            ...
            RuntimeError: boom
            >>> run.status
            'failed'
        """
        if resume is None:
            new_id = self.start_run(
                kind,
                parameters,
                target_url,
                run_id=run_id,
                started_at=started_at,
                target_kind=target_kind,
            )
        else:
            self.resume_run(resume)
            new_id = resume
        recording = Recording(new_id)
        status = "failed"
        try:
            yield recording
            status = "completed"
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            recording.status = status
            with self._writing():  # the count and the close in one open of the file
                rows = None if count_rows is None else count_rows(new_id)
                self.finish_run(new_id, status, rows)

    def run_record(self, run_id: str) -> dict[str, Any]:
        """One run as a dict (``parameters`` decoded); an unknown id raises ``StoreError``.

        Example:
            >>> from toolkit.store import Store
            >>> store = Store(":memory:")
            >>> store.run_record(store.start_run("rfq", {"rounds": 1}, "https://h/"))["parameters"]
            {'rounds': 1}
        """
        with self._connected() as con:
            return runs.get_run(con, run_id)

    def runs(self, kind: str | None = None) -> pl.DataFrame:
        """All runs, or those of one ``kind``, oldest first.

        Example:
            >>> from toolkit.store import Store
            >>> Store(":memory:").runs().columns[:3]
            ['run_id', 'kind', 'parameters']
        """
        with self._connected() as con:
            return runs.list_runs(con, kind)

    def attempt_ids(self, run_id: str, table: str = "rfq_observations") -> set[str]:
        """Attempt ids stored for ``run_id`` in ``table``: what a resumed sweep skips.

        Example:
            >>> from toolkit.store import Store
            >>> Store(":memory:").attempt_ids("run-1", "borrow_quotes")
            set()
        """
        with self._connected() as con:
            return runs.attempt_ids(con, run_id, table)

    def last_event_id(self, source: str) -> int | None:
        """The highest liquidity event id stored for ``source`` (send as ``Last-Event-ID``).

        Example:
            >>> from toolkit.store import Store
            >>> Store(":memory:").last_event_id("https://host/stream") is None
            True
        """
        with self._connected() as con:
            return runs.last_event_id(con, source)
