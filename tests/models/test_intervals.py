"""The 95 % intervals against published values and against what they promise (coverage)."""

from __future__ import annotations

import random

import polars as pl
import pytest

from toolkit.arguments import ArgumentError
from toolkit.models.intervals import (
    clustered_share,
    mean_interval,
    median_interval,
    median_ranks,
    wilson,
    wilson_exprs,
)

# Newcombe (1998), "Two-sided confidence intervals for the single proportion: comparison of
# seven methods", Statistics in Medicine 17, Table II, method 3 (Wilson score, no correction).
NEWCOMBE = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
]


@pytest.mark.parametrize(("hits", "trials", "low", "high"), NEWCOMBE)
def test_wilson_matches_newcombes_table(hits: int, trials: int, low: float, high: float) -> None:
    assert wilson(hits, trials) == pytest.approx((low, high), abs=5e-5)


@pytest.mark.parametrize(("hits", "trials", "low", "high"), NEWCOMBE)
def test_the_column_form_is_the_same_interval(
    hits: int, trials: int, low: float, high: float
) -> None:
    frame = pl.DataFrame({"k": [hits], "n": [trials]}).select(wilson_exprs("k", "n", "x_"))
    assert frame.columns == ["x_ci95_low", "x_ci95_high"]
    assert frame.row(0) == pytest.approx(wilson(hits, trials), abs=1e-12)


def test_wilson_covers_about_95_percent_of_the_time() -> None:
    rng = random.Random(7)
    for p, n in [(0.02, 200), (0.3, 40), (0.5, 12)]:
        covered = 0
        for _ in range(2_000):
            hits = sum(rng.random() < p for _ in range(n))
            low, high = wilson(hits, n)
            covered += low <= p <= high
        # Wilson's coverage oscillates around the nominal 95 % (Brown, Cai & DasGupta 2001).
        assert 0.92 <= covered / 2_000 <= 0.985


def test_bad_counts_are_refused_by_name() -> None:
    with pytest.raises(ArgumentError, match="hits: must be at most trials"):
        wilson(5, 4)
    with pytest.raises(ArgumentError, match="trials: must be"):
        wilson(0, -1)
    assert wilson(0, 0) == (0.0, 1.0)


def test_clusters_that_disagree_widen_the_interval() -> None:
    even = clustered_share([4, 4, 4, 4], [12, 12, 12, 12])
    uneven = clustered_share([12, 0, 12, 0], [12, 12, 12, 12])
    assert (even[0], uneven[0]) == pytest.approx((1 / 3, 0.5))
    # Identical rounds give no clustered spread: the interval falls back to Wilson's, not 0.
    assert even[1:] == pytest.approx(wilson(16, 48))
    _, low, high = uneven
    assert low is not None and high is not None
    assert high - low > 0.9  # two all-refused rounds, two all-served: nothing known
    # The same share of independent trials has a Wilson interval far narrower.
    low, high = wilson(24, 48)
    assert high - low < 0.3
    assert clustered_share([3], [12]) == (0.25, 0.0, 1.0)
    assert clustered_share([], []) == (None, None, None)


def test_median_interval_uses_the_binomial_ranks() -> None:
    # Conover's table for n = 100 at 95 %: the 40th and 61st order statistics.
    assert median_ranks(100) == (40, 61)
    assert median_interval([float(v) for v in range(100, 0, -1)]) == (40.0, 61.0)
    assert median_interval([1.0, 2.0]) == (None, None)


def test_mean_interval_is_student_t() -> None:
    mean, low, high = mean_interval([1.0, 2.0, 3.0, 4.0])
    # sd 1.291, se 0.6455, t(3) = 3.182
    assert (mean, low, high) == pytest.approx((2.5, 2.5 - 2.054, 2.5 + 2.054), abs=1e-3)
    assert mean_interval([]) == (None, None, None)
