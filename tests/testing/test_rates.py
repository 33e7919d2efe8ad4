"""assert_rate_within: binomial z-score checks, with readable failures."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.testing import assert_rate_within


def test_passes_inside_the_band_and_returns_the_z_score() -> None:
    # 0.13 observed vs 0.12: se = sqrt(.12 * .88 / 400) = 0.016248
    z = assert_rate_within(52, 400, 0.12)
    assert z == pytest.approx(0.01 / math.sqrt(0.12 * 0.88 / 400))
    assert assert_rate_within(40, 400, 0.1) == 0.0


def test_fails_outside_the_band_with_the_z_score_in_the_message() -> None:
    with pytest.raises(AssertionError) as info:
        assert_rate_within(30, 100, 0.1)
    text = str(info.value)
    # se = 0.03, z = (0.3 - 0.1) / 0.03 = 6.667
    assert "observed rate 0.3 (30/100)" in text
    assert "+6.67 standard errors from the expected 0.1" in text
    assert "z = +6.667" in text
    assert "allowed |z| <= 3" in text
    assert "standard error 0.03" in text


def test_sigmas_sets_the_band() -> None:
    # se = 0.02 at p = 0.5, n = 625; 281/625 = 0.4496, z = -2.52: passes at 3, fails at 2
    assert assert_rate_within(281, 625, 0.5) == pytest.approx(-2.52)
    with pytest.raises(AssertionError, match=r"-2\.52 standard errors.*allowed \|z\| <= 2"):
        assert_rate_within(281, 625, 0.5, sigmas=2)


def test_degenerate_expected_rates_need_the_exact_rate() -> None:
    assert assert_rate_within(0, 10, 0.0) == 0.0
    assert assert_rate_within(10, 10, 1.0) == 0.0
    with pytest.raises(AssertionError, match=r"\+inf standard errors.*standard error 0"):
        assert_rate_within(1, 1000, 0.0)
    with pytest.raises(AssertionError, match=r"-inf standard errors"):
        assert_rate_within(999, 1000, 1.0)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        ((5, 0, 0.1), {}, ValueError, "trials: must be >= 1, got 0"),
        ((-1, 10, 0.1), {}, ValueError, "observed_hits: must be >= 0, got -1"),
        ((11, 10, 0.1), {}, ValueError, r"observed_hits: must be <= trials \(10\), got 11"),
        ((1.0, 10, 0.1), {}, TypeError, "observed_hits: must be an integer, got float"),
        ((True, 10, 0.1), {}, TypeError, "observed_hits: must be an integer, got bool"),
        ((1, 10.0, 0.1), {}, TypeError, "trials: must be an integer, got float"),
        ((1, 10, 1.5), {}, ValueError, "expected_rate: must be a number from 0 to 1, got 1.5"),
        ((1, 10, math.nan), {}, ValueError, "expected_rate: must be a number from 0 to 1"),
        ((1, 10, "0.1"), {}, ValueError, "expected_rate: must be a number from 0 to 1"),
        ((1, 10, 0.1), {"sigmas": 0}, ValueError, "sigmas: must be a number > 0, got 0"),
        ((1, 10, 0.1), {"sigmas": math.inf}, ValueError, "sigmas: must be a number > 0"),
    ],
)
def test_bad_input_names_the_argument(
    args: tuple[object, ...], kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        assert_rate_within(*args, **kwargs)  # type: ignore[arg-type]


def test_numpy_integers_are_accepted() -> None:
    import numpy as np

    assert assert_rate_within(np.int64(10), np.int32(100), 0.1) == 0.0  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(
    trials=st.integers(min_value=1, max_value=10_000),
    p=st.floats(min_value=0.01, max_value=0.99),
    data=st.data(),
)
def test_passes_exactly_when_the_z_score_is_inside_the_band(
    trials: int, p: float, data: st.DataObject
) -> None:
    hits = data.draw(st.integers(min_value=0, max_value=trials))
    z = (hits / trials - p) / math.sqrt(p * (1 - p) / trials)
    if abs(z) <= 3.0:
        assert assert_rate_within(hits, trials, p) == pytest.approx(z)
    else:
        with pytest.raises(AssertionError, match="standard errors from the expected"):
            assert_rate_within(hits, trials, p)


def test_a_given_standard_error_replaces_the_binomial_one() -> None:
    # 0.3 vs 0.1 is 6.7 binomial errors (0.03) at n = 100, but 2 errors of 0.1.
    assert assert_rate_within(30, 100, 0.1, std_error=0.1) == pytest.approx(2.0)
    with pytest.raises(AssertionError, match=r"\+4\.00 standard errors.*standard error 0\.05\)"):
        assert_rate_within(30, 100, 0.1, std_error=0.05)
    assert assert_rate_within(10, 100, 0.1, std_error=0.0) == 0.0
    with pytest.raises(AssertionError, match=r"\+inf standard errors"):
        assert_rate_within(11, 100, 0.1, std_error=0.0)


@pytest.mark.parametrize("bad", [-0.1, math.nan, math.inf, "0.1", True])
def test_a_bad_standard_error_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="std_error: must be a number >= 0"):
        assert_rate_within(1, 10, 0.1, std_error=bad)  # type: ignore[arg-type]
