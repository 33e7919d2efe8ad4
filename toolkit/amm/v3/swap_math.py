"""SwapMath of v3-core: one swap step within a single initialized-tick range.

``compute_swap_step`` is ``SwapMath.computeSwapStep`` of Uniswap/v3-core ``main``: exact input
when ``amount_remaining >= 0``, exact output when negative; the direction is inferred from the
target (``sqrt_price_current >= sqrt_price_target`` is zero for one).

>>> compute_swap_step(2**96, 79623317895830914510639640423, 2 * 10**18, 10**18, 600)
(79623317895830914510639640423, 9975124224178055, 9925619580021728, 5988667735148)
"""

from __future__ import annotations

from toolkit.amm.errors import AmmError, sint, uint
from toolkit.amm.v3.full_math import mul_div, mul_div_rounding_up
from toolkit.amm.v3.sqrt_price_math import (
    _amount0_delta,
    _amount1_delta,
    _next_from_input,
    _next_from_output,
)

__all__ = ["compute_swap_step"]


def compute_swap_step(
    sqrt_price_current: int,
    sqrt_price_target: int,
    liquidity: int,
    amount_remaining: int,
    fee_pips: int,
) -> tuple[int, int, int, int]:
    """``(sqrt_price_next, amount_in, amount_out, fee_amount)`` of one step, as the contract.

    ``fee_pips`` is in hundredths of a bip (3000 = 0.3 %). ``amount_in + fee_amount`` never
    exceeds an exact input; ``amount_out`` never exceeds an exact output.
    """
    uint(sqrt_price_current, 160, "sqrt_price_current")
    uint(sqrt_price_target, 160, "sqrt_price_target")
    uint(liquidity, 128, "liquidity")
    sint(amount_remaining, 256, "amount_remaining")
    uint(fee_pips, 24, "fee_pips")
    if fee_pips >= 10**6:
        # 1e6 - feePips underflows to a huge uint256 in the contract; no pool allows it
        raise AmmError("SwapMath: fee_pips must be < 1e6")
    return _compute_swap_step(
        sqrt_price_current, sqrt_price_target, liquidity, amount_remaining, fee_pips
    )


def _compute_swap_step(
    sqrt_p: int, sqrt_target: int, liquidity: int, amount_remaining: int, fee_pips: int
) -> tuple[int, int, int, int]:
    zero_for_one = sqrt_p >= sqrt_target
    exact_in = amount_remaining >= 0
    amount_in = 0
    amount_out = 0
    if exact_in:
        amount_remaining_less_fee = mul_div(amount_remaining, 10**6 - fee_pips, 10**6)
        if zero_for_one:
            amount_in = _amount0_delta(sqrt_target, sqrt_p, liquidity, True)
        else:
            amount_in = _amount1_delta(sqrt_p, sqrt_target, liquidity, True)
        if amount_remaining_less_fee >= amount_in:
            sqrt_next = sqrt_target
        else:
            sqrt_next = _next_from_input(sqrt_p, liquidity, amount_remaining_less_fee, zero_for_one)
    else:
        wanted = -amount_remaining
        if zero_for_one:
            amount_out = _amount1_delta(sqrt_target, sqrt_p, liquidity, False)
        else:
            amount_out = _amount0_delta(sqrt_p, sqrt_target, liquidity, False)
        if wanted >= amount_out:
            sqrt_next = sqrt_target
        else:
            sqrt_next = _next_from_output(sqrt_p, liquidity, wanted, zero_for_one)

    reached = sqrt_target == sqrt_next
    if zero_for_one:
        if not (reached and exact_in):
            amount_in = _amount0_delta(sqrt_next, sqrt_p, liquidity, True)
        if not (reached and not exact_in):
            amount_out = _amount1_delta(sqrt_next, sqrt_p, liquidity, False)
    else:
        if not (reached and exact_in):
            amount_in = _amount1_delta(sqrt_p, sqrt_next, liquidity, True)
        if not (reached and not exact_in):
            amount_out = _amount0_delta(sqrt_p, sqrt_next, liquidity, False)

    if not exact_in and amount_out > -amount_remaining:
        amount_out = -amount_remaining

    if exact_in and sqrt_next != sqrt_target:
        # the target was not reached: the remainder of the maximum input is the fee
        fee_amount = amount_remaining - amount_in
    else:
        fee_amount = mul_div_rounding_up(amount_in, fee_pips, 10**6 - fee_pips)
    return sqrt_next, amount_in, amount_out, fee_amount
