"""Small helpers around a DuckDB connection used by every store module."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb

__all__ = ["first_row", "rollback"]


def first_row(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] | None = None,
) -> tuple[Any, ...] | None:
    """The first row of ``sql``, or None; the result is drained.

    DuckDB 2.0 keeps a partly fetched ``execute()`` result open and refuses other work on the
    connection until it is drained, so even one-row look-ups fetch everything.

    Example:
        >>> first_row(duckdb.connect(), "SELECT 1 + ?", [1])
        (2,)
    """
    rows = con.execute(sql, params).fetchall()
    return tuple(rows[0]) if rows else None


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back the open transaction, if the failure that calls for it left one open."""
    # A failed statement or COMMIT may already have ended the transaction; the original
    # error is the news, not a second "no transaction is active".
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")
