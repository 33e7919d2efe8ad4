"""argparse ``type=`` callables over :mod:`toolkit.arguments`: one rule, one message.

argparse prefixes the option (``argument --rounds: must be an integer >= 1, got '0'``), so the
message here is the rule and the text given, exactly as the library says it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from toolkit.arguments import ArgumentError, number, whole

__all__ = ["integer", "real"]


def integer(*, minimum: int | None = None, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type for a whole number within bounds.

    >>> integer(minimum=1)("3")
    3
    >>> integer(minimum=1)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer >= 1, got '0'
    """

    def parse(text: str) -> int:
        try:
            value: object = int(text)
        except ValueError:
            value = text
        try:
            return whole(value, "value", minimum=minimum, maximum=maximum)
        except ArgumentError as exc:
            raise argparse.ArgumentTypeError(f"must be {exc.rule}, got {text!r}") from None

    return parse


def real(*, minimum: float | None = None, above: float | None = None) -> Callable[[str], float]:
    """An argparse type for a finite number within bounds.

    >>> real(above=0)("2.5")
    2.5
    >>> real(above=0)("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number > 0, got 'nan'
    """

    def parse(text: str) -> float:
        try:
            value: object = float(text)
        except ValueError:
            value = text
        try:
            return number(value, "value", minimum=minimum, above=above)
        except ArgumentError as exc:
            raise argparse.ArgumentTypeError(f"must be {exc.rule}, got {text!r}") from None

    return parse
