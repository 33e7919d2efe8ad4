"""The one check of a numeric argument, and the one message that names it.

Every public function of the toolkit checks its numeric arguments here, so a bad value reads the
same everywhere: ``"<name>: must be <rule>, got <value>"``, raised as :class:`ArgumentError`,
which is both a ``ValueError`` and a ``TypeError`` (as numpy's ``AxisError`` is both a
``ValueError`` and an ``IndexError``): callers that catch either keep working, whether the value
had the wrong type or the wrong size. ``bool`` is never a number (``True`` is an ``int`` in
Python, never what a caller meant), and a float is always finite.

Stdlib only, and it imports no other toolkit module but :mod:`toolkit.errors` (its
:class:`~toolkit.errors.InputError` family): every layer may use it.

>>> whole(3, "rounds", minimum=1)
3
>>> number(0, "duration", above=0)
Traceback (most recent call last):
...
toolkit.arguments.ArgumentError: duration: must be a finite number > 0, got 0
"""

from __future__ import annotations

import math
from numbers import Integral, Real

from toolkit.errors import InputError

__all__ = ["ArgumentError", "fraction", "number", "whole"]


class ArgumentError(InputError, TypeError):
    """A bad argument; the message is ``"<name>: must be <rule>, got <value>"``.

    ``name``, ``rule`` and ``value`` are kept, so a caller can say it its own way (the command
    line says ``argument --rounds: must be an integer >= 1, got '0'``).

    >>> issubclass(ArgumentError, ValueError) and issubclass(ArgumentError, TypeError)
    True
    >>> ArgumentError("rounds", "an integer >= 1", 0).rule
    'an integer >= 1'
    """

    field: str
    rule: str

    def __init__(self, name: str, rule: str, value: object) -> None:
        super().__init__(f"{name}: must be {rule}, got {value!r}")
        self.name = name
        self.field = name
        self.rule = rule
        self.value = value

    def __reduce__(self) -> tuple[type[ArgumentError], tuple[str, str, object]]:
        # rebuilt from its parts, so it crosses process boundaries (sweeps on a process pool)
        return (type(self), (self.name, self.rule, self.value))


_Bound = float | None


def _bounds(minimum: _Bound, above: _Bound, maximum: _Bound, below: _Bound) -> str:
    parts = []
    for sign, bound in ((">=", minimum), (">", above), ("<=", maximum), ("<", below)):
        if bound is not None:
            parts.append(f"{sign} {bound if isinstance(bound, int) else format(bound, 'g')}")
    return (" " + " and ".join(parts)) if parts else ""


def _within(value: float, minimum: _Bound, above: _Bound, maximum: _Bound, below: _Bound) -> bool:
    return (
        (minimum is None or value >= minimum)
        and (above is None or value > above)
        and (maximum is None or value <= maximum)
        and (below is None or value < below)
    )


def whole(
    value: object,
    name: str,
    *,
    minimum: int | None = None,
    above: int | None = None,
    maximum: int | None = None,
    below: int | None = None,
) -> int:
    """``value`` if it is an integer within the bounds (``numpy`` integers included).

    >>> whole(0, "seed", minimum=0)
    0
    >>> whole(True, "seed", minimum=0)
    Traceback (most recent call last):
    ...
    toolkit.arguments.ArgumentError: seed: must be an integer >= 0, got True
    """
    rule = "an integer" + _bounds(minimum, above, maximum, below)
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ArgumentError(name, rule, value)
    integer = int(value)
    if not _within(integer, minimum, above, maximum, below):
        raise ArgumentError(name, rule, value)
    return integer


def number(
    value: object,
    name: str,
    *,
    minimum: float | None = None,
    above: float | None = None,
    maximum: float | None = None,
    below: float | None = None,
) -> float:
    """``value`` as a float if it is a finite real number within the bounds.

    >>> number(2, "rate", minimum=0)
    2.0
    >>> number(float("inf"), "rate", minimum=0)
    Traceback (most recent call last):
    ...
    toolkit.arguments.ArgumentError: rate: must be a finite number >= 0, got inf
    """
    rule = "a finite number" + _bounds(minimum, above, maximum, below)
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ArgumentError(name, rule, value)
    real = float(value)
    if not math.isfinite(real) or not _within(real, minimum, above, maximum, below):
        raise ArgumentError(name, rule, value)
    return real


def fraction(value: object, name: str) -> float:
    """``value`` as a float if it is a number from 0 to 1 inclusive (a share or probability).

    >>> fraction(0.25, "convert_share")
    0.25
    """
    return number(value, name, minimum=0, maximum=1)
