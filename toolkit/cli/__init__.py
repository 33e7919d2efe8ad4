"""The ``toolkit`` command: ``serve | collect | watch | status | backtest | report | demo |
target``.

Every subcommand is a module of this package (``collect`` and ``demo``: a package, one module
per part) with ``add_arguments(parser)`` and ``run(args) -> int`` (the exit status). Argument
parsing, printing and exit codes live here and nowhere else; the library packages return data
and raise errors. The subcommand modules import the library inside ``run``, so ``toolkit
--help`` loads no library package at all.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from toolkit.cli import backtest, collect, demo, report, serve, status, target, watch

__all__ = ["COMMANDS", "build_parser", "main"]

#: subcommand -> (module, one-line help)
COMMANDS = {
    "serve": (serve, "run the embedded service on 127.0.0.1"),
    "collect": (collect, "collect from the service into DuckDB"),
    "watch": (watch, "run a plan of followers (chains, pools, credit, ...) until stopped"),
    "status": (status, "what each follower writing a database is doing"),
    "backtest": (backtest, "replay a day of order flow on the engine"),
    "report": (report, "write figures and a summary table from a DuckDB file"),
    "demo": (demo, "the whole main job on the embedded default"),
    "target": (target, "show the configured target (keys masked), or how to choose one"),
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one subparser per command.

    >>> build_parser().parse_args(["backtest", "--hours", "2"]).hours
    2.0
    """
    parser = argparse.ArgumentParser(
        prog="toolkit",
        description="Analytics toolkit for the intent liquidity, swap and credit service.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        sub_parser = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(sub_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``toolkit`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    module, _ = COMMANDS[args.command]
    try:
        return int(module.run(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
