"""Uniswap V2 swap math: ``UniswapV2Library`` quotes and a ``UniswapV2Pair`` that checks ``K``.

The contracts hard-code a 0.3 % fee as ``997 / 1000``; ``fee_bps`` generalises it. For a fee
in whole tenths of a percent (30 bps included) the arithmetic is the contract's own
(``1000 - fee_bps / 10`` over 1000, so the same products and the same overflow reverts);
other fees use ``10000 - fee_bps`` over 10000. Amounts are ``uint256``, reserves ``uint112``.

>>> get_amount_out(2, 100, 100), get_amount_in(1, 100, 100)
(1, 2)
>>> get_amount_out(0, 100, 100)
Traceback (most recent call last):
...
toolkit.amm.errors.AmmError: UniswapV2Library: INSUFFICIENT_INPUT_AMOUNT
>>> pair = Pair(5 * 10**18, 10 * 10**18)
>>> pair.swap(10**18, zero_for_one=True)
1662497915624478906
>>> pair.reserve0, pair.reserve1
(6000000000000000000, 8337502084375521094)
"""

from __future__ import annotations

from toolkit.amm.errors import AmmError, ArgumentError, uint

__all__ = ["MAX_UINT112", "Pair", "get_amount_in", "get_amount_out"]

MAX_UINT112 = (1 << 112) - 1
_MAX_UINT256 = (1 << 256) - 1


def _fee_scale(fee_bps: int) -> tuple[int, int]:
    """``(scale, scale - fee)``: ``(1000, 997)`` for 30 bps, as the contracts."""
    uint(fee_bps, 256, "fee_bps")
    if fee_bps >= 10_000:
        raise ArgumentError("fee_bps", "an integer in [0, 10000)", fee_bps)
    if fee_bps % 10 == 0:
        return 1000, 1000 - fee_bps // 10
    return 10_000, 10_000 - fee_bps


def _mul(x: int, y: int) -> int:
    """SafeMath ``mul`` (ds-math): reverts when the product overflows uint256."""
    z = x * y
    if z > _MAX_UINT256:
        raise AmmError("ds-math-mul-overflow")
    return z


def get_amount_out(amount_in: int, reserve_in: int, reserve_out: int, fee_bps: int = 30) -> int:
    """``UniswapV2Library.getAmountOut``: the output for an exact input, rounded down.

    >>> get_amount_out(10**18, 10**21, 10**21)
    996006981039903216
    """
    uint(amount_in, 256, "amount_in")
    uint(reserve_in, 256, "reserve_in")
    uint(reserve_out, 256, "reserve_out")
    scale, keep = _fee_scale(fee_bps)
    if amount_in == 0:
        raise AmmError("UniswapV2Library: INSUFFICIENT_INPUT_AMOUNT")
    if reserve_in == 0 or reserve_out == 0:
        raise AmmError("UniswapV2Library: INSUFFICIENT_LIQUIDITY")
    amount_in_with_fee = _mul(amount_in, keep)
    numerator = _mul(amount_in_with_fee, reserve_out)
    denominator = _mul(reserve_in, scale) + amount_in_with_fee
    if denominator > _MAX_UINT256:
        raise AmmError("ds-math-add-overflow")
    return numerator // denominator


def get_amount_in(amount_out: int, reserve_in: int, reserve_out: int, fee_bps: int = 30) -> int:
    """``UniswapV2Library.getAmountIn``: the input for an exact output, rounded up (``+ 1``).

    >>> get_amount_in(10**18, 5 * 10**18, 10 * 10**18)
    557227237267357629
    """
    uint(amount_out, 256, "amount_out")
    uint(reserve_in, 256, "reserve_in")
    uint(reserve_out, 256, "reserve_out")
    scale, keep = _fee_scale(fee_bps)
    if amount_out == 0:
        raise AmmError("UniswapV2Library: INSUFFICIENT_OUTPUT_AMOUNT")
    if reserve_in == 0 or reserve_out == 0:
        raise AmmError("UniswapV2Library: INSUFFICIENT_LIQUIDITY")
    numerator = _mul(_mul(reserve_in, amount_out), scale)
    if amount_out > reserve_out:
        raise AmmError("ds-math-sub-underflow")
    denominator = _mul(reserve_out - amount_out, keep)
    if denominator == 0:
        raise AmmError("UniswapV2Library: division by zero (amount_out == reserve_out)")
    return numerator // denominator + 1


