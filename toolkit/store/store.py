"""The Store: one DuckDB file, migrated on open, written with idempotent Arrow appends.

Concurrency: a file Store holds the DuckDB file only while one call (or one :meth:`Store.session`)
reads or writes, so one process can write while others read (the why and the figures:
:mod:`toolkit.store`). Inside one process, Stores on the same file share one lock, so their
calls take turns and a Store may be shared between threads.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import duckdb
import polars as pl

from toolkit.store.connection import (
    DEFAULT_LOCK_TIMEOUT_S,
    MEMORY,
    connect,
    file_access,
    migrate,
    opened,
    resolve_path,
)
from toolkit.store.errors import StoreError
from toolkit.store.following import FollowLog
from toolkit.store.frames import conform, to_pandas, to_polars
from toolkit.store.plan import insert_plan
from toolkit.store.run_log import RunLog
from toolkit.store.schema import polars_schema, table_spec
from toolkit.store.sql import first_row, keyboard_interrupts, rollback

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Store"]


Params = list[Any] | Mapping[str, Any] | None


class Store(RunLog, FollowLog):
    """The toolkit's DuckDB database: schema, idempotent appends, runs and queries.

    ``path`` defaults to ``toolkit.duckdb`` in the data directory (``$TOOLKIT_DATA_DIR``, else
    ``./data``); ``":memory:"`` gives a
    private in-memory database (tests, notebooks). Opening applies pending migrations;
    ``read_only=True`` opens an existing, up-to-date database without writing to it.

    Example:
        >>> with Store(":memory:") as store:
        ...     run = store.start_run("snapshot", {"chains": [1]}, "https://host/api")
        ...     store.run_record(run)["status"]
        'running'
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        read_only: bool = False,
        lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S,
    ) -> None:
        self._path = resolve_path(path)
        self._where = MEMORY if self._path is None else str(self._path)
        self._read_only = bool(read_only)
        if isinstance(lock_timeout_s, bool) or not isinstance(lock_timeout_s, int | float):
            raise StoreError("lock_timeout_s: must be a number of seconds")
        if not 0 <= lock_timeout_s < float("inf"):
            raise StoreError(f"lock_timeout_s: must be >= 0 and finite, got {lock_timeout_s}")
        self._lock_timeout_s = float(lock_timeout_s)
        self._access = file_access(self._path)
        self._lock = self._access.lock
        self._version = 0
        self._closed = False
        # An in-memory database lives as long as its one connection; a file is opened per call.
        self._memory = None if self._path is not None else connect(None, self._read_only)
        try:
            with self._connected() as con:
                self._version = migrate(con, self._where, self._read_only)
        except BaseException:
            self.close()
            raise

    @contextlib.contextmanager
    def _connected(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The connection for one call, under the file's lock: the in-memory database's, or
        the file opened for this call (or the session under way) and closed after it."""
        with self._lock:
            if self._closed:
                raise StoreError(f"{self._where}: the store is closed")
            if self._memory is not None:
                yield self._memory
                return
            assert self._path is not None
            with opened(self._path, self._access, self._read_only, self._lock_timeout_s) as con:
                yield con

    @contextlib.contextmanager
    def _writing(self) -> Iterator[duckdb.DuckDBPyConnection]:
        if self._read_only:
            raise StoreError(f"{self._where}: the store was opened read-only")
        with self._connected() as con:
            yield con

    @contextlib.contextmanager
    def session(self) -> Iterator[Store]:
        """Hold the file open for a group of calls (one open instead of one per call).

        Other processes wait for the file until the block ends, so keep it short: one flush,
        one report section; never around network requests or sleeps.

        Example:
            >>> with Store(":memory:") as store, store.session():
            ...     store.query("SELECT 1 AS x")["x"][0]
            1
        """
        with self._connected():
            yield self

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def path(self) -> Path | None:
        """The database file, or None for an in-memory store."""
        return self._path

    @property
    def read_only(self) -> bool:
        """Whether this Store refuses writes."""
        return self._read_only

    @property
    def schema_version(self) -> int:
        """The migration version the database is at."""
        return self._version

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._closed

    @property
    def lock_timeout_s(self) -> float:
        """How long a call waits for another process to release the file."""
        return self._lock_timeout_s

    def close(self) -> None:
        """Close the store; further calls raise ``StoreError``. Closing twice is fine."""
        with self._lock:
            self._closed = True
            if self._memory is not None:
                self._memory.close()
                self._memory = None

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = ", closed" if self.closed else ""
        mode = ", read_only=True" if self._read_only else ""
        return f"Store(path={self._where!r}, schema_version={self._version}{mode}{state})"

    # -- writes ----------------------------------------------------------------------------

    def append(self, table: str, frame: pl.DataFrame) -> int:
        """Insert ``frame`` into ``table`` in one transaction; return the rows actually added.

        Rows whose natural key is already stored (or repeated earlier in the frame) are
        skipped, so re-running a write never duplicates rows. Columns are checked against
        the contract: missing required or unknown columns, nulls in required columns, values
        outside a column's choices and lossy casts raise ``StoreError`` and write nothing.
        Ctrl-C during an append rolls it back and raises ``KeyboardInterrupt`` (also when it
        lands inside a DuckDB statement, which DuckDB reports as a ``RuntimeError``).

        Example:
            >>> from datetime import UTC, datetime
            >>> store = Store(":memory:")
            >>> frame = pl.DataFrame({"snapshot_id": ["s1"], "chain": [1], "symbol": ["USDC"],
            ...                       "observed_at": [datetime(2024, 1, 1, tzinfo=UTC)]})
            >>> store.append("token_snapshots", frame), store.append("token_snapshots", frame)
            (1, 0)
        """
        spec = table_spec(table)
        if self._read_only:
            raise StoreError(f"{self._where}: the store was opened read-only")
        if not isinstance(frame, pl.DataFrame):
            raise StoreError(
                f"{spec.name}: frame must be a polars DataFrame, got {type(frame).__name__}"
            )
        if frame.height == 0:
            return 0
        rows = conform(spec, frame)
        view = f"_append_{spec.name}"
        plan = insert_plan(spec, rows, view)
        with self._writing() as con, keyboard_interrupts():
            try:
                con.register(view, plan.arrow)
                con.execute("BEGIN TRANSACTION")
                stored = first_row(con, plan.probe)
                result = first_row(con, plan.anti if stored and stored[0] else plan.plain)
                con.execute("COMMIT")
            except duckdb.Error as exc:
                rollback(con)
                raise StoreError(
                    f"{spec.name}: append failed, nothing was written ({exc})"
                ) from None
            except BaseException:
                # Ctrl-C (KeyboardInterrupt between statements, DuckDB's "Query interrupted"
                # during one) or any other escape. A transaction left open would swallow the
                # next calls on this connection (or, aborted, refuse them all).
                rollback(con)
                raise
            finally:
                with contextlib.suppress(duckdb.Error):
                    con.unregister(view)
        return int(result[0]) if result else 0

    # -- reads -----------------------------------------------------------------------------

    @staticmethod
    def _relation(
        con: duckdb.DuckDBPyConnection, sql: str, params: Params
    ) -> duckdb.DuckDBPyRelation | None:
        if not isinstance(sql, str) or not sql.strip():
            raise StoreError("sql: must be a non-empty SQL string")
        if params is not None and not isinstance(params, list | tuple | Mapping):
            raise StoreError(f"params: must be a list, a dict or None, got {type(params).__name__}")
        bound = list(params) if isinstance(params, tuple) else params
        try:
            return con.sql(sql, params=bound)
        except duckdb.Error as exc:
            raise StoreError(f"sql: {exc}") from None

    def query(self, sql: str, params: Params = None) -> pl.DataFrame:
        """Run ``sql`` (``?``/``$1`` or ``$name`` parameters) and return a polars frame.

        HUGEINT columns come back as exact ``Int128``; times as ``Datetime("us", "UTC")``.

        Example:
            >>> Store(":memory:").query("SELECT ?::HUGEINT AS x", [2**100])["x"].dtype
            Int128
        """
        with self._connected() as con, keyboard_interrupts():
            relation = self._relation(con, sql, params)
            if relation is None:
                return pl.DataFrame()
            try:
                return to_polars(relation)
            except duckdb.Error as exc:
                raise StoreError(f"sql: {exc}") from None

    def table(self, name: str) -> pl.DataFrame:
        """The whole table ``name`` as a polars frame with the schema's types; an unknown name
        raises ``StoreError`` listing the known tables.

        Example:
            >>> Store(":memory:").table("fee_tiers").schema["min_amount"]
            Int128
        """
        spec = table_spec(name)
        frame = self.query(f"SELECT * FROM {spec.name}")
        return frame.cast(polars_schema(spec.name))

    def df(self, sql: str, params: Params = None) -> pd.DataFrame:
        """Run ``sql`` and return a pandas frame (via Arrow); HUGEINT columns hold Python ints.

        Example:
            >>> Store(":memory:").df("SELECT ?::HUGEINT AS x", [2**100])["x"][0] == 2**100
            True
        """
        with self._connected() as con, keyboard_interrupts():
            relation = self._relation(con, sql, params)
            if relation is None:
                return to_pandas(None)
            try:
                return to_pandas(relation)
            except duckdb.Error as exc:
                raise StoreError(f"sql: {exc}") from None

    def tables(self) -> list[str]:
        """Names of the tables in the database, sorted (``schema_migrations`` included).

        Example:
            >>> "rfq_observations" in Store(":memory:").tables()
            True
        """
        with self._connected() as con:
            rows = con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
                "ORDER BY table_name"
            ).fetchall()
        return [str(row[0]) for row in rows]
