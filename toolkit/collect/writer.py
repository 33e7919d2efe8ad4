"""Batched, idempotent writes of collected rows into the store."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import polars as pl

from toolkit.arguments import number, whole
from toolkit.collect.rows import Row
from toolkit.store import Store, polars_schema

__all__ = ["BatchWriter"]


class BatchWriter:
    """Buffers rows per table and appends them as polars frames (amounts ``Int128``).

    A table is flushed when it holds ``batch_size`` rows or ``flush_s`` seconds have passed since
    its last flush, so a long stream reaches the database steadily. Rows leave the buffer only
    once ``Store.append`` succeeded; appends are idempotent on the natural keys, so flushing the
    same rows twice (after an interrupted flush) writes them once.

    >>> from datetime import UTC, datetime
    >>> store = Store(":memory:")
    >>> writer = BatchWriter(store, batch_size=10)
    >>> writer.add("token_snapshots", [{"snapshot_id": "s", "chain": 1, "symbol": "USDC",
    ...     "observed_at": datetime(2024, 1, 1, tzinfo=UTC)}])
    >>> writer.flush(), writer.written
    (1, 1)
    """

    def __init__(
        self,
        store: Store,
        *,
        batch_size: int = 500,
        flush_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.batch_size = whole(batch_size, "batch_size", minimum=1)
        self.flush_s = number(flush_s, "flush_s", minimum=0)
        self._clock = clock
        self._rows: dict[str, list[Row]] = {}
        self._flushed_at: dict[str, float] = {}
        self.written = 0
        self.by_table: dict[str, int] = {}

    def add(self, table: str, rows: Iterable[Row]) -> None:
        """Queue ``rows`` for ``table``; flush the table when its batch is due."""
        buffer = self._rows.setdefault(table, [])
        buffer.extend(rows)
        since = self._clock() - self._flushed_at.setdefault(table, self._clock())
        if len(buffer) >= self.batch_size or since >= self.flush_s:
            self._flush_table(table)

    def pending(self) -> int:
        """Rows waiting in the buffers."""
        return sum(len(rows) for rows in self._rows.values())

    def _flush_table(self, table: str) -> int:
        rows = self._rows.get(table)
        self._flushed_at[table] = self._clock()
        if not rows:
            return 0
        frame = pl.DataFrame(rows, schema=polars_schema(table))
        inserted = self.store.append(table, frame)
        self._rows[table] = []
        self.written += inserted
        self.by_table[table] = self.by_table.get(table, 0) + inserted
        return inserted

    def flush(self) -> int:
        """Write every buffered row (the database file opened once for them all); return the
        rows actually inserted by this call. When the store is busy (``StoreBusy``: another
        process held the file too long) the rows stay buffered for the next flush."""
        if not any(self._rows.values()):
            return 0
        with self.store.session():
            return sum(self._flush_table(table) for table in list(self._rows))
