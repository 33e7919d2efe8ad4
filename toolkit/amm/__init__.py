"""Wei-exact ports of the Uniswap V2 and V3 swap math (stdlib only).

Integer for integer, the same results and the same reverts as the contracts:

- :mod:`toolkit.amm.v2`: ``UniswapV2Library.getAmountOut``/``getAmountIn`` and a
  :class:`~toolkit.amm.v2.Pair` whose swaps check ``K`` as ``UniswapV2Pair.swap`` does;
- :mod:`toolkit.amm.v3`: FullMath, UnsafeMath, SafeCast, LiquidityMath, TickMath,
  SqrtPriceMath, SwapMath, TickBitmap and a :class:`~toolkit.amm.v3.Pool` that mints, burns and
  swaps tick by tick, one bitmap word at a time, as ``UniswapV3Pool`` does.

On top of them, :mod:`toolkit.amm.routing` finds split routes across pools: every path within
a few hops, and the allocation that equalises the paths' marginal outputs, searched on float
curves (:mod:`toolkit.amm.curve`, :mod:`toolkit.amm.allocation`) and executed exactly on the
pools (:mod:`toolkit.amm.paths`).

Every ``require`` of the contracts raises :class:`AmmError`, including the 256-bit overflow
branches: Python integers do not overflow, so the ports mask or compare against ``2**256``
exactly where the EVM would wrap or revert.

>>> from toolkit.amm import routing, v2, v3
>>> v2.get_amount_out(10**18, 5 * 10**18, 10 * 10**18)
1662497915624478906
>>> v3.get_sqrt_ratio_at_tick(0)
79228162514264337593543950336
"""

from __future__ import annotations

from toolkit.amm import routing, v2, v3
from toolkit.amm.errors import AmmError

__all__ = ["AmmError", "routing", "v2", "v3"]
