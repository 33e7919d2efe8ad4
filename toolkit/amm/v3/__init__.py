"""Uniswap V3 math, ported from ``Uniswap/v3-core`` ``main`` (solidity 0.7.6) integer for integer.

The modules mirror the Solidity libraries: :mod:`~toolkit.amm.v3.full_math` (FullMath,
UnsafeMath, SafeCast, LiquidityMath), :mod:`~toolkit.amm.v3.tick_math`,
:mod:`~toolkit.amm.v3.sqrt_price_math`, :mod:`~toolkit.amm.v3.swap_math`,
:mod:`~toolkit.amm.v3.tick_bitmap` and :mod:`~toolkit.amm.v3.pool` (``UniswapV3Pool``).

>>> sqrt_p = get_sqrt_ratio_at_tick(0)
>>> compute_swap_step(sqrt_p, get_sqrt_ratio_at_tick(-60), 10**18, 10**15, 3000)
(79149250711305166342700278159, 997000000000000, 996006981039903, 3000000000000)
"""

from __future__ import annotations

from toolkit.amm.v3.full_math import (
    Q96,
    Q128,
    add_delta,
    div_rounding_up,
    mul_div,
    mul_div_rounding_up,
    to_int128,
    to_int256,
    to_uint160,
)
from toolkit.amm.v3.pool import (
    DepthExceeded,
    Pool,
    TickInfo,
    tick_spacing_to_max_liquidity_per_tick,
)
from toolkit.amm.v3.sqrt_price_math import (
    get_amount0_delta,
    get_amount0_delta_signed,
    get_amount1_delta,
    get_amount1_delta_signed,
    get_next_sqrt_price_from_amount0_rounding_up,
    get_next_sqrt_price_from_amount1_rounding_down,
    get_next_sqrt_price_from_input,
    get_next_sqrt_price_from_output,
)
from toolkit.amm.v3.swap_math import compute_swap_step
from toolkit.amm.v3.tick_bitmap import flip_tick, next_initialized_tick_within_one_word
from toolkit.amm.v3.tick_math import (
    MAX_SQRT_RATIO,
    MAX_TICK,
    MIN_SQRT_RATIO,
    MIN_TICK,
    get_sqrt_ratio_at_tick,
    get_tick_at_sqrt_ratio,
)

__all__ = [
    "MAX_SQRT_RATIO",
    "MAX_TICK",
    "MIN_SQRT_RATIO",
    "MIN_TICK",
    "Q96",
    "Q128",
    "DepthExceeded",
    "Pool",
    "TickInfo",
    "add_delta",
    "compute_swap_step",
    "div_rounding_up",
    "flip_tick",
    "get_amount0_delta",
    "get_amount0_delta_signed",
    "get_amount1_delta",
    "get_amount1_delta_signed",
    "get_next_sqrt_price_from_amount0_rounding_up",
    "get_next_sqrt_price_from_amount1_rounding_down",
    "get_next_sqrt_price_from_input",
    "get_next_sqrt_price_from_output",
    "get_sqrt_ratio_at_tick",
    "get_tick_at_sqrt_ratio",
    "mul_div",
    "mul_div_rounding_up",
    "next_initialized_tick_within_one_word",
    "tick_spacing_to_max_liquidity_per_tick",
    "to_int128",
    "to_int256",
    "to_uint160",
]
