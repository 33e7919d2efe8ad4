"""The run log (``collection_runs``) and the look-ups a resuming collector needs.

Functions here take an open DuckDB connection; :class:`toolkit.store.Store` wraps them with
its lock and its read-only check. Parameters are stored as JSON text with secrets refused
and URLs stripped of credentials, so the run log can be shared as is.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import duckdb
import polars as pl

from toolkit.store.errors import StoreError
from toolkit.store.frames import to_polars
from toolkit.store.schema import LEDGERS, RUN_KINDS, RUN_STATUSES, TABLES, TARGET_KINDS, table_spec
from toolkit.store.sql import first_row
from toolkit.store.urls import stored_url, target_kind_of
from toolkit.urls import has_credentials

__all__ = [
    "attempt_ids",
    "finish_run",
    "get_run",
    "last_event_id",
    "list_runs",
    "resume_run",
    "start_run",
]

FINAL_STATUSES: tuple[str, ...] = tuple(s for s in RUN_STATUSES if s != "running")

# Parameter names refused as secrets. Narrower than the URL rule: sweeps legitimately carry
# "token"/"tokens" (assets), so only credential-shaped names are refused here.
_SECRET_PARAMETER = re.compile(
    r"key|secret|passw|pwd|auth|credential|private|bearer|jwt|session|signature|"
    r"(api|access|refresh)token"
)
_SEPARATORS = re.compile(r"[-_.\s]")
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def _clean(value: Any, path: str) -> Any:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise StoreError(f"{path}: keys must be strings, got {type(key).__name__}")
            where = f"{path}.{key}"
            if _SECRET_PARAMETER.search(_SEPARATORS.sub("", key.lower())):
                raise StoreError(
                    f"{where}: looks like a secret; secrets are never written to the store"
                )
            out[key] = _clean(item, where)
        return out
    if isinstance(value, list | tuple):
        return [_clean(item, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, str) and _URL.match(value) and has_credentials(value):
        return stored_url(value, field=path)
    return value


def encode_parameters(parameters: Mapping[str, Any]) -> str:
    """JSON text of a run's parameters: keys sorted, secrets refused, URLs redacted.

    Example:
        >>> encode_parameters({"rounds": 3, "target": "https://u:p@host/x"})
        '{"rounds": 3, "target": "https://host/x"}'
    """
    if not isinstance(parameters, Mapping):
        raise StoreError(f"parameters: must be a dict, got {type(parameters).__name__}")
    cleaned = _clean(parameters, "parameters")
    try:
        return json.dumps(cleaned, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"parameters: must be JSON-serializable ({exc})") from None


def _aware(value: datetime | None, field: str) -> datetime:
    if value is None:
        return datetime.now(UTC)
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise StoreError(f"{field}: must be a timezone-aware datetime")
    return value.astimezone(UTC)


def _run_id(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise StoreError("run_id: must be a non-empty string")
    return value


def _status(con: duckdb.DuckDBPyConnection, run_id: str) -> str:
    row = first_row(con, "SELECT status FROM collection_runs WHERE run_id = ?", [run_id])
    if row is None:
        raise StoreError(f"run_id: no run {run_id!r} in the store")
    return str(row[0])


def start_run(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    parameters: Mapping[str, Any],
    target_url: str,
    *,
    run_id: str | None = None,
    started_at: datetime | None = None,
    target_kind: str | None = None,
) -> str:
    """Record a new run with status ``running``; return its id (a uuid4 unless given).
    ``target_kind`` (embedded, served, real, simulated) defaults to what the URL says
    (:func:`~toolkit.store.urls.target_kind_of`)."""
    if kind not in RUN_KINDS:
        raise StoreError(f"kind: must be one of {', '.join(RUN_KINDS)}; got {kind!r}")
    encoded = encode_parameters(parameters)
    url = stored_url(target_url)
    observed = target_kind_of(url) if target_kind is None else target_kind
    if observed not in TARGET_KINDS:
        raise StoreError(f"target_kind: must be one of {', '.join(TARGET_KINDS)}; got {observed!r}")
    new_id = str(uuid.uuid4()) if run_id is None else _run_id(run_id)
    stamp = _aware(started_at, "started_at")
    exists = first_row(con, "SELECT 1 FROM collection_runs WHERE run_id = ?", [new_id])
    if exists:
        raise StoreError(f"run_id: run {new_id!r} already exists; use resume_run to continue it")
    con.execute(
        "INSERT INTO collection_runs "
        "(run_id, kind, parameters, target_url, started_at, ended_at, status, rows_written, "
        "target_kind) VALUES (?, ?, ?, ?, ?, NULL, 'running', NULL, ?)",
        [new_id, kind, encoded, url, stamp, observed],
    )
    return new_id


def _rows_for(con: duckdb.DuckDBPyConnection, run_id: str) -> int:
    tables = [
        name for name, spec in TABLES.items() if name not in LEDGERS and "run_id" in spec.by_name
    ]
    union = " UNION ALL ".join(
        f"SELECT count(*) AS n FROM {name} WHERE run_id = $run" for name in tables
    )
    row = first_row(con, f"SELECT sum(n) FROM ({union})", {"run": run_id})
    return int(row[0]) if row and row[0] is not None else 0


def finish_run(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    status: str,
    rows_written: int | None = None,
    *,
    ended_at: datetime | None = None,
) -> None:
    """Close a running run with a final status; ``rows_written`` defaults to the rows stored
    under this run id across all tables."""
    run_id = _run_id(run_id)
    if status not in FINAL_STATUSES:
        raise StoreError(f"status: must be one of {', '.join(FINAL_STATUSES)}; got {status!r}")
    if rows_written is not None and (
        isinstance(rows_written, bool) or not isinstance(rows_written, int) or rows_written < 0
    ):
        raise StoreError("rows_written: must be a non-negative integer or None")
    stamp = _aware(ended_at, "ended_at")
    current = _status(con, run_id)
    if current != "running":
        raise StoreError(f"run_id: run {run_id!r} is {current}, not running")
    count = _rows_for(con, run_id) if rows_written is None else rows_written
    con.execute(
        "UPDATE collection_runs SET status = ?, ended_at = ?, rows_written = ? WHERE run_id = ?",
        [status, stamp, count, run_id],
    )


def resume_run(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Mark an interrupted or failed run as running again (its rows are kept)."""
    run_id = _run_id(run_id)
    current = _status(con, run_id)
    if current == "completed":
        raise StoreError(f"run_id: run {run_id!r} is completed; start a new run instead")
    con.execute(
        "UPDATE collection_runs SET status = 'running', ended_at = NULL WHERE run_id = ?",
        [run_id],
    )


