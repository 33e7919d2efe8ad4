"""SqrtPriceMath of v3-core: next sqrt prices and token deltas between two sqrt prices.

Rounding always favours the pool: inputs round up, outputs round down. The 256-bit overflow
branches of the contract are taken exactly where the EVM would take them (``amount * sqrtP``
wrapping, ``numerator1 + product`` wrapping, ``toUint160`` reverts).

>>> p = 2**96  # price 1
>>> get_next_sqrt_price_from_input(p, 10**18, 10**17, False)
87150978765690771352898345369
>>> get_amount1_delta(p, 87150978765690771352898345369, 10**18, True)
100000000000000000
>>> get_next_sqrt_price_from_output(p, 1, 2**256 - 1, True)
Traceback (most recent call last):
...
toolkit.amm.errors.AmmError: FullMath: result overflows uint256 (require(denominator > prod1))
"""

from __future__ import annotations

from toolkit.amm.errors import AmmError, sint, uint
from toolkit.amm.v3.full_math import (
    MAX_UINT160,
    MAX_UINT256,
    Q96,
    div_rounding_up,
    mul_div,
    mul_div_rounding_up,
    to_int256,
    to_uint160,
)

__all__ = [
    "get_amount0_delta",
    "get_amount0_delta_signed",
    "get_amount1_delta",
    "get_amount1_delta_signed",
    "get_next_sqrt_price_from_amount0_rounding_up",
    "get_next_sqrt_price_from_amount1_rounding_down",
    "get_next_sqrt_price_from_input",
    "get_next_sqrt_price_from_output",
]


def get_next_sqrt_price_from_amount0_rounding_up(
    sqrt_px96: int, liquidity: int, amount: int, add: bool
) -> int:
    """``getNextSqrtPriceFromAmount0RoundingUp``: the price after ``amount`` of token0 in/out.

    Here ``amount * sqrtPX96`` overflows 256 bits, so the contract's fallback branch runs:

    >>> get_next_sqrt_price_from_amount0_rounding_up(2**160 - 1, 2**128 - 1, 2**200, True)
    16777216
    """
    uint(sqrt_px96, 160, "sqrt_px96")
    uint(liquidity, 128, "liquidity")
    uint(amount, 256, "amount")
    return _next_from_amount0(sqrt_px96, liquidity, amount, add)


def _next_from_amount0(sqrt_px96: int, liquidity: int, amount: int, add: bool) -> int:
    if amount == 0:
        return sqrt_px96
    numerator1 = liquidity << 96
    product = amount * sqrt_px96
    product_fits = product <= MAX_UINT256  # (product = amount * sqrtPX96) / amount == sqrtPX96
    if add:
        if product_fits:
            denominator = numerator1 + product
            if denominator <= MAX_UINT256:  # denominator >= numerator1: the sum did not wrap
                return mul_div_rounding_up(numerator1, sqrt_px96, denominator)
        # LowGasSafeMath.add: (numerator1 / sqrtPX96).add(amount)
        divisor = numerator1 // sqrt_px96 + amount
        if divisor > MAX_UINT256:
            raise AmmError("LowGasSafeMath: add overflow")
        return div_rounding_up(numerator1, divisor) & MAX_UINT160  # uint160(...) truncates
    if not (product_fits and numerator1 > product):
        raise AmmError(
            "SqrtPriceMath: require((product = amount * sqrtPX96) / amount == sqrtPX96 "
            "&& numerator1 > product)"
        )
    return to_uint160(mul_div_rounding_up(numerator1, sqrt_px96, numerator1 - product))


def get_next_sqrt_price_from_amount1_rounding_down(
    sqrt_px96: int, liquidity: int, amount: int, add: bool
) -> int:
    """``getNextSqrtPriceFromAmount1RoundingDown``: the price after ``amount`` of token1 in/out.

    >>> get_next_sqrt_price_from_amount1_rounding_down(2**96, 2**96, 1, False)
    79228162514264337593543950335
    """
    uint(sqrt_px96, 160, "sqrt_px96")
    uint(liquidity, 128, "liquidity")
    uint(amount, 256, "amount")
    if liquidity == 0:
        raise AmmError("SqrtPriceMath: division by zero liquidity")
    return _next_from_amount1(sqrt_px96, liquidity, amount, add)


def _next_from_amount1(sqrt_px96: int, liquidity: int, amount: int, add: bool) -> int:
    if add:
        if amount <= MAX_UINT160:
            quotient = (amount << 96) // liquidity
        else:
            quotient = mul_div(amount, Q96, liquidity)
        result = sqrt_px96 + quotient
        if result > MAX_UINT256:
            raise AmmError("LowGasSafeMath: add overflow")
        return to_uint160(result)
    if amount <= MAX_UINT160:
        quotient = div_rounding_up(amount << 96, liquidity)
    else:
        quotient = mul_div_rounding_up(amount, Q96, liquidity)
    if not sqrt_px96 > quotient:
        raise AmmError("SqrtPriceMath: require(sqrtPX96 > quotient)")
    return sqrt_px96 - quotient


def _check_price_liquidity(sqrt_px96: int, liquidity: int) -> None:
    if sqrt_px96 == 0:
        raise AmmError("SqrtPriceMath: require(sqrtPX96 > 0)")
    if liquidity == 0:
        raise AmmError("SqrtPriceMath: require(liquidity > 0)")


def get_next_sqrt_price_from_input(
    sqrt_px96: int, liquidity: int, amount_in: int, zero_for_one: bool
) -> int:
    """``getNextSqrtPriceFromInput``: the price after ``amount_in`` of the input token.

    Token0 in (``zero_for_one``) rounds the price up, token1 in rounds it down, so the price
    never passes the target. Reverts for a zero price or zero liquidity.
    """
    uint(sqrt_px96, 160, "sqrt_px96")
    uint(liquidity, 128, "liquidity")
    uint(amount_in, 256, "amount_in")
    return _next_from_input(sqrt_px96, liquidity, amount_in, zero_for_one)


