"""Small helpers around a DuckDB connection used by every store module."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import duckdb

__all__ = ["first_row", "keyboard_interrupts", "rollback"]

# What duckdb-python raises when a signal handler raised (Ctrl-C: KeyboardInterrupt) while a
# statement ran: it polls PyErr_CheckSignals between tasks and throws this instead, dropping
# the original exception.
_INTERRUPTED = "Query interrupted"


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
    """Roll back the open transaction, if the failure that calls for it left one open.

    A second Ctrl-C during the rollback still finishes it before propagating.

    Example:
        >>> con = duckdb.connect()
        >>> _ = con.execute("BEGIN TRANSACTION"); rollback(con); rollback(con)
    """
    # A failed statement or COMMIT may already have ended the transaction; the original
    # error is the news, not a second "no transaction is active".
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise


@contextlib.contextmanager
def keyboard_interrupts() -> Iterator[None]:
    """Raise DuckDB's ``RuntimeError("Query interrupted")`` as the KeyboardInterrupt it was.

    Callers (collectors, ``toolkit`` commands) treat KeyboardInterrupt as Ctrl-C: a run is
    marked interrupted, the command exits 130. Only with a custom signal handler can the
    lost exception have been something else.

    Example:
        >>> try:
        ...     with keyboard_interrupts():
        ...         raise RuntimeError("Query interrupted")
        ... except KeyboardInterrupt:
        ...     print("Ctrl-C")
        Ctrl-C
    """
    try:
        yield
    except RuntimeError as exc:
        if str(exc) != _INTERRUPTED:
            raise
        raise KeyboardInterrupt from exc
