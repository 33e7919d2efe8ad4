"""The one check of a numeric argument, and the one message that names it.

Every public function of the toolkit checks its numeric arguments here, so a bad value reads the
same everywhere: ``"<name>: must be <rule>, got <value>"``, raised as ``ValueError``. ``bool`` is
never a number (``True`` is an ``int`` in Python, never what a caller meant), and a float is
always finite.

Stdlib only, and it imports no other toolkit module: every layer may use it.

>>> whole(3, "rounds", minimum=1)
3
>>> number(0, "duration", above=0)
Traceback (most recent call last):
...
ValueError: duration: must be a finite number > 0, got 0
"""

from __future__ import annotations

import math
from numbers import Integral, Real

__all__ = ["fraction", "number", "whole"]


def _bounds(minimum: float | None, above: float | None, maximum: float | None) -> str:
    parts = []
    if minimum is not None:
        parts.append(f">= {minimum:g}")
    if above is not None:
        parts.append(f"> {above:g}")
    if maximum is not None:
        parts.append(f"<= {maximum:g}")
    return (" " + " and ".join(parts)) if parts else ""


def _within(
    value: float, minimum: float | None, above: float | None, maximum: float | None
) -> bool:
    return (
        (minimum is None or value >= minimum)
        and (above is None or value > above)
        and (maximum is None or value <= maximum)
    )


def whole(
    value: object,
    name: str,
    *,
    minimum: int | None = None,
    above: int | None = None,
    maximum: int | None = None,
) -> int:
    """``value`` if it is an integer within the bounds (``numpy`` integers included).

    >>> whole(0, "seed", minimum=0)
    0
    >>> whole(True, "seed", minimum=0)
    Traceback (most recent call last):
    ...
    ValueError: seed: must be an integer >= 0, got True
    """
    rule = "an integer" + _bounds(minimum, above, maximum)
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name}: must be {rule}, got {value!r}")
    integer = int(value)
    if not _within(integer, minimum, above, maximum):
        raise ValueError(f"{name}: must be {rule}, got {value!r}")
    return integer


def number(
    value: object,
    name: str,
    *,
    minimum: float | None = None,
    above: float | None = None,
    maximum: float | None = None,
) -> float:
    """``value`` as a float if it is a finite real number within the bounds.

    >>> number(2, "rate", minimum=0)
    2.0
    >>> number(float("inf"), "rate", minimum=0)
    Traceback (most recent call last):
    ...
    ValueError: rate: must be a finite number >= 0, got inf
    """
    rule = "a finite number" + _bounds(minimum, above, maximum)
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name}: must be {rule}, got {value!r}")
    real = float(value)
    if not math.isfinite(real) or not _within(real, minimum, above, maximum):
        raise ValueError(f"{name}: must be {rule}, got {value!r}")
    return real


def fraction(value: object, name: str) -> float:
    """``value`` as a float if it is a number from 0 to 1 inclusive (a share or probability).

    >>> fraction(0.25, "convert_share")
    0.25
    """
    return number(value, name, minimum=0, maximum=1)
