"""argparse ``type=`` callables over :mod:`toolkit.arguments`: one rule, one message.

argparse prefixes the option (``argument --rounds: must be an integer >= 1, got '0'``), so the
message here is the rule and the text given, exactly as the library says it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

from toolkit.arguments import ArgumentError, number, whole

__all__ = ["integer", "names", "real"]

T = TypeVar("T")


def integer(*, minimum: int | None = None, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type for a whole number within bounds.

    >>> integer(minimum=1)("3")
    3
    >>> integer(minimum=1)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer >= 1, got '0'
    """
    return _checked(int, lambda value: whole(value, "value", minimum=minimum, maximum=maximum))


def real(*, minimum: float | None = None, above: float | None = None) -> Callable[[str], float]:
    """An argparse type for a finite number within bounds.

    >>> real(above=0)("2.5")
    2.5
    >>> real(above=0)("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number > 0, got 'nan'
    """
    return _checked(float, lambda value: number(value, "value", minimum=minimum, above=above))


def names(choices: tuple[str, ...]) -> Callable[[str], tuple[str, ...]]:
    """An argparse type for a comma-separated, non-empty list of names from ``choices``.

    >>> names(("a", "b"))("b,a,b")
    ('b', 'a')
    >>> names(("a", "b"))("a,c")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a comma-separated list of a, b, got 'a,c'
    """

    def parse(text: str) -> tuple[str, ...]:
        chosen = tuple(dict.fromkeys(part.strip() for part in text.split(",")))
        if not chosen or not all(name in choices for name in chosen):
            raise argparse.ArgumentTypeError(
                f"must be a comma-separated list of {', '.join(choices)}, got {text!r}"
            )
        return chosen

    return parse


def _checked(convert: Callable[[str], object], check: Callable[[object], T]) -> Callable[[str], T]:
    """``convert`` the text (text that does not convert is checked as it is), then ``check``."""

    def parse(text: str) -> T:
        try:
            value = convert(text)
        except ValueError:
            value = text
        try:
            return check(value)
        except ArgumentError as exc:
            raise argparse.ArgumentTypeError(f"must be {exc.rule}, got {text!r}") from None

    return parse
