"""The one exception of :mod:`toolkit.amm`, and the checks of the Solidity integer types.

:class:`AmmError` is raised wherever the ported contract would ``require``/revert. Its message
names the contract's reason string when there is one
(``'UniswapV2Library: INSUFFICIENT_INPUT_AMOUNT'``, ``'T'``, ``'SPL'``, ...); for a bare
``require`` (FullMath, SafeCast, SqrtPriceMath) it names the library and the condition,
since the contract gives none.

A value that is not of the Solidity parameter type at all (a ``float``, a negative ``uint``, an
``int24`` out of range) is the caller's mistake rather than a revert: that raises
:class:`toolkit.arguments.ArgumentError` naming the argument and the rule.

>>> uint(2**128 - 1, 128, "liquidity")
340282366920938463463374607431768211455
>>> uint(-1, 128, "liquidity")
Traceback (most recent call last):
...
toolkit.arguments.ArgumentError: liquidity: must be a uint128 (an integer in [0, 2**128)), got -1
"""

from __future__ import annotations

from toolkit.arguments import ArgumentError
from toolkit.errors import ChainError

__all__ = ["AmmError", "ArgumentError", "sint", "uint"]


class AmmError(ChainError):
    """The contract reverted; the message is its reason string (or the failed condition).

    A :class:`~toolkit.errors.ChainError`: the ported contract would revert on chain.

    >>> str(AmmError("UniswapV2: K"))
    'UniswapV2: K'
    """


def uint(value: object, bits: int, name: str) -> int:
    """``value`` if it is an ``int`` in ``[0, 2**bits)`` (a Solidity ``uint<bits>``)."""
    if type(value) is not int or value < 0 or value >> bits:
        if not isinstance(value, bool) and isinstance(value, int) and 0 <= value < 1 << bits:
            return int(value)  # an int subclass (IntEnum, numpy ints are not int subclasses)
        raise ArgumentError(name, f"a uint{bits} (an integer in [0, 2**{bits}))", value)
    return value


def sint(value: object, bits: int, name: str) -> int:
    """``value`` if it is an ``int`` in ``[-2**(bits-1), 2**(bits-1))`` (a Solidity ``int<bits>``).

    >>> sint(-887272, 24, "tick")
    -887272
    >>> sint(2**23, 24, "tick")
    Traceback (most recent call last):
    ...
    toolkit.arguments.ArgumentError: tick: must be an int24 (...), got 8388608
    """
    half = 1 << (bits - 1)
    if isinstance(value, bool) or not isinstance(value, int) or not -half <= value < half:
        rule = f"an int{bits} (an integer in [-2**{bits - 1}, 2**{bits - 1}))"
        raise ArgumentError(name, rule, value)
    return int(value)
