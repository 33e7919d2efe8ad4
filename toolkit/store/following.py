"""What followers write besides their rows, defined once: a reorg's deletion, block finality,
and each follower's status (:class:`~toolkit.store.Store` takes these methods from
:class:`FollowLog`).

A reorg replaces a chain's blocks from a fork point on. :meth:`FollowLog.drop_orphaned` deletes,
in one transaction, every row any run stored in those blocks: the tables placed by
``(chain, block_number)`` (raw logs, decoded transfers and pool events, pool snapshots),
``chain_blocks``, the pools created there, the ticks of the snapshots read there, the credit
collateral read there (on its hub's chain), and trims ``chain_ranges`` so that every reader
of the ranges (a resumed run, a follower) reads those blocks again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import duckdb
import polars as pl

from toolkit.store.errors import StoreError
from toolkit.store.frames import conform, to_polars
from toolkit.store.schema import TABLES, table_spec
from toolkit.store.sql import first_row, keyboard_interrupts, rollback

__all__ = ["ORPHAN_DELETES", "FollowLog"]


def _placed_by_block() -> dict[str, str]:
    """``DELETE`` of each table whose rows sit in one block: by the schema's columns, so a table
    added later with ``(chain, block_number)`` is covered without a list to keep."""
    deletes = {
        name: f"DELETE FROM {name} WHERE chain = $chain AND block_number >= $first"
        for name, spec in TABLES.items()
        if {"chain", "block_number"} <= set(spec.by_name)
    }
    # Ticks belong to a snapshot: deleted with it, so before it.
    deletes = {
        "amm_pool_ticks": (
            "DELETE FROM amm_pool_ticks t WHERE EXISTS (SELECT 1 FROM amm_pool_snapshots s "
            "WHERE s.snapshot_id = t.snapshot_id AND s.chain = t.chain AND s.pool = t.pool "
            "AND s.chain = $chain AND s.block_number >= $first)"
        ),
        **deletes,
        "chain_blocks": "DELETE FROM chain_blocks WHERE chain = $chain AND number >= $first",
        "amm_pools": "DELETE FROM amm_pools WHERE chain = $chain AND created_block >= $first",
        # Collateral is read on the hub's chain: that chain's reorg orphans the read.
        "credit_collateral": (
            "DELETE FROM credit_collateral WHERE hub_chain = $chain AND block_number >= $first"
        ),
        "chain_ranges": "DELETE FROM chain_ranges WHERE chain = $chain AND from_block >= $first",
    }
    return deletes


#: table → the ``DELETE`` of its rows in the blocks from ``$first`` on, on ``$chain``.
ORPHAN_DELETES: Mapping[str, str] = _placed_by_block()

# A range that straddles the fork keeps its blocks below it.
_TRIM_RANGES = (
    "UPDATE chain_ranges SET to_block = $first - 1 "
    "WHERE chain = $chain AND from_block < $first AND to_block >= $first"
)

_FINALITY = """
UPDATE chain_blocks SET finality = CASE
    WHEN number <= $finalized THEN 'finalized' WHEN number <= $safe THEN 'safe' ELSE 'unsafe' END
WHERE chain = $chain AND number <= $upto AND finality IS DISTINCT FROM 'finalized'
  AND (finality IS DISTINCT FROM 'safe' OR number <= $finalized)