class Pair:
    """The reserves of one ``UniswapV2Pair`` and its swaps.

    ``quote``-style methods (:meth:`get_amount_out`, :meth:`get_amount_in`) leave the reserves
    as they are; :meth:`swap`, :meth:`swap_for_exact` and :meth:`swap_raw` change them after
    the contract's checks ('UniswapV2: INSUFFICIENT_OUTPUT_AMOUNT', '...: INSUFFICIENT_LIQUIDITY',
    '...: INSUFFICIENT_INPUT_AMOUNT', 'UniswapV2: K', 'UniswapV2: OVERFLOW').

    >>> pair = Pair(5 * 10**18, 10 * 10**18)
    >>> pair.swap_raw(amount0_in=10**18, amount1_out=1662497915624478907)
    Traceback (most recent call last):
    ...
    toolkit.amm.errors.AmmError: UniswapV2: K
    """

    def __init__(self, reserve0: int, reserve1: int, fee_bps: int = 30) -> None:
        self.reserve0 = uint(reserve0, 112, "reserve0")
        self.reserve1 = uint(reserve1, 112, "reserve1")
        _fee_scale(fee_bps)
        self.fee_bps = fee_bps

    def __repr__(self) -> str:
        return f"Pair(reserve0={self.reserve0}, reserve1={self.reserve1}, fee_bps={self.fee_bps})"

    @property
    def k(self) -> int:
        """``reserve0 * reserve1``."""
        return self.reserve0 * self.reserve1

    def _reserves(self, zero_for_one: bool) -> tuple[int, int]:
        if not isinstance(zero_for_one, bool):
            raise ArgumentError("zero_for_one", "a bool", zero_for_one)
        return (self.reserve0, self.reserve1) if zero_for_one else (self.reserve1, self.reserve0)

    def get_amount_out(self, amount_in: int, zero_for_one: bool) -> int:
        """The output of an exact input (token0 in when ``zero_for_one``); no state change."""
        reserve_in, reserve_out = self._reserves(zero_for_one)
        return get_amount_out(amount_in, reserve_in, reserve_out, self.fee_bps)

    def get_amount_in(self, amount_out: int, zero_for_one: bool) -> int:
        """The input an exact output needs; no state change."""
        reserve_in, reserve_out = self._reserves(zero_for_one)
        return get_amount_in(amount_out, reserve_in, reserve_out, self.fee_bps)

    def swap(self, amount_in: int, zero_for_one: bool) -> int:
        """Swap an exact input: the router's ``getAmountOut`` then ``pair.swap``; the output."""
        amount_out = self.get_amount_out(amount_in, zero_for_one)
        if zero_for_one:
            self.swap_raw(amount0_in=amount_in, amount1_out=amount_out)
        else:
            self.swap_raw(amount1_in=amount_in, amount0_out=amount_out)
        return amount_out

    def swap_for_exact(self, amount_out: int, zero_for_one: bool) -> int:
        """Swap for an exact output: ``getAmountIn`` then ``pair.swap``; the input paid."""
        amount_in = self.get_amount_in(amount_out, zero_for_one)
        if zero_for_one:
            self.swap_raw(amount0_in=amount_in, amount1_out=amount_out)
        else:
            self.swap_raw(amount1_in=amount_in, amount0_out=amount_out)
        return amount_in

    def swap_raw(
        self,
        *,
        amount0_in: int = 0,
        amount1_in: int = 0,
        amount0_out: int = 0,
        amount1_out: int = 0,
    ) -> None:
        """``UniswapV2Pair.swap`` after ``amount*_in`` were transferred in: checks, then K.

        >>> pair = Pair(10**18, 10**18)
        >>> pair.swap_raw(amount0_in=1000, amount1_out=996); pair.k >= 10**36
        True
        """
        for value, name in (
            (amount0_in, "amount0_in"),
            (amount1_in, "amount1_in"),
            (amount0_out, "amount0_out"),
            (amount1_out, "amount1_out"),
        ):
            uint(value, 256, name)
        if amount0_out == 0 and amount1_out == 0:
            raise AmmError("UniswapV2: INSUFFICIENT_OUTPUT_AMOUNT")
        reserve0, reserve1 = self.reserve0, self.reserve1
        if not (amount0_out < reserve0 and amount1_out < reserve1):
            raise AmmError("UniswapV2: INSUFFICIENT_LIQUIDITY")
        balance0 = reserve0 + amount0_in - amount0_out
        balance1 = reserve1 + amount1_in - amount1_out
        # amountIn = balance > reserve - out ? balance - (reserve - out) : 0, i.e. amount_in
        if amount0_in == 0 and amount1_in == 0:
            raise AmmError("UniswapV2: INSUFFICIENT_INPUT_AMOUNT")
        scale, keep = _fee_scale(self.fee_bps)
        fee = scale - keep
        adjusted0 = _mul(balance0, scale) - _mul(amount0_in, fee)
        adjusted1 = _mul(balance1, scale) - _mul(amount1_in, fee)
        if _mul(adjusted0, adjusted1) < _mul(_mul(reserve0, reserve1), scale * scale):
            raise AmmError("UniswapV2: K")
        if balance0 > MAX_UINT112 or balance1 > MAX_UINT112:
            raise AmmError("UniswapV2: OVERFLOW")
        self.reserve0, self.reserve1 = balance0, balance1
