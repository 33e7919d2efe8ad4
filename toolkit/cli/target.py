"""``toolkit target``: the target every command would use (keys masked), or why there is none.

The same options as every command that connects: ``--profile`` (else ``$TOOLKIT_PROFILE``),
``--embedded``, ``--base-url``, ``--swap-url``. Exit status 0 with a target, 2 with none or an
invalid one (the message names the variable and how to choose a target).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_arguments", "add_target_arguments", "load_target", "run"]


def add_target_arguments(parser: argparse.ArgumentParser, *, swap: bool = True) -> None:
    """The target options shared by ``target``, ``collect`` and ``demo``-like commands."""
    parser.add_argument(
        "--profile",
        metavar="PATH",
        default=None,
        help="TOML profile with a [target] table (default: $TOOLKIT_PROFILE); the "
        "environment's TOOLKIT_* variables override it",
    )
    parser.add_argument(
        "--embedded",
        action="store_true",
        help="the simulated embedded service in-process (never chosen unless named)",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        default=None,
        help="the main interface's URL (default: $TOOLKIT_BASE_URL); its key is read from "
        "$TOOLKIT_API_KEY only",
    )
    if swap:
        parser.add_argument(
            "--swap-url",
            metavar="URL",
            default=None,
            help="the swap API's URL (default: $TOOLKIT_SWAP_URL; for toolkit serve: "
            "{base}/swap); credentials from $TOOLKIT_SWAP_USERNAME and $TOOLKIT_SWAP_API_KEY",
        )


def load_target(args: argparse.Namespace) -> Any:
    """The :class:`~toolkit.client.Target` of ``args`` (raises ``TargetError``)."""
    from toolkit.client import Target

    return Target.load(
        profile=getattr(args, "profile", None),
        embedded=bool(getattr(args, "embedded", False)),
        base_url=getattr(args, "base_url", None),
        swap_url=getattr(args, "swap_url", None),
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``toolkit target``.

    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args(["--embedded"]).embedded
    True
    """
    add_target_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Print the target, one variable a line, keys masked."""
    from toolkit.cli.argtypes import flagged
    from toolkit.client import TargetError

    try:
        target = load_target(args)
    except TargetError as exc:
        print(f"toolkit target: {flagged(exc)}", file=sys.stderr)
        return 2
    rows = target.describe()
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    if target.kind == "none":
        from toolkit.client.target import HOW_TO_CHOOSE

        print(f"toolkit target: no target is configured; {HOW_TO_CHOOSE}", file=sys.stderr)
        return 2
    return 0
