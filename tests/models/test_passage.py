"""The inventory's walk: normal tails against libm, the reflected law against the reflection
principle, the stationary exponential law and seeded walks; the folded law likewise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from toolkit.models.passage import folded_cdf, normal_sf, reflected_cdf


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def test_normal_tail_is_within_numerical_recipes_error_of_libm() -> None:
    xs = np.linspace(-8.0, 37.0, 4001)
    reference = np.array([0.5 * math.erfc(x / math.sqrt(2.0)) for x in xs])
    relative = np.abs(normal_sf(xs) - reference) / reference
    assert float(relative.max()) < 1.2e-7


@pytest.mark.parametrize(
    ("start", "level", "t"), [(0.0, 1.0, 1.0), (2.0, 1.5, 3.0), (1.0, 4.0, 0.5)]
)
def test_drift_free_reflected_walk_is_the_folded_normal(
    start: float, level: float, t: float
) -> None:
    # Reflection principle: X_t = |x0 + W_t|, so P(X ≤ y) = Φ((y − x0)/√t) − Φ((−y − x0)/√t).
    expected = _phi((level - start) / math.sqrt(t)) - _phi((-level - start) / math.sqrt(t))
    assert float(reflected_cdf(level, start, 0.0, 1.0, t)) == pytest.approx(expected, abs=1e-7)


@pytest.mark.parametrize(("drain", "variance"), [(0.5, 1.0), (2.0, 3.0)])
def test_a_draining_walk_settles_to_the_exponential_law(drain: float, variance: float) -> None:
    # A reflected walk drifting towards 0 is stationary with P(X ≤ y) = 1 − exp(−2νy/s²).
    for level in (0.1, 1.0, 3.0):
        expected = 1.0 - math.exp(-2 * drain * level / variance)
        got = float(reflected_cdf(level, 1.0, drain, variance, 1e6))
        assert got == pytest.approx(expected, abs=1e-6)


def _walk(start: float, drain: float, t: float, ceiling: float | None) -> np.ndarray:
    rng = np.random.default_rng(7)
    steps, paths = 2000, 20_000
    dt = t / steps
    x = np.full(paths, start)
    for _ in range(steps):
        x = np.abs(x - drain * dt - math.sqrt(dt) * rng.standard_normal(paths))
        if ceiling is not None:
            x = np.where(x > ceiling, 2 * ceiling - x, x)
    return x


@pytest.mark.parametrize("drain", [0.4, -0.4])
def test_reflected_law_matches_a_seeded_walk(drain: float) -> None:
    x = _walk(1.0, drain, 5.0, None)
    for level in (0.3, 1.0, 2.5):
        share = float(np.mean(x <= level))
        error = math.sqrt(share * (1 - share) / x.size)
        # Four standard errors plus the Euler scheme's bias at this step (~0.01).
        assert abs(float(reflected_cdf(level, 1.0, drain, 1.0, 5.0)) - share) < 4 * error + 0.01


def test_folded_law_matches_a_seeded_walk_and_tends_to_uniform() -> None:
    x = _walk(1.0, 0.0, 5.0, 1.5)
    for level in (0.3, 1.0, 1.4):
        share = float(np.mean(x <= level))
        assert abs(float(folded_cdf(level, 1.0, 0.0, 1.0, 5.0, 1.5)) - share) < 0.015
    assert float(folded_cdf(0.25, 0.9, 0.0, 1.0, 1e5, 1.0)) == pytest.approx(0.25, abs=1e-3)
    assert float(folded_cdf(2.0, 0.9, 0.0, 1.0, 1.0, 1.0)) == 1.0


def test_a_walk_without_variance_is_a_straight_line() -> None:
    # From 5, drained at 1 a second: at t = 2 the inventory is exactly 3.
    assert [float(reflected_cdf(y, 5.0, 1.0, 0.0, 2.0)) for y in (2.9, 3.0)] == [0.0, 1.0]


def test_bad_ceiling_is_named() -> None:
    with pytest.raises(ValueError, match="ceiling"):
        folded_cdf(1.0, 1.0, 0.0, 1.0, 1.0, 0.0)
