"""Open the DuckDB file read-only and read the tables the report draws from."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from toolkit.report.result import ReportError
from toolkit.store import Store, StoreError

__all__ = ["ReportData", "display_path", "load_data"]

_HINT = "run toolkit collect or toolkit demo first"


def display_path(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the working directory when it is an absolute path below it.

    Messages and the Markdown page then read ``data/toolkit.duckdb`` rather than a
    machine-specific absolute path; a relative path is shown as given.
    """
    given = Path(os.fspath(path))
    if not given.is_absolute():
        return os.fspath(path)
    try:
        return given.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return given.as_posix()


@dataclass(frozen=True)
class ReportData:
    """The frames a report is drawn from; empty frames mean "no data for that section"."""

    where: str
    runs: pl.DataFrame
    observations: pl.DataFrame
    events: pl.DataFrame
    tiers: pl.DataFrame
    backtest_run: str | None
    backtest_requests: pl.DataFrame
    backtest_pools: pl.DataFrame


def _open(path: Path, where: str) -> Store:
    if not path.exists():
        raise ReportError(f"{where}: no such DuckDB file; {_HINT}")
    if not path.is_file():
        raise ReportError(f"{where}: is not a file (expected a DuckDB database)")
    try:
        return Store(path, read_only=True)
    except StoreError as exc:
        raise ReportError(
            f"cannot read {where} as a toolkit database: {exc} (if this process already has "
            f"it open, pass that Store instead of the path)"
        ) from None


def load_data(store_or_path: Store | str | os.PathLike[str]) -> ReportData:
    """Read every table the report uses; refuse a missing file or one without runs."""
    if isinstance(store_or_path, Store):
        store, owned = store_or_path, False
        where = "an in-memory store" if store.path is None else display_path(store.path)
    elif isinstance(store_or_path, str | os.PathLike):
        path = Path(store_or_path).expanduser()
        where = display_path(store_or_path)
        store, owned = _open(path, where), True
    else:
        raise TypeError(
            "store_or_path: must be a toolkit Store or a path to a DuckDB file, "
            f"got {type(store_or_path).__name__}"
        )
    try:
        return _read(store, where)
    except StoreError as exc:
        raise ReportError(f"cannot read {where}: {exc}") from None
    finally:
        if owned:
            store.close()


def _read(store: Store, where: str) -> ReportData:
    runs = store.runs()
    if runs.height == 0:
        raise ReportError(f"no collection runs in {where}: {_HINT}")
    observations = store.query(
        "SELECT * FROM rfq_observations ORDER BY observed_at, run_id, attempt_id"
    )
    events = store.query("SELECT * FROM liquidity_events ORDER BY source, event_id")
    tiers = store.query(
        "SELECT * FROM fee_tiers "
        "ORDER BY observed_at, snapshot_id, src_chain, dst_chain, token, tier"
    )
    # The latest backtest run that wrote pool samples: one run's day, not a mix of runs.
    latest = store.query(
        "SELECT r.run_id FROM collection_runs r WHERE r.kind = 'backtest' "
        "AND EXISTS (SELECT 1 FROM backtest_pools p WHERE p.run_id = r.run_id) "
        "ORDER BY r.started_at DESC, r.run_id DESC LIMIT 1"
    )
    run = str(latest["run_id"][0]) if latest.height else None
    requests = store.query(
        "SELECT * FROM backtest_requests WHERE run_id = ? ORDER BY t, request_id", [run]
    )
    pools = store.query("SELECT * FROM backtest_pools WHERE run_id = ? ORDER BY pool, t", [run])
    return ReportData(where, runs, observations, events, tiers, run, requests, pools)
