"""A ``UniswapV3Pool`` port: mint, burn and swap with the contract's state and rounding.

What is ported: ``slot0`` (``sqrt_price_x96``, ``tick``), in-range ``liquidity``, the ticks
(``liquidityGross``, ``liquidityNet``, ``feeGrowthOutside{0,1}X128``), the tick bitmap,
``feeGrowthGlobal{0,1}X128``, and the swap loop stepping through the bitmap one 256-bit word at
a time exactly as ``UniswapV3Pool.swap`` does (a swap that crossed a whole range in one step
would differ from the contract by a few wei: each word boundary is a step of its own).

Left out: the protocol fee (``feeProtocol`` is 0, so ``protocolFees`` never grow), the oracle
observations, per-owner positions and their ``tokensOwed`` fee accounting (positions are keyed
by their tick range only; :meth:`Pool.burn` returns the principal the contract would credit),
token transfers and callbacks (amounts are returned instead), and the reentrancy lock.

>>> from toolkit.amm.v3.tick_math import MIN_SQRT_RATIO
>>> pool = Pool(3000, 60, 2**96)  # 0.3 %, price 1
>>> pool.mint(-887220, 887220, 2 * 10**18)
(2000000000000000000, 2000000000000000000)
>>> pool.quote(True, 10**18, MIN_SQRT_RATIO + 1)
(1000000000000000000, -665331998665331998)
>>> pool.swap(True, 10**18, MIN_SQRT_RATIO + 1)
(1000000000000000000, -665331998665331998)
>>> pool.tick, pool.fee_growth_global0_x128
(-8090, 510423550381407695195061911147652317)
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.amm.errors import AmmError, ArgumentError, sint, uint
from toolkit.amm.v3.full_math import MAX_UINT128, MAX_UINT256, Q128, add_delta, mul_div, to_int128
from toolkit.amm.v3.sqrt_price_math import _amount0_delta_signed, _amount1_delta_signed
from toolkit.amm.v3.swap_math import _compute_swap_step
from toolkit.amm.v3.tick_bitmap import flip_tick, next_initialized_tick_within_one_word
from toolkit.amm.v3.tick_math import (
    MAX_SQRT_RATIO,
    MAX_TICK,
    MIN_SQRT_RATIO,
    MIN_TICK,
    _sqrt_ratio_at_tick,
    _tick_at_sqrt_ratio,
)

__all__ = ["DepthExceeded", "Pool", "TickInfo", "tick_spacing_to_max_liquidity_per_tick"]

_MAX_INT256 = (1 << 255) - 1
_MIN_INT256 = -(1 << 255)


class DepthExceeded(AmmError):
    """A swap would move the price of a pool known only within ``bounds`` (a snapshot read to a
    depth) outside them, where its initialised ticks were not read: the quote would not be the
    chain's.

    >>> print(DepthExceeded(-9000, (-7680, 7679)))
    beyond the snapshot's depth: the price would reach tick -9000, the snapshot knows [-7680, 7679]
    """

    def __init__(self, tick: int, bounds: tuple[int, int]) -> None:
        super().__init__(
            f"beyond the snapshot's depth: the price would reach tick {tick}, "
            f"the snapshot knows [{bounds[0]}, {bounds[1]}]"
        )
        self.tick = tick
        self.bounds = bounds


def tick_spacing_to_max_liquidity_per_tick(tick_spacing: int) -> int:
    """``Tick.tickSpacingToMaxLiquidityPerTick``: ``uint128.max`` over the usable ticks.

    >>> tick_spacing_to_max_liquidity_per_tick(60)
    11505743598341114571880798222544994
    """
    min_tick = -(-MIN_TICK // tick_spacing) * tick_spacing  # Solidity `/` truncates to zero
    max_tick = MAX_TICK // tick_spacing * tick_spacing
    num_ticks = (max_tick - min_tick) // tick_spacing + 1
    return MAX_UINT128 // num_ticks


@dataclass(slots=True)
class TickInfo:
    """``Tick.Info`` without the oracle fields."""

    liquidity_gross: int = 0
    liquidity_net: int = 0
    fee_growth_outside0_x128: int = 0
    fee_growth_outside1_x128: int = 0


class Pool:
    """One V3 pool: ``Pool(fee, tick_spacing, sqrt_price_x96)`` is ``createPool`` + ``initialize``.

    ``fee`` is in pips (500, 3000, 10000); the state attributes read as the contract's getters.
    """

    def __init__(self, fee: int, tick_spacing: int, sqrt_price_x96: int) -> None:
        uint(fee, 24, "fee")
        if fee >= 10**6:
            raise ArgumentError("fee", "< 1000000 pips", fee)
        sint(tick_spacing, 24, "tick_spacing")
        if not 0 < tick_spacing < 16384:
            raise ArgumentError("tick_spacing", "in (0, 16384)", tick_spacing)
        uint(sqrt_price_x96, 160, "sqrt_price_x96")
        self.fee = fee
        self.tick_spacing = tick_spacing
        self.max_liquidity_per_tick = tick_spacing_to_max_liquidity_per_tick(tick_spacing)
        self.tick = _tick_at_sqrt_ratio(sqrt_price_x96)  # 'R' out of range
        self.sqrt_price_x96 = sqrt_price_x96
        self.liquidity = 0
        self.fee_growth_global0_x128 = 0
        self.fee_growth_global1_x128 = 0
        self.ticks: dict[int, TickInfo] = {}
        self.tick_bitmap: dict[int, int] = {}
        self.positions: dict[tuple[int, int], int] = {}
        #: ``(min_tick, max_tick)`` the pool's ticks are known for (a snapshot read to a
        #: depth), or None for a pool known whole: a swap ending outside raises
        #: :class:`DepthExceeded` instead of answering from ticks it does not know.
        self.bounds: tuple[int, int] | None = None

    def __deepcopy__(self, memo: dict[int, object]) -> Pool:
        """An independent copy (routes execute on copies of the pools): the scalar state as is,
        the tick, bitmap and position tables copied; much faster than the generic deep copy.

        >>> import copy
        >>> pool = Pool(3000, 60, 2**96)
        >>> _ = pool.mint(-60, 60, 10**18)
        >>> twin = copy.deepcopy(pool)
        >>> _ = twin.swap(True, 10**15, 2**96 - 2**80)
        >>> (twin.tick, pool.tick), pool.ticks[-60] is not twin.ticks[-60]
        ((-1, 0), True)
        """
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.ticks = {
            tick: TickInfo(
                info.liquidity_gross,
                info.liquidity_net,
                info.fee_growth_outside0_x128,
                info.fee_growth_outside1_x128,
            )
            for tick, info in self.ticks.items()
        }
        clone.tick_bitmap = dict(self.tick_bitmap)
        clone.positions = dict(self.positions)
        memo[id(self)] = clone
        return clone

    def __repr__(self) -> str:
        return (
            f"Pool(fee={self.fee}, tick_spacing={self.tick_spacing}, "
            f"sqrt_price_x96={self.sqrt_price_x96}, tick={self.tick}, liquidity={self.liquidity})"
        )

    # -- liquidity ---------------------------------------------------------------------------

    def mint(self, tick_lower: int, tick_upper: int, amount: int) -> tuple[int, int]:
        """Add ``amount`` of liquidity on ``[tick_lower, tick_upper)``: ``(amount0, amount1)`` owed.

        Reverts as the contract: 'TLU', 'TLM', 'TUM', 'LO' (above the per-tick maximum), and a
        bare ``require(amount > 0)``.
        """
        uint(amount, 128, "amount")
        if amount == 0:
            raise AmmError("UniswapV3Pool.mint: require(amount > 0)")
        amount0, amount1 = self._modify_position(tick_lower, tick_upper, amount)
        return amount0, amount1

    def burn(self, tick_lower: int, tick_upper: int, amount: int) -> tuple[int, int]:
        """Remove ``amount`` of liquidity: ``(amount0, amount1)`` credited, rounded down.

        Fees earned are not returned (the contract adds them to ``tokensOwed``, not ported).
        """
        uint(amount, 128, "amount")
        held = self.positions.get((tick_lower, tick_upper), 0)
        if amount > held:
            raise AmmError("LS")
        amount0, amount1 = self._modify_position(tick_lower, tick_upper, -amount)
        return -amount0, -amount1

    def _modify_position(self, tick_lower: int, tick_upper: int, delta: int) -> tuple[int, int]:
        sint(tick_lower, 24, "tick_lower")
        sint(tick_upper, 24, "tick_upper")
        if tick_lower >= tick_upper:
            raise AmmError("TLU")
        if tick_lower < MIN_TICK:
            raise AmmError("TLM")
        if tick_upper > MAX_TICK:
            raise AmmError("TUM")
        key = (tick_lower, tick_upper)
        held = self.positions.get(key, 0)
        if delta == 0 and held == 0:
            raise AmmError("NP")
        if delta != 0:
            # every revert of the update first, so a failed call leaves the pool unchanged
            for edge in (tick_lower, tick_upper):
                if edge % self.tick_spacing:
                    raise AmmError("TickBitmap: require(tick % tickSpacing == 0)")
                info = self.ticks.get(edge)
                if (
                    add_delta(info.liquidity_gross if info else 0, delta)
                    > self.max_liquidity_per_tick
                ):
                    raise AmmError("LO")
            held = add_delta(held, delta)
            flipped_lower = self._update_tick(tick_lower, delta, upper=False)
            flipped_upper = self._update_tick(tick_upper, delta, upper=True)
            if flipped_lower:
                flip_tick(self.tick_bitmap, tick_lower, self.tick_spacing)
            if flipped_upper:
                flip_tick(self.tick_bitmap, tick_upper, self.tick_spacing)
            if delta < 0:
                if flipped_lower:
                    del self.ticks[tick_lower]
                if flipped_upper:
                    del self.ticks[tick_upper]
            if held:
                self.positions[key] = held
            else:
                self.positions.pop(key, None)
        amount0 = amount1 = 0
        if delta != 0:
            sqrt_lower = _sqrt_ratio_at_tick(tick_lower)
            sqrt_upper = _sqrt_ratio_at_tick(tick_upper)
            if self.tick < tick_lower:
                amount0 = _amount0_delta_signed(sqrt_lower, sqrt_upper, delta)
            elif self.tick < tick_upper:
                amount0 = _amount0_delta_signed(self.sqrt_price_x96, sqrt_upper, delta)
                amount1 = _amount1_delta_signed(sqrt_lower, self.sqrt_price_x96, delta)
                self.liquidity = add_delta(self.liquidity, delta)
            else:
                amount1 = _amount1_delta_signed(sqrt_lower, sqrt_upper, delta)
        return amount0, amount1

    def _update_tick(self, tick: int, delta: int, *, upper: bool) -> bool:
        info = self.ticks.get(tick)
        if info is None:
            info = self.ticks[tick] = TickInfo()
        gross_before = info.liquidity_gross
        gross_after = add_delta(gross_before, delta)
        flipped = (gross_after == 0) != (gross_before == 0)
        if gross_before == 0 and tick <= self.tick:
            # by convention, all growth before a tick was initialized happened below it
            info.fee_growth_outside0_x128 = self.fee_growth_global0_x128
            info.fee_growth_outside1_x128 = self.fee_growth_global1_x128
        info.liquidity_gross = gross_after
        net = info.liquidity_net - delta if upper else info.liquidity_net + delta
        info.liquidity_net = to_int128(net)
        return flipped

    # -- swaps -------------------------------------------------------------------------------

    def swap(
        self, zero_for_one: bool, amount_specified: int, sqrt_price_limit_x96: int
    ) -> tuple[int, int]:
        """``UniswapV3Pool.swap``: ``(amount0, amount1)``, positive = paid into the pool.

        ``amount_specified > 0`` is an exact input, ``< 0`` an exact output. Reverts 'AS' for a
        zero amount and 'SPL' for a price limit on the wrong side of the price or out of range.
        """
        return self._swap(zero_for_one, amount_specified, sqrt_price_limit_x96, commit=True)

    def quote(
        self, zero_for_one: bool, amount_specified: int, sqrt_price_limit_x96: int
    ) -> tuple[int, int]:
        """What :meth:`swap` would return, without changing the pool."""
        return self._swap(zero_for_one, amount_specified, sqrt_price_limit_x96, commit=False)

    def _swap(
        self, zero_for_one: bool, amount_specified: int, sqrt_price_limit_x96: int, *, commit: bool
    ) -> tuple[int, int]:
        if not isinstance(zero_for_one, bool):
            raise ArgumentError("zero_for_one", "a bool", zero_for_one)
        sint(amount_specified, 256, "amount_specified")
        uint(sqrt_price_limit_x96, 160, "sqrt_price_limit_x96")
        if amount_specified == 0:
            raise AmmError("AS")
        sqrt_price = self.sqrt_price_x96
        if zero_for_one:
            if not (MIN_SQRT_RATIO < sqrt_price_limit_x96 < sqrt_price):
                raise AmmError("SPL")
        elif not (sqrt_price < sqrt_price_limit_x96 < MAX_SQRT_RATIO):
            raise AmmError("SPL")

        exact_input = amount_specified > 0
        remaining = amount_specified
        calculated = 0
        tick = self.tick
        liquidity = self.liquidity
        fee = self.fee
        tick_spacing = self.tick_spacing
        bitmap = self.tick_bitmap
        ticks = self.ticks
        fee_growth_global = (
            self.fee_growth_global0_x128 if zero_for_one else self.fee_growth_global1_x128
        )
        crossed: list[tuple[int, int]] = []  # (tick, feeGrowthGlobal of the input token)
        bounds = self.bounds

        while remaining != 0 and sqrt_price != sqrt_price_limit_x96:
            sqrt_price_start = sqrt_price
            tick_next, initialized = next_initialized_tick_within_one_word(
                bitmap, tick, tick_spacing, zero_for_one
            )
            if tick_next < MIN_TICK:
                tick_next = MIN_TICK
            elif tick_next > MAX_TICK:
                tick_next = MAX_TICK
            sqrt_price_next = _sqrt_ratio_at_tick(tick_next)
            if zero_for_one:
                target = (
                    sqrt_price_limit_x96
                    if sqrt_price_next < sqrt_price_limit_x96
                    else sqrt_price_next
                )
            else:
                target = (
                    sqrt_price_limit_x96
                    if sqrt_price_next > sqrt_price_limit_x96
                    else sqrt_price_next
                )
            sqrt_price, amount_in, amount_out, fee_amount = _compute_swap_step(
                sqrt_price, target, liquidity, remaining, fee
            )
            paid = (amount_in + fee_amount) & MAX_UINT256
            if exact_input:
                remaining = _wrap_int256(remaining - _to_int256(paid))
                calculated = _checked_int256(calculated - _to_int256(amount_out))
            else:
                remaining = _wrap_int256(remaining + _to_int256(amount_out))
                calculated = _checked_int256(calculated + _to_int256(paid))
            if liquidity > 0:
                fee_growth_global = (
                    fee_growth_global + mul_div(fee_amount, Q128, liquidity)
                ) & MAX_UINT256
            if sqrt_price == sqrt_price_next:
                if initialized:
                    liquidity_net = ticks[tick_next].liquidity_net
                    crossed.append((tick_next, fee_growth_global))
                    liquidity = add_delta(
                        liquidity, -liquidity_net if zero_for_one else liquidity_net
                    )
                tick = tick_next - 1 if zero_for_one else tick_next
            elif sqrt_price != sqrt_price_start:
                tick = _tick_at_sqrt_ratio(sqrt_price)
            if bounds is not None and not bounds[0] <= tick <= bounds[1]:
                raise DepthExceeded(tick, bounds)  # the price is monotonic: no way back

        if zero_for_one == exact_input:
            amount0, amount1 = amount_specified - remaining, calculated
        else:
            amount0, amount1 = calculated, amount_specified - remaining
        if commit:
            for crossed_tick, growth in crossed:  # Tick.cross: flip the growth outside
                info = ticks[crossed_tick]
                growth0 = growth if zero_for_one else self.fee_growth_global0_x128
                growth1 = self.fee_growth_global1_x128 if zero_for_one else growth
                info.fee_growth_outside0_x128 = (
                    growth0 - info.fee_growth_outside0_x128
                ) & MAX_UINT256
                info.fee_growth_outside1_x128 = (
                    growth1 - info.fee_growth_outside1_x128
                ) & MAX_UINT256
            self.sqrt_price_x96 = sqrt_price
            self.tick = tick
            self.liquidity = liquidity
            if zero_for_one:
                self.fee_growth_global0_x128 = fee_growth_global
            else:
                self.fee_growth_global1_x128 = fee_growth_global
        return amount0, amount1


def _to_int256(value: int) -> int:
    if value > _MAX_INT256:
        raise AmmError("SafeCast: toInt256 overflow")
    return value


def _wrap_int256(value: int) -> int:
    # the contract's `+=`/`-=` on amountSpecifiedRemaining is unchecked (solidity 0.7)
    return ((value - _MIN_INT256) & MAX_UINT256) + _MIN_INT256


def _checked_int256(value: int) -> int:
    # LowGasSafeMath.add/sub on int256 revert on overflow
    if not _MIN_INT256 <= value <= _MAX_INT256:
        raise AmmError("LowGasSafeMath: int256 overflow")
    return value
