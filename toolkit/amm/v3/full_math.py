"""FullMath, UnsafeMath, SafeCast and LiquidityMath of v3-core, with their reverts.

Python integers are unbounded, so each function checks what the EVM would: a ``mulDiv`` whose
result does not fit 256 bits reverts (``require(denominator > prod1)``), as does a zero
denominator; ``divRoundingUp`` by zero returns 0 (assembly ``div`` by zero is 0, no revert).

>>> mul_div(2**255, 2, 4)
28948022309329048855892746252171976963317496166410141009864396001978282409984
>>> mul_div(2**255, 4, 2)
Traceback (most recent call last):
...
toolkit.amm.errors.AmmError: FullMath: result overflows uint256 (require(denominator > prod1))
>>> mul_div_rounding_up(5, 1, 2), div_rounding_up(5, 2), div_rounding_up(5, 0)
(3, 3, 0)
>>> add_delta(1, -2)
Traceback (most recent call last):
...
toolkit.amm.errors.AmmError: LS
"""

from __future__ import annotations

from toolkit.amm.errors import AmmError

__all__ = [
    "MAX_UINT128",
    "MAX_UINT160",
    "MAX_UINT256",
    "Q96",
    "Q128",
    "add_delta",
    "div_rounding_up",
    "mul_div",
    "mul_div_rounding_up",
    "to_int128",
    "to_int256",
    "to_uint160",
]

Q96 = 1 << 96
Q128 = 1 << 128
MAX_UINT128 = (1 << 128) - 1
MAX_UINT160 = (1 << 160) - 1
MAX_UINT256 = (1 << 256) - 1
MASK256 = MAX_UINT256


def mul_div(a: int, b: int, denominator: int) -> int:
    """``FullMath.mulDiv``: ``floor(a * b / denominator)`` with full 512-bit precision.

    Reverts when ``denominator == 0`` or the result does not fit in 256 bits.
    """
    if denominator == 0:
        raise AmmError("FullMath: denominator is zero (require(denominator > 0))")
    result = a * b // denominator
    if result > MAX_UINT256:
        raise AmmError("FullMath: result overflows uint256 (require(denominator > prod1))")
    return result


def mul_div_rounding_up(a: int, b: int, denominator: int) -> int:
    """``FullMath.mulDivRoundingUp``: ``ceil(a * b / denominator)``, same reverts as mulDiv.

    >>> mul_div_rounding_up(MAX_UINT256, MAX_UINT256 - 1, MAX_UINT256)
    115792089237316195423570985008687907853269984665640564039457584007913129639934
    """
    result = mul_div(a, b, denominator)
    if (a * b) % denominator:
        if result >= MAX_UINT256:
            raise AmmError("FullMath: rounded-up result overflows uint256")
        result += 1
    return result


def div_rounding_up(x: int, y: int) -> int:
    """``UnsafeMath.divRoundingUp``: ``ceil(x / y)``; ``0`` when ``y == 0`` (EVM ``div``)."""
    if y == 0:
        return 0
    return -(-x // y)


def to_uint160(y: int) -> int:
    """``SafeCast.toUint160``: reverts unless ``y < 2**160``."""
    if y > MAX_UINT160:
        raise AmmError("SafeCast: toUint160 overflow")
    return y


def to_int128(y: int) -> int:
    """``SafeCast.toInt128``: reverts unless ``-2**127 <= y < 2**127``."""
    if not -(1 << 127) <= y < 1 << 127:
        raise AmmError("SafeCast: toInt128 overflow")
    return y


def to_int256(y: int) -> int:
    """``SafeCast.toInt256`` (from ``uint256``): reverts unless ``y < 2**255``."""
    if y >= 1 << 255:
        raise AmmError("SafeCast: toInt256 overflow")
    return y


def add_delta(x: int, y: int) -> int:
    """``LiquidityMath.addDelta``: ``x + y`` for uint128 ``x``, int128 ``y``; 'LS' / 'LA'.

    >>> add_delta(10, -3), add_delta(MAX_UINT128 - 1, 1)
    (7, 340282366920938463463374607431768211455)
    """
    if y < 0:
        z = x + y
        if z < 0:
            raise AmmError("LS")
        return z
    z = x + y
    if z > MAX_UINT128:
        raise AmmError("LA")
    return z