def get_run(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any]:
    """One run as a dict, ``parameters`` decoded from JSON."""
    run_id = _run_id(run_id)
    frame = to_polars(
        con.sql("SELECT * FROM collection_runs WHERE run_id = $run", params={"run": run_id})
    )
    if frame.height == 0:
        raise StoreError(f"run_id: no run {run_id!r} in the store")
    row = frame.row(0, named=True)
    row["parameters"] = json.loads(row["parameters"])
    return row


def list_runs(con: duckdb.DuckDBPyConnection, kind: str | None = None) -> pl.DataFrame:
    """All runs (or those of one kind), oldest first."""
    if kind is not None and kind not in RUN_KINDS:
        raise StoreError(f"kind: must be one of {', '.join(RUN_KINDS)} or None; got {kind!r}")
    return to_polars(
        con.sql(
            "SELECT * FROM collection_runs WHERE $kind IS NULL OR kind = $kind "
            "ORDER BY started_at, run_id",
            params={"kind": kind},
        )
    )


def attempt_ids(con: duckdb.DuckDBPyConnection, run_id: str, table: str) -> set[str]:
    """Attempt ids already stored for ``run_id`` in ``table``: the attempts to skip on resume."""
    run_id = _run_id(run_id)
    spec = table_spec(table)
    if "attempt_id" not in spec.by_name:
        having = ", ".join(n for n, s in TABLES.items() if "attempt_id" in s.by_name)
        raise StoreError(f"table: {table!r} has no attempt_id column; use one of {having}")
    rows = con.execute(f"SELECT attempt_id FROM {spec.name} WHERE run_id = ?", [run_id]).fetchall()
    return {str(row[0]) for row in rows}


def last_event_id(con: duckdb.DuckDBPyConnection, source: str) -> int | None:
    """The highest liquidity event id stored for ``source`` (for ``Last-Event-ID``), or None."""
    if not isinstance(source, str) or not source:
        raise StoreError("source: must be a non-empty string")
    if has_credentials(source):
        source = stored_url(source, field="source")
    row = first_row(con, "SELECT max(event_id) FROM liquidity_events WHERE source = ?", [source])
    return None if row is None or row[0] is None else int(row[0])
