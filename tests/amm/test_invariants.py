"""Property tests: no swap creates value, round trips never pay less, prices move one way."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.amm import AmmError
from toolkit.amm.v2 import Pair
from toolkit.amm.v3 import MAX_SQRT_RATIO, MIN_SQRT_RATIO, Pool, compute_swap_step

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
reserves = st.integers(min_value=1000, max_value=2**100)
amounts = st.integers(min_value=1, max_value=2**96)


@SETTINGS
@given(reserves, reserves, amounts, st.booleans(), st.sampled_from([0, 5, 30, 100]))
def test_v2_swap_creates_no_value(
    r0: int, r1: int, amount: int, zero_for_one: bool, fee: int
) -> None:
    pair = Pair(r0, r1, fee)
    k = pair.k
    reserve_out = r1 if zero_for_one else r0
    try:
        out = pair.swap(amount, zero_for_one)
    except AmmError:
        return  # an output of 0 or an overflow of uint112: the contract reverts too
    assert out < reserve_out
    assert pair.k >= k


@SETTINGS
@given(reserves, reserves, amounts, st.booleans())
def test_v2_exact_out_round_trip_never_pays_less(r0: int, r1: int, amount: int, zfo: bool) -> None:
    pair = Pair(r0, r1)
    try:
        out = pair.get_amount_out(amount, zfo)
        needed = pair.get_amount_in(out, zfo)
    except AmmError:
        return
    # the input quoted for an exact output really buys it (getAmountIn rounds up, + 1)
    assert pair.get_amount_out(needed, zfo) >= out


prices = st.integers(min_value=MIN_SQRT_RATIO, max_value=MAX_SQRT_RATIO)
liquidities = st.integers(min_value=1, max_value=2**128 - 1)
fees = st.sampled_from([100, 500, 3000, 10000])


@SETTINGS
@given(prices, prices, liquidities, st.integers(min_value=1, max_value=2**200), fees)
def test_v3_step_exact_in_never_overpays(
    p: int, target: int, liquidity: int, amount: int, fee: int
) -> None:
    try:
        q, amount_in, amount_out, fee_amount = compute_swap_step(p, target, liquidity, amount, fee)
    except AmmError:
        return
    assert amount_in + fee_amount <= amount
    low, high = min(p, target), max(p, target)
    assert low <= q <= high  # never past the target, always towards it
    zero_for_one = p >= target
    # what is paid out is never worth more than the input at the better of start/end prices:
    # token1 per token0 is (sqrtP / 2**96)**2, so compare amounts cross-multiplied
    better = max(p, q) if zero_for_one else min(p, q)
    if zero_for_one:
        assert amount_out * 2**192 <= amount_in * better * better
    else:
        assert amount_out * better * better <= amount_in * 2**192


@SETTINGS
@given(
    prices,
    prices,
    st.integers(min_value=10**12, max_value=2**128 - 1),
    st.integers(min_value=10**9, max_value=2**200),
    fees,
)
def test_v3_step_exact_out_round_trip(
    p: int, target: int, liquidity: int, amount: int, fee: int
) -> None:
    try:
        q, _, amount_out, _ = compute_swap_step(p, target, liquidity, amount, fee)
        if amount_out == 0:
            return
        _, _, back_out, _ = compute_swap_step(p, target, liquidity, -amount_out, fee)
    except AmmError:
        return
    # an exact output is never overpaid out, and stops at the same target
    assert back_out <= amount_out
    if q == target:
        assert back_out == amount_out


def _pool(spacing_positions: list[tuple[int, int]]) -> Pool:
    pool = Pool(3000, 60, 2**96)
    pool.mint(-887220, 887220, 10**18)
    for lower, upper in spacing_positions:
        pool.mint(lower * 60, upper * 60, 10**17)
    return pool


ranges = st.lists(
    st.tuples(st.integers(-200, 199), st.integers(1, 50)).map(lambda t: (t[0], t[0] + t[1])),
    max_size=6,
)


@settings(max_examples=30, deadline=None)
@given(ranges, st.booleans(), st.integers(min_value=1, max_value=10**19), st.booleans())
def test_v3_pool_swaps_move_price_one_way_and_conserve(
    positions: list[tuple[int, int]], zero_for_one: bool, amount: int, exact_out: bool
) -> None:
    pool = _pool(positions)
    before = pool.sqrt_price_x96
    limit = MIN_SQRT_RATIO + 1 if zero_for_one else MAX_SQRT_RATIO - 1
    specified = -amount if exact_out else amount
    quoted = pool.quote(zero_for_one, specified, limit)
    assert pool.sqrt_price_x96 == before  # quote leaves the pool alone
    amount0, amount1 = pool.swap(zero_for_one, specified, limit)
    assert (amount0, amount1) == quoted
    paid, received = (amount0, -amount1) if zero_for_one else (amount1, -amount0)
    assert paid >= 0 and received >= 0
    if zero_for_one:
        assert pool.sqrt_price_x96 <= before
    else:
        assert pool.sqrt_price_x96 >= before
    if exact_out:
        assert received <= amount
    else:
        assert paid <= amount
    # swapping straight back never returns more than was paid
    if received > 0:
        back_limit = MAX_SQRT_RATIO - 1 if zero_for_one else MIN_SQRT_RATIO + 1
        back0, back1 = pool.swap(not zero_for_one, received, back_limit)
        returned = -back0 if zero_for_one else -back1
        assert returned <= paid