"""


class FollowLog:
    """The followers' methods of :class:`~toolkit.store.Store`, on its connection."""

    _connected: Callable[[], contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]]
    _writing: Callable[[], contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]]

    def drop_orphaned(
        self,
        chain: int,
        first_block: int,
        *,
        old_hash: str,
        new_hash: str | None,
        run_id: str,
    ) -> dict[str, int]:
        """Delete every row stored in ``chain``'s blocks from ``first_block`` on, in one
        transaction, and record the reorg in ``chain_reorgs``; return the rows deleted by table.

        ``old_hash`` is the stored hash of ``first_block``, ``new_hash`` the node's (None when
        the node no longer has the block: a rollback).

        Example:
            >>> from toolkit.store import Store
            >>> store = Store(":memory:")
            >>> store.drop_orphaned(1, 10, old_hash="0xaa", new_hash="0xbb", run_id="r")
            {}
            >>> store.table("chain_reorgs")["fork_block"].to_list()
            [10]
        """
        params = {"chain": int(chain), "first": int(first_block)}
        deleted: dict[str, int] = {}
        with self._writing() as con, keyboard_interrupts():
            try:
                con.execute("BEGIN TRANSACTION")
                tip = first_row(
                    con, "SELECT max(number) FROM chain_blocks WHERE chain = ?", [chain]
                )
                for table, sql in ORPHAN_DELETES.items():
                    row = first_row(con, sql, params)
                    if row and row[0]:
                        deleted[table] = int(row[0])
                con.execute(_TRIM_RANGES, params)
                depth = max(1, (int(tip[0]) if tip and tip[0] is not None else 0) - first_block + 1)
                con.execute(
                    "INSERT INTO chain_reorgs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [chain, first_block, depth, old_hash, new_hash, datetime.now(UTC),
                     sum(deleted.values()), run_id],
                )  # fmt: skip
                con.execute("COMMIT")
            except duckdb.Error as exc:
                rollback(con)
                raise StoreError(
                    f"chain {chain}: reorg not applied, nothing deleted ({exc})"
                ) from None
            except BaseException:
                rollback(con)
                raise
        return deleted

    def mark_finality(self, chain: int, *, finalized: int, safe: int) -> int:
        """Promote ``chain``'s stored blocks: at or below ``finalized`` to ``finalized``, at or
        below ``safe`` to ``safe`` (never back); return the blocks changed.

        Example:
            >>> from toolkit.store import Store
            >>> Store(":memory:").mark_finality(1, finalized=5, safe=7)
            0
        """
        params = {"chain": int(chain), "finalized": int(finalized), "safe": int(safe)}
        params["upto"] = max(params["finalized"], params["safe"])
        with self._writing() as con:
            row = first_row(con, _FINALITY, params)
        return int(row[0]) if row and row[0] else 0

    def record_status(self, status: Mapping[str, Any]) -> None:
        """Replace the ``collector_status`` row of ``status["name"]`` (columns as the table's;
        bad values raise ``StoreError`` naming the column and change nothing).

        Example:
            >>> from toolkit.store import Store
            >>> store = Store(":memory:")
            >>> now = datetime(2024, 1, 1, tzinfo=UTC)
            >>> store.record_status({"name": "chain:1", "kind": "chain", "target_url": "http://n",
            ...     "state": "running", "every_s": 2.0, "started_at": now, "updated_at": now,
            ...     "polls": 1, "rows_written": 0, "errors": 0, "reorgs": 0})
            >>> store.statuses()["name"].to_list()
            ['chain:1']
        """
        spec = table_spec("collector_status")
        frame = conform(spec, pl.DataFrame([dict(status)]))
        columns = frame.columns
        row = list(frame.row(0))
        marks = ", ".join("?" for _ in columns)
        with self._writing() as con:
            try:
                con.execute("BEGIN TRANSACTION")
                con.execute("DELETE FROM collector_status WHERE name = ?", [row[0]])
                con.execute(
                    f"INSERT INTO collector_status ({', '.join(columns)}) VALUES ({marks})", row
                )
                con.execute("COMMIT")
            except BaseException:
                rollback(con)
                raise

    def delete_rows(self, table: str, equals: Mapping[str, Any]) -> int:
        """Delete the rows of ``table`` whose columns equal ``equals`` (at least one column);
        return how many. A follower replaces a read this way (a snapshot at an orphaned block).

        Example:
            >>> from toolkit.store import Store
            >>> Store(":memory:").delete_rows("amm_pool_snapshots", {"snapshot_id": "s1"})
            0
        """
        spec = table_spec(table)
        unknown = [name for name in equals if name not in spec.by_name]
        if not equals or unknown:
            raise StoreError(
                f"equals: must name columns of {spec.name} (unknown: {', '.join(unknown) or '-'})"
            )
        where = " AND ".join(f"{name} = ${name}" for name in equals)
        with self._writing() as con:
            row = first_row(con, f"DELETE FROM {spec.name} WHERE {where}", dict(equals))
        return int(row[0]) if row and row[0] else 0

    def statuses(self) -> pl.DataFrame:
        """Every follower's latest status, by name.

        Example:
            >>> from toolkit.store import Store
            >>> Store(":memory:").statuses().height
            0
        """
        with self._connected() as con:
            frame = to_polars(con.sql("SELECT * FROM collector_status ORDER BY name"))
        return frame.cast(table_spec("collector_status").schema)