def _next_from_input(sqrt_px96: int, liquidity: int, amount_in: int, zero_for_one: bool) -> int:
    _check_price_liquidity(sqrt_px96, liquidity)
    if zero_for_one:
        return _next_from_amount0(sqrt_px96, liquidity, amount_in, True)
    return _next_from_amount1(sqrt_px96, liquidity, amount_in, True)


def get_next_sqrt_price_from_output(
    sqrt_px96: int, liquidity: int, amount_out: int, zero_for_one: bool
) -> int:
    """``getNextSqrtPriceFromOutput``: the price after ``amount_out`` of the output token.

    Reverts for a zero price, zero liquidity, or an output the virtual reserves cannot pay.
    """
    uint(sqrt_px96, 160, "sqrt_px96")
    uint(liquidity, 128, "liquidity")
    uint(amount_out, 256, "amount_out")
    return _next_from_output(sqrt_px96, liquidity, amount_out, zero_for_one)


def _next_from_output(sqrt_px96: int, liquidity: int, amount_out: int, zero_for_one: bool) -> int:
    _check_price_liquidity(sqrt_px96, liquidity)
    if zero_for_one:
        return _next_from_amount1(sqrt_px96, liquidity, amount_out, False)
    return _next_from_amount0(sqrt_px96, liquidity, amount_out, False)


def get_amount0_delta(sqrt_a: int, sqrt_b: int, liquidity: int, round_up: bool) -> int:
    """``getAmount0Delta``: ``liquidity / sqrt(lower) - liquidity / sqrt(upper)`` of token0.

    The prices may come in either order; reverts if the lower one is 0.

    >>> get_amount0_delta(2**96, 87150978765690771352898345369, 10**18, True)
    90909090909090910
    """
    uint(sqrt_a, 160, "sqrt_a")
    uint(sqrt_b, 160, "sqrt_b")
    uint(liquidity, 128, "liquidity")
    return _amount0_delta(sqrt_a, sqrt_b, liquidity, round_up)


def _amount0_delta(sqrt_a: int, sqrt_b: int, liquidity: int, round_up: bool) -> int:
    if sqrt_a > sqrt_b:
        sqrt_a, sqrt_b = sqrt_b, sqrt_a
    numerator1 = liquidity << 96
    numerator2 = sqrt_b - sqrt_a
    if sqrt_a == 0:
        raise AmmError("SqrtPriceMath: require(sqrtRatioAX96 > 0)")
    if round_up:
        return div_rounding_up(mul_div_rounding_up(numerator1, numerator2, sqrt_b), sqrt_a)
    return mul_div(numerator1, numerator2, sqrt_b) // sqrt_a


def get_amount1_delta(sqrt_a: int, sqrt_b: int, liquidity: int, round_up: bool) -> int:
    """``getAmount1Delta``: ``liquidity * (sqrt(upper) - sqrt(lower))`` of token1.

    >>> get_amount1_delta(2**96, 2 * 2**96, 10**18, False)
    1000000000000000000
    """
    uint(sqrt_a, 160, "sqrt_a")
    uint(sqrt_b, 160, "sqrt_b")
    uint(liquidity, 128, "liquidity")
    return _amount1_delta(sqrt_a, sqrt_b, liquidity, round_up)


def _amount1_delta(sqrt_a: int, sqrt_b: int, liquidity: int, round_up: bool) -> int:
    if sqrt_a > sqrt_b:
        sqrt_a, sqrt_b = sqrt_b, sqrt_a
    if round_up:
        return mul_div_rounding_up(liquidity, sqrt_b - sqrt_a, Q96)
    return mul_div(liquidity, sqrt_b - sqrt_a, Q96)


def get_amount0_delta_signed(sqrt_a: int, sqrt_b: int, liquidity: int) -> int:
    """The ``int128 liquidity`` overload: owed to the pool (> 0) when adding, rounded up.

    >>> get_amount0_delta_signed(2**96, 2 * 2**96, -(10**18))
    -500000000000000000
    """
    uint(sqrt_a, 160, "sqrt_a")
    uint(sqrt_b, 160, "sqrt_b")
    sint(liquidity, 128, "liquidity")
    return _amount0_delta_signed(sqrt_a, sqrt_b, liquidity)


def _amount0_delta_signed(sqrt_a: int, sqrt_b: int, liquidity: int) -> int:
    if liquidity < 0:
        return -to_int256(_amount0_delta(sqrt_a, sqrt_b, -liquidity, False))
    return to_int256(_amount0_delta(sqrt_a, sqrt_b, liquidity, True))


def get_amount1_delta_signed(sqrt_a: int, sqrt_b: int, liquidity: int) -> int:
    """The ``int128 liquidity`` overload of :func:`get_amount1_delta`.

    >>> get_amount1_delta_signed(2**96, 2 * 2**96, 10**18)
    1000000000000000000
    """
    uint(sqrt_a, 160, "sqrt_a")
    uint(sqrt_b, 160, "sqrt_b")
    sint(liquidity, 128, "liquidity")
    return _amount1_delta_signed(sqrt_a, sqrt_b, liquidity)


def _amount1_delta_signed(sqrt_a: int, sqrt_b: int, liquidity: int) -> int:
    if liquidity < 0:
        return -to_int256(_amount1_delta(sqrt_a, sqrt_b, -liquidity, False))
    return to_int256(_amount1_delta(sqrt_a, sqrt_b, liquidity, True))
