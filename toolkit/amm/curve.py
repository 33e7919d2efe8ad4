"""A pool in one direction as a float curve: output, marginal output and its slope in O(log n).

Every V2 pair and every V3 range is a constant-product market: with liquidity ``L`` and the
square root ``q`` of the price of the input in the output token (smallest units), an input
``r`` net of the fee moves ``q`` to ``q' = L·q / (L + r·q)`` and pays out ``L·(q − q')``. So
one formula covers both directions (``q`` is ``√P`` selling token0 and ``1/√P`` selling
token1) and both pool kinds (a V2 pair is one unbounded range with ``L = √(x·y)``), and the
derivatives are closed forms: the marginal output is ``γ·q'²`` and its slope ``−2·γ²·q'³ / L``
(``γ`` = 1 − fee). A :class:`Curve` lays a V3 pool's initialised ticks out as ranges with
their cumulative capacities, so :meth:`Curve.at` finds the range an input ends in by bisection
and evaluates it in a few float operations, where the exact pool steps tick by tick through
its bitmap in 256-bit integers. Routing (:mod:`toolkit.amm.routing`) searches allocations on
these curves and executes only the chosen one exactly.

>>> from toolkit.amm.v2 import Pair
>>> curve = Curve.of_pair(Pair(10**21, 2 * 10**21), zero_for_one=True)
>>> out, marginal, slope = curve.at(10**18)
>>> round(out / 1e18, 9), round(marginal, 9), slope < 0     # get_amount_out: 1.992013962...
(1.992013962, 1.990029902, True)
>>> round(curve.at(0)[1], 12)                              # the mid price, net of the fee
1.994
>>> round(curve.needed(out) / 1e18, 9)                      # and back
1.0
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import OrderedDict
from functools import lru_cache

from toolkit.amm.v2 import Pair
from toolkit.amm.v3.pool import Pool
from toolkit.amm.v3.tick_math import get_sqrt_ratio_at_tick

__all__ = ["CURVES_KEPT", "Curve"]

#: How many curves :meth:`Curve.cached` keeps (least recently used first out).
CURVES_KEPT = 4096

_Q96 = float(1 << 96)


@lru_cache(maxsize=1 << 16)
def _sqrt_ratio(tick: int) -> float:
    """``TickMath.getSqrtRatioAtTick`` as a float (a pure function of the tick: kept)."""
    return get_sqrt_ratio_at_tick(tick) / _Q96


_CURVES: OrderedDict[tuple[object, ...], Curve] = OrderedDict()


class Curve:
    """Ranges ``k`` of liquidity ``liquidity[k]`` from ``starts[k]`` down to ``ends[k]`` (in
    ``q``), in the order an input crosses them; ``gamma`` is one minus the fee.

    ``capacity`` is the largest input (fee included) the ranges take: beyond it the output
    stays at its total and the marginal output is 0 (the pool has run dry).
    """

    __slots__ = ("capacity", "cum_in", "cum_out", "gamma", "liquidity", "starts")

    def __init__(
        self, gamma: float, starts: list[float], liquidity: list[float], ends: list[float]
    ) -> None:
        self.gamma = gamma
        self.starts = starts
        self.liquidity = liquidity
        self.cum_in: list[float] = []  # input net of the fee that fills ranges 0..k
        self.cum_out: list[float] = []
        total_in = total_out = 0.0
        for q, big_l, end in zip(starts, liquidity, ends, strict=True):
            if end <= 0.0:  # an unbounded range (a V2 pair)
                total_in = math.inf
                total_out += big_l * q
            else:
                total_in += big_l * (1.0 / end - 1.0 / q)
                total_out += big_l * (q - end)
            self.cum_in.append(total_in)
            self.cum_out.append(total_out)
        self.capacity = total_in / gamma

    @classmethod
    def of_pair(cls, pair: Pair, *, zero_for_one: bool) -> Curve:
        """A V2 pair selling token0 (``zero_for_one``) or token1."""
        reserve_in, reserve_out = (
            (pair.reserve0, pair.reserve1) if zero_for_one else (pair.reserve1, pair.reserve0)
        )
        gamma = 1.0 - pair.fee_bps / 10_000
        if reserve_in == 0 or reserve_out == 0:
            return cls(gamma, [], [], [])
        big_l = math.sqrt(float(reserve_in)) * math.sqrt(float(reserve_out))
        return cls(gamma, [math.sqrt(reserve_out / reserve_in)], [big_l], [0.0])

    @classmethod
    def of_pool(cls, pool: Pool, *, zero_for_one: bool) -> Curve:
        """A V3 pool selling token0 (``zero_for_one``: the price falls through the initialised
        ticks at or below the current one) or token1 (rising through those above)."""
        gamma = 1.0 - pool.fee / 1_000_000
        sqrt_price = pool.sqrt_price_x96 / _Q96
        liquidity = float(pool.liquidity)
        ticks = pool.ticks
        if zero_for_one:
            crossed = sorted((t for t in ticks if t <= pool.tick), reverse=True)
            q = sqrt_price
        else:
            crossed = sorted(t for t in ticks if t > pool.tick)
            q = 1.0 / sqrt_price
        starts, liquidities, ends = [], [], []
        for tick in crossed:
            boundary = _sqrt_ratio(tick)
            end = boundary if zero_for_one else 1.0 / boundary
            starts.append(q)
            liquidities.append(liquidity)
            ends.append(end)
            net = float(ticks[tick].liquidity_net)
            liquidity = max(0.0, liquidity - net if zero_for_one else liquidity + net)
            q = end
        return cls(gamma, starts, liquidities, ends)

    @classmethod
    def cached(cls, pool: Pair | Pool, *, zero_for_one: bool) -> Curve:
        """:meth:`of_pair` / :meth:`of_pool`, remembered by everything they read (a V2 pair's
        reserves and fee; a V3 pool's fee, price, tick, liquidity and its ticks' net
        liquidity): route searches on one snapshot's pools build each curve once. A curve is a
        pure function of that state, so a pool that changed is simply a new key."""
        if isinstance(pool, Pair):
            key: tuple[object, ...] = (zero_for_one, pool.reserve0, pool.reserve1, pool.fee_bps)
        else:
            ticks = pool.ticks
            mixed = sum(hash((tick, info.liquidity_net)) for tick, info in ticks.items())
            key = (zero_for_one, pool.fee, pool.sqrt_price_x96, pool.tick, pool.liquidity,
                   len(ticks), mixed)  # fmt: skip
        curve = _CURVES.get(key)
        if curve is None:
            if isinstance(pool, Pair):
                curve = cls.of_pair(pool, zero_for_one=zero_for_one)
            else:
                curve = cls.of_pool(pool, zero_for_one=zero_for_one)
            _CURVES[key] = curve
            if len(_CURVES) > CURVES_KEPT:
                _CURVES.popitem(last=False)
        else:
            _CURVES.move_to_end(key)
        return curve

    def at(self, amount_in: float) -> tuple[float, float, float]:
        """``(output, marginal output, its slope)`` for ``amount_in`` (fee included)."""
        if not self.starts:
            return 0.0, 0.0, 0.0
        gamma = self.gamma
        net = amount_in * gamma
        k = bisect_right(self.cum_in, net)
        if k == len(self.starts):  # beyond the last range: dry
            return self.cum_out[-1], 0.0, 0.0
        before_in = self.cum_in[k - 1] if k else 0.0
        before_out = self.cum_out[k - 1] if k else 0.0
        q, big_l = self.starts[k], self.liquidity[k]
        spent = net - before_in
        denominator = big_l + spent * q
        moved = big_l * q / denominator
        return (
            before_out + big_l * spent * q * q / denominator,  # L·(q − q'), without cancelling
            gamma * moved * moved,
            -2.0 * gamma * gamma * moved**3 / big_l,
        )

    def needed(self, amount_out: float) -> float:
        """The input (fee included) that pays ``amount_out``: :attr:`capacity` when the ranges
        hold less (the inverse of :meth:`at`'s output)."""
        if not self.starts or amount_out >= self.cum_out[-1]:
            return self.capacity
        if amount_out <= 0.0:
            return 0.0
        k = bisect_right(self.cum_out, amount_out)
        before_in = self.cum_in[k - 1] if k else 0.0
        before_out = self.cum_out[k - 1] if k else 0.0
        q, big_l = self.starts[k], self.liquidity[k]
        paid = amount_out - before_out
        moved = q - paid / big_l
        return (before_in + paid / (q * moved)) / self.gamma  # L·(1/q' − 1/q), likewise
