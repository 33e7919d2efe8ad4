"""Float curves against the exact pools: outputs, marginal outputs and their inverse."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.amm.curve import Curve
from toolkit.amm.v2 import Pair
from toolkit.amm.v3 import Pool
from toolkit.amm.v3.tick_math import MAX_SQRT_RATIO, MIN_SQRT_RATIO, get_sqrt_ratio_at_tick


def ranged_pool() -> Pool:
    """Three overlapping positions: the curve has five ranges either way, one of them empty."""
    pool = Pool(3000, 60, get_sqrt_ratio_at_tick(30))
    pool.mint(-600, 600, 10**21)
    pool.mint(-60, 60, 10**22)
    pool.mint(1200, 6000, 10**20)  # above a gap with no liquidity
    pool.mint(-6000, -1200, 10**20)
    return pool


@settings(max_examples=60, deadline=None)
@given(zero_for_one=st.booleans(), amount=st.integers(10**12, 10**22))
def test_the_curve_pays_what_the_pool_pays(zero_for_one: bool, amount: int) -> None:
    pool = ranged_pool()
    curve = Curve.of_pool(pool, zero_for_one=zero_for_one)
    limit = MIN_SQRT_RATIO + 1 if zero_for_one else MAX_SQRT_RATIO - 1
    amount0, amount1 = pool.quote(zero_for_one, amount, limit)
    spent, paid = (amount0, -amount1) if zero_for_one else (amount1, -amount0)
    out, marginal, slope = curve.at(amount)
    if spent < amount:  # the pool ran dry: so does the curve, at the same output
        assert amount > curve.capacity * (1 - 1e-9)
        assert out == pytest.approx(paid, rel=1e-9) and marginal == 0.0
        return
    assert out == pytest.approx(paid, rel=1e-9)
    assert marginal > 0 and slope < 0
    assert curve.needed(out) == pytest.approx(amount, rel=1e-9)


def test_the_marginal_output_is_the_derivative_of_the_output() -> None:
    for curve in (
        Curve.of_pool(ranged_pool(), zero_for_one=True),
        Curve.of_pool(ranged_pool(), zero_for_one=False),
        Curve.of_pair(Pair(10**21, 3 * 10**21), zero_for_one=False),
    ):
        for amount in (10**15, 10**18, 10**19):
            out, marginal, slope = curve.at(amount)
            step = amount * 1e-6
            assert (curve.at(amount + step)[0] - out) / step == pytest.approx(marginal, rel=1e-5)
            up = curve.at(amount + step)[1]
            assert (up - marginal) / step == pytest.approx(slope, rel=1e-3)


def test_an_empty_pool_is_a_dry_curve() -> None:
    curve = Curve.of_pool(Pool(500, 10, get_sqrt_ratio_at_tick(0)), zero_for_one=True)
    assert curve.capacity == 0 and curve.at(10**18) == (0.0, 0.0, 0.0)
    assert curve.needed(5.0) == 0.0
