"""The ``toolkit`` command: ``serve | collect | backtest | report | demo``.

Each subcommand lives in its package as a light ``command`` module exposing
``add_arguments(parser)`` and ``run(args) -> int``; heavy imports happen inside ``run`` so that
``toolkit --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# subcommand -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("toolkit.server.command", "run the embedded service on 127.0.0.1"),
    "collect": ("toolkit.collect.command", "collect from the service into DuckDB"),
    "backtest": ("toolkit.backtest.command", "replay a day of order flow on the engine"),
    "report": ("toolkit.report", "write figures and a summary table from a DuckDB file"),
    "demo": ("toolkit.demo", "the whole main job on the embedded default"),
}


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with one subparser per available command."""
    parser = argparse.ArgumentParser(
        prog="toolkit",
        description="Analytics toolkit for the intent liquidity, swap and credit service.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        sub_parser = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(sub_parser)
        sub_parser.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``toolkit`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
