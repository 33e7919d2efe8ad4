"""``toolkit report``: write figures and a summary table from a toolkit DuckDB file."""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_arguments", "run"]


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
        help="DuckDB file to read (default: toolkit.duckdb in $TOOLKIT_DATA_DIR or ./data)",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        default=None,
        help="directory for the figures and tables (default: reports in $TOOLKIT_DATA_DIR "
        "or ./data)",
    )


def run(args: argparse.Namespace) -> int:
    """Write the report; print the files written, or the error (exit status 1).

    >>> import tempfile, pathlib
    >>> missing = pathlib.Path(tempfile.mkdtemp()) / "none.duckdb"
    >>> run(argparse.Namespace(db=str(missing), out=None))
    1
    """
    from toolkit.report import ReportError, display_path, write_report
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
