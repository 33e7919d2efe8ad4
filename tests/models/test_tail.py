"""Value at risk and expected shortfall against outside references: closed forms and a sort."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.arguments import ArgumentError
from toolkit.models import monte_carlo, tail_risk
from toolkit.models.health import CreditBook, MarketParameters

STANDARD = NormalDist()


def _normal_grid(n: int, mu: float, sigma: float) -> np.ndarray:
    """``n`` equally likely losses at the mid-quantiles of N(mu, sigma²): a sample with no
    sampling noise, whose tail mean converges to the distribution's."""
    probs = (np.arange(n) + 0.5) / n
    return np.array([mu + sigma * STANDARD.inv_cdf(float(p)) for p in probs])


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.975, 0.99])
@pytest.mark.parametrize(("mu", "sigma"), [(0.0, 1.0), (250.0, 40.0)])
def test_normal_losses_match_the_closed_form(mu: float, sigma: float, confidence: float) -> None:
    """Reference: for normal losses, VaR_a = μ + σ Φ⁻¹(a) and ES_a = μ + σ φ(Φ⁻¹(a)) / (1 − a)
    (McNeil, Frey and Embrechts, *Quantitative Risk Management*, 2015, example 2.14)."""
    var, es = tail_risk(_normal_grid(200_000, mu, sigma), confidence)
    z = STANDARD.inv_cdf(confidence)
    assert var == pytest.approx(mu + sigma * z, abs=2e-3 * sigma)
    assert es == pytest.approx(mu + sigma * STANDARD.pdf(z) / (1 - confidence), abs=2e-3 * sigma)


@pytest.mark.parametrize("confidence", [0.95, 0.99])
def test_lognormal_losses_match_the_closed_form(confidence: float) -> None:
    """Reference: for L = exp(μ + σZ), VaR_a = exp(μ + σ Φ⁻¹(a)) and
    ES_a = exp(μ + σ²/2) Φ(σ − Φ⁻¹(a)) / (1 − a) (McNeil, Frey and Embrechts, QRM, 2015,
    exercise 2.4; the partial expectation of a lognormal). Checked on a seeded sample of one
    million draws, within six standard errors of the tail mean."""
    mu, sigma = 2.0, 0.5
    losses = np.exp(mu + sigma * np.random.default_rng(7).standard_normal(1_000_000))
    var, es = tail_risk(losses, confidence)
    z = STANDARD.inv_cdf(confidence)
    expected = math.exp(mu + sigma**2 / 2) * STANDARD.cdf(sigma - z) / (1 - confidence)
    tail = losses[losses >= var]
    standard_error = tail.std() / math.sqrt(tail.size)
    assert var == pytest.approx(math.exp(mu + sigma * z), rel=5e-3)
    assert abs(es - expected) < 6 * standard_error


def _brute_force(losses: list[float], confidence: Fraction) -> tuple[float, float]:
    """The lower quantile ``inf{ℓ : F(ℓ) ≥ a}`` and the weighted tail mean by hand: sort worst
    first, give each scenario 1/n of weight until 1 − a is used up, in exact fractions (Acerbi
    and Tasche 2002, definition 2.6)."""
    n, remaining = len(losses), 1 - confidence
    total = Fraction(0)
    for loss in sorted(losses, reverse=True):
        if remaining <= 0:
            break
        weight = min(Fraction(1, n), remaining)
        total += weight * Fraction(loss)
        remaining -= weight
    quantile = sorted(losses)[math.ceil(n * confidence) - 1]
    return quantile, float(total / (1 - confidence))


losses_strategy = st.lists(
    st.one_of(st.just(0.0), st.floats(0, 1e6, allow_nan=False)), min_size=1, max_size=60
)


@settings(max_examples=300, deadline=None)
@given(losses=losses_strategy, confidence=st.decimals("0.5", "0.999", places=4))
def test_equals_the_brute_force_weighted_tail_mean(
    losses: list[float], confidence: Decimal
) -> None:
    """Reference: a brute-force sort of a small sample (Acerbi and Tasche 2002), at a confidence
    as people write it (0.95, 0.975, 0.9999: exact decimals). A float one ulp off such a value
    is read as the value itself (``tail_risk`` snaps ``n·(1 − a)`` to an integer within 1e-9),
    which a binary-exact oracle would not."""
    var, es = tail_risk(np.array(losses), float(confidence))
    want_var, want_es = _brute_force(losses, Fraction(confidence))
    assert es == pytest.approx(want_es, rel=1e-9, abs=1e-9)
    assert var == want_var
    assert es >= var


@settings(max_examples=200, deadline=None)
@given(
    losses=losses_strategy,
    low=st.floats(0.01, 0.99),
    high=st.floats(0.01, 0.99),
)
def test_monotone_in_confidence(losses: list[float], low: float, high: float) -> None:
    low, high = sorted((low, high))
    var_low, es_low = tail_risk(np.array(losses), low)
    var_high, es_high = tail_risk(np.array(losses), high)
    assert es_high >= es_low - 1e-9 * max(1.0, es_low)
    assert var_high >= var_low


def test_expected_shortfall_is_the_tail_when_value_at_risk_is_zero() -> None:
    """97 of 100 scenarios lose nothing: VaR at 95 % is 0, ES the mean of the worst five."""
    losses = np.array([0.0] * 97 + [10.0, 20.0, 30.0])
    assert tail_risk(losses, 0.95) == (0.0, 12.0)
    assert tail_risk(losses, 0.99) == (20.0, 30.0)  # F(20) = 0.99 already
    assert tail_risk(losses, 0.5) == (0.0, 1.2)


@pytest.mark.parametrize(
    ("losses", "confidence", "message"),
    [
        ([], 0.95, "losses: must be at least one scenario"),
        ([1.0, math.nan], 0.95, "losses: must be finite numbers"),
        ([1.0], 1.0, "confidence: must be a number in (0, 1), got 1.0"),
        ([1.0], 0.0, "confidence: must be a number in (0, 1), got 0.0"),
    ],
)
def test_bad_input_names_the_field(losses: list[float], confidence: float, message: str) -> None:
    with pytest.raises(ArgumentError, match=message.replace("(", r"\(").replace(")", r"\)")):
        tail_risk(np.array(losses), confidence)


@pytest.mark.parametrize("seed", [0, 3, 11])
@pytest.mark.parametrize("debt", [600.0, 900.0])
def test_monte_carlo_tail_grows_with_confidence_on_other_books(seed: int, debt: float) -> None:
    """One leveraged account among safe ones, so bad debt is 0 in most scenarios: the book's
    ES must be the mean of its worst scenarios, above the plain mean and ordered 95 % ≤ 99 %."""
    held = np.array([[0.0, 0.02]] + [[1_000.0, 0.0]] * 20)
    owed = np.array([debt] + [100.0] * 20)
    book = CreditBook(
        tuple(f"a{i}" for i in range(21)), ("usdc", "yobtc"), held, owed,
        np.array([1.0, 60_000.0]),
    )  # fmt: skip
    market = MarketParameters(book.assets, np.array([0.0, 0.6]), np.eye(2))
    low, high = (
        monte_carlo(book, market, n_scenarios=20_000, confidence=c, seed=seed, progress=False)
        for c in (0.95, 0.99)
    )
    assert low.bad_debt_mean == high.bad_debt_mean
    assert high.bad_debt_expected_shortfall >= low.bad_debt_expected_shortfall
    for result in (low, high):
        assert result.bad_debt_expected_shortfall >= result.bad_debt_at_risk
    if low.bad_debt_mean > 0:
        assert low.bad_debt_expected_shortfall > 5 * low.bad_debt_mean
