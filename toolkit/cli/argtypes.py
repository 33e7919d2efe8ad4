"""argparse ``type=`` callables over :mod:`toolkit.arguments`: one rule, one message.

argparse prefixes the option (``argument --rounds: must be an integer >= 1, got '0'``), so the
message here is the rule and the text given, exactly as the library says it.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import TypeVar

from toolkit.arguments import ArgumentError, number, whole
from toolkit.errors import InputError

__all__ = ["FLAGS", "flagged", "integer", "names", "real"]

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


#: Library parameter names → the flags that set them (messages name the flag).
FLAGS = {
    "base_url": "--base-url",
    "swap_url": "--swap-url",
    "accounts": "--accounts",
    "all_known": "--all-known",
    "rounds": "--rounds",
    "interval_s": "--interval",
    "duration_s": "--duration",
    "from_block": "--from-block",
    "to_block": "--to-block",
    "chunk": "--chunk",
    "events": "--events",
    "chain": "--chain",
    "resume": "--resume",
    "tokens": "--tokens",
    "pools": "--pools",
    "v3_factory": "--v3-factory",
    "v2_factory": "--v2-factory",
    "depth_ticks": "--depth-ticks",
}


def flagged(problem: BaseException | str) -> str:
    """The message of ``problem`` as the command line says it: the library's parameter names
    replaced by the flags that set them.

    The field an error is about comes from :attr:`toolkit.errors.InputError.field` (a field
    ``a/b`` names two flags), never from parsing the message: its name is replaced where the
    message starts with it. Snake_case parameter names the message mentions further on (``or
    all_known``) are replaced too; a text (not an error) only has those replaced.

    >>> from toolkit.errors import InputError
    >>> flagged(InputError("accounts: give at least one, or all_known", field="accounts"))
    '--accounts: give at least one, or --all-known'
    >>> flagged(InputError("v3_factory/v2_factory: give both", field="v3_factory/v2_factory"))
    '--v3-factory/--v2-factory: give both'
    >>> flagged(ValueError("rounds: not an input error, so not a field"))
    'rounds: not an input error, so not a field'
    >>> flagged("--chain: required for chain (a chain id such as 8453)")
    '--chain: required for chain (a chain id such as 8453)'
    """
    message = str(problem)
    field = problem.field if isinstance(problem, InputError) else None
    if field and message.startswith(f"{field}:"):
        names = field.split("/")
        if all(name in FLAGS for name in names):
            message = "/".join(FLAGS[name] for name in names) + message[len(field) :]
    return re.sub(
        r"(?<![-\w])[a-z]+(?:_[a-z]+)+(?![\w-])",
        lambda m: FLAGS.get(m.group(0), m.group(0)),
        message,
    )
