"""``toolkit report``: figures and a summary table from a toolkit DuckDB file.

:func:`write_report` reads the store (read-only) and writes, for each table that has rows:

- ``fee_curve.png``: effective fee (bps) against amount (log x) per route, one panel per
  token; ``fee_curve.csv``: the fitted fee curve per route and quote type;
- ``blocking.png`` / ``blocking.csv``: RFQ 404 share per route and time window, with
  binomial standard errors;
- ``eta_validity.png`` / ``eta_validity.csv``: quoted fill time and validity window per route;
- ``capacity_timeline.png`` / ``.csv``: each pool's utilization from the liquidity events;
- ``backtest.png`` / ``backtest_timeline.csv``: the latest backtest's pool utilization and 404
  share over virtual time;
- always ``summary.csv`` (``section, metric, value``), ``routes.csv`` when there are RFQ
  observations, and ``summary.md``, a Markdown page with the tables and links to the figures.

A missing file or a database without collection runs is a :class:`ReportError` whose message
names the path and what to run. This module stays light: the CLI imports it to build its parser,
and the plotting stack loads only when a report is written.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from toolkit.report._result import ReportError, ReportResult

if TYPE_CHECKING:
    from toolkit.store import Store

__all__ = ["ReportError", "ReportResult", "add_arguments", "run", "write_report"]


def write_report(
    store_or_path: Store | str | os.PathLike[str], out_dir: str | os.PathLike[str]
) -> ReportResult:
    """Write the report's figures (PNG) and tables (CSV, Markdown) for a toolkit DuckDB file.

    ``store_or_path`` is an open :class:`toolkit.store.Store` (used as is, left open) or the
    path of a DuckDB file (opened read-only, then closed); pass the Store when this process
    already has the file open. ``out_dir`` is created if needed; report files from an earlier
    run that this one does not write are removed. Each section is written only when its table
    has rows; :attr:`ReportResult.skipped` says which were left out and why.

    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     write_report(store, "unused")
    Traceback (most recent call last):
    ...
    toolkit.report._result.ReportError: no collection runs in an in-memory store: run ...
    """
    from toolkit.report._writer import write_report as write

    return write(store_or_path, out_dir)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``toolkit report``: ``--db PATH`` and ``--out DIR``.

    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args(["--db", "x.duckdb"]).db
    'x.duckdb'
    """
    parser.add_argument(
        "--db",
        metavar="PATH",
        default=None,
        help="DuckDB file to read (default: data/toolkit.duckdb in the repository)",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        default=None,
        help="directory for the figures and tables (default: data/reports/ in the repository)",
    )


def run(args: argparse.Namespace) -> int:
    """Write the report; print the files written, or the error (exit status 1).

    >>> import tempfile, pathlib
    >>> missing = pathlib.Path(tempfile.mkdtemp()) / "none.duckdb"
    >>> run(argparse.Namespace(db=str(missing), out=None))  # doctest: +ELLIPSIS
    1
    """
    from toolkit.report._load import display_path
    from toolkit.store import data_dir, default_path

    db = args.db if args.db is not None else default_path()
    out = args.out if args.out is not None else data_dir() / "reports"
    try:
        result = write_report(db, out)
    except ReportError as exc:
        print(f"toolkit report: error: {exc}", file=sys.stderr)
        return 1
    print(f"report of {display_path(db)} written to {display_path(result.out_dir)}:")
    for path in result.paths:
        print(f"  {display_path(path)}")
    for reason in result.skipped:
        print(f"  (left out {reason})")
    return 0
