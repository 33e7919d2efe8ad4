from hypothesis import given
from hypothesis import strategies as st

from toolkit.engine import exact_input, exact_output, premium_bps, tier_fee_bps

TIERS = ((10, 100, 5), (100, 1000, 3))


def test_tier_bounds():
    assert tier_fee_bps(TIERS, 9) is None
    assert tier_fee_bps(TIERS, 10) == 5
    assert tier_fee_bps(TIERS, 99) == 5
    assert tier_fee_bps(TIERS, 100) == 3
    assert tier_fee_bps(TIERS, 1000) == 3  # the last tier includes its maximum
    assert tier_fee_bps(TIERS, 1001) is None


def test_premium_is_zero_below_the_kink_and_capped():
    assert premium_bps(80, 100, 8000, 25) == 0
    assert premium_bps(81, 100, 8000, 25) == 2  # 25 * 1/20 = 1.25, rounded up
    assert premium_bps(100, 100, 8000, 25) == 25
    assert premium_bps(150, 100, 8000, 25) == 25
    assert premium_bps(100, 100, 8000, 0) == 0


def test_exact_input_rounds_the_fee_up():
    assert exact_input(10_001, 5, 0) == (10_001, 9_995, 6)
    assert exact_input(100, 0, 7) == (100, 93, 0)


@given(
    output=st.integers(1, 10**30),
    fee_bps=st.integers(0, 9_999),
    fill_cost=st.integers(0, 10**20),
)
def test_exact_output_charges_the_smallest_sufficient_input(output, fee_bps, fill_cost):
    input_amount, out, fee = exact_output(output, fee_bps, fill_cost)
    assert out == output
    assert exact_input(input_amount, fee_bps, fill_cost)[1] >= output
    assert exact_input(input_amount - 1, fee_bps, fill_cost)[1] < output
    assert fee == exact_input(input_amount, fee_bps, fill_cost)[2]


@given(
    used=st.integers(0, 10**25),
    balance=st.integers(1, 10**25),
    kink=st.integers(0, 9_999),
    cap=st.integers(0, 500),
)
def test_premium_is_bounded_and_monotone(used, balance, kink, cap):
    p = premium_bps(used, balance, kink, cap)
    assert 0 <= p <= cap
    assert premium_bps(used + balance // 10 + 1, balance, kink, cap) >= p
