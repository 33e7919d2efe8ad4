"""argparse types for the command modules: numbers with a bound, and a message naming it.

Light on purpose (stdlib only): every ``command`` module imports it to build its parser.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["number"]


def number(
    *, integer: bool = False, above: float | None = None, at_least: float | None = None
) -> Callable[[str], float]:
    """An argparse ``type`` parsing a finite number (an int with ``integer``) within a bound.

    >>> number(above=0)("2.5")
    2.5
    >>> number(integer=True, at_least=1)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a whole number >= 1, got '0'
    """
    kind = "a whole number" if integer else "a finite number"
    bound = f" > {above:g}" if above is not None else ""
    bound += f" >= {at_least:g}" if at_least is not None else ""

    def parse(text: str) -> float:
        try:
            value: float = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {kind}{bound}, got {text!r}") from None
        if (
            not math.isfinite(value)
            or (above is not None and not value > above)
            or (at_least is not None and not value >= at_least)
        ):
            raise argparse.ArgumentTypeError(f"must be {kind}{bound}, got {text!r}")
        return value

    return parse
