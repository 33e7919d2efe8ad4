"""``toolkit status``: what each follower writing a database is doing, from any process.

Reads ``collector_status`` (each follower replaces its row at every poll) through a read-only
store, so it works while they write: per follower its state, target (redacted), head and lag
in blocks and seconds, rows written and per second (over the last minute), errors and the
last one, and the age of the last flush. A row still ``running`` whose process is gone (its pid
no longer exists on this host) or that has not been updated for three cadences (and at least
a minute) is shown as ``stale``.

Exit status: 0, or 1 when the database cannot be read.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from datetime import UTC, datetime
from typing import Any

__all__ = ["add_arguments", "run", "shown_state"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``toolkit status``.

    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args(["--json"]).json
    True
    """
    parser.add_argument(
        "--db", metavar="PATH", default=None, help="DuckDB file (default: data/toolkit.duckdb)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per follower")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


def shown_state(row: dict[str, Any], now: datetime) -> str:
    """The state to show: the row's, or ``stale`` for a running follower that is gone or silent.

    >>> from datetime import timedelta
    >>> now = datetime(2024, 1, 1, tzinfo=UTC)
    >>> row = {"state": "running", "updated_at": now - timedelta(minutes=5), "every_s": 2.0,
    ...        "host": "elsewhere", "pid": 1}
    >>> shown_state(row, now), shown_state(row | {"updated_at": now}, now)
    ('stale', 'running')
    """
    if row["state"] != "running":
        return str(row["state"])
    silent_s = (now - row["updated_at"]).total_seconds()
    if silent_s > max(3 * float(row["every_s"]), 60.0):
        return "stale"
    if row["host"] == socket.gethostname() and row["pid"] is not None and not _alive(row["pid"]):
        return "stale"
    return "running"


def _age(then: datetime | None, now: datetime) -> str:
    return "-" if then is None else f"{max(0.0, (now - then).total_seconds()):.0f}s ago"


def _figure(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def run(args: argparse.Namespace) -> int:
    """Print every follower's status (a table, or JSON lines with ``--json``)."""
    from toolkit.store import Store, StoreError

    try:
        with Store(args.db, read_only=True) as store:
            frame = store.statuses()
    except StoreError as exc:
        print(f"toolkit status: cannot read the database: {exc}", file=sys.stderr)
        return 1
    now = datetime.now(UTC)
    rows = [row | {"shown": shown_state(row, now)} for row in frame.iter_rows(named=True)]
    if args.json:
        for row in rows:
            print(json.dumps(row, default=str))
        return 0
    if not rows:
        print("no follower has written to this database (toolkit watch, collect --follow)")
        return 0
    header = ("name", "state", "target", "head", "lag", "lag_s", "rows/s", "rows", "errors",
              "last flush", "last error")  # fmt: skip
    table = [header] + [
        (r["name"], r["shown"], r["target_url"], _figure(r["head_block"]),
         _figure(r["lag_blocks"]), _figure(r["lag_s"]), _figure(r["rows_per_s"]),
         str(r["rows_written"]), str(r["errors"]), _age(r["last_flush_at"], now),
         (r["last_error"] or "-")[:60])
        for r in rows
    ]  # fmt: skip
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    for line in table:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        )
    return 0
