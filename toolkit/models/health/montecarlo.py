"""Correlated Monte Carlo of a :class:`~toolkit.models.health.CreditBook`: GBM price paths,
market parameters estimated from a price table, bad debt, and liquidations and bad debt at risk
over a horizon (a :class:`MonteCarloResult`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from toolkit.arguments import ArgumentError, whole
from toolkit.models.health.book import CreditBook, MarketParameters
from toolkit.models.health.kernel import checked_array
from toolkit.models.health.results import Row
from toolkit.models.health.tail import tail_risk
from toolkit.progress import progress_bar

__all__ = [
    "MonteCarloResult",
    "bad_debt",
    "correlated_prices",
    "estimate_volatility",
    "monte_carlo",
    "monte_carlo_levels",
]

_CHUNK_ELEMENTS = 4_000_000


def correlated_prices(
    prices: np.ndarray,
    vols: np.ndarray,
    correlation: np.ndarray,
    *,
    horizon_d: float,
    n_scenarios: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Terminal prices ``(n_scenarios, n_assets)`` of driftless correlated geometric Brownian
    motions after ``horizon_d``: ``S_T = S_0 · exp(σ√T·Z − σ²T/2)``, ``Z ~ N(0, C)`` drawn
    through the Cholesky factor of the correlation matrix ``C``; ``vols`` are annual.

    >>> import numpy as np
    >>> paths = correlated_prices(np.array([1.0, 60_000.0]), np.array([0.0, 0.6]),
    ...     np.eye(2), horizon_d=7, n_scenarios=4, rng=np.random.default_rng(1))
    >>> paths.shape, bool((paths[:, 0] == 1.0).all())
    ((4, 2), True)
    """
    start = checked_array(prices, "prices", (1,))
    sigma = checked_array(vols, "vols", (1,))
    corr = np.asarray(correlation, dtype=np.float64)
    n = start.shape[0]
    if sigma.shape != (n,) or corr.shape != (n, n):
        raise ArgumentError("vols/correlation", f"of shapes ({n},) and ({n}, {n})", corr.shape)
    try:
        factor = np.linalg.cholesky(corr)
    except np.linalg.LinAlgError:
        raise ArgumentError(
            "correlation", "a symmetric positive-definite matrix", "a matrix without one"
        ) from None
    years = float(horizon_d) / 365.0
    shocks = rng.standard_normal((n_scenarios, n)) @ factor.T
    return start * np.exp(sigma * np.sqrt(years) * shocks - 0.5 * sigma**2 * years)


def estimate_volatility(
    price_table: pl.DataFrame,
    *,
    periods_per_year: float,
    assets: Sequence[str] | None = None,
) -> MarketParameters:
    """Annual volatilities and the correlation matrix of log returns of a price table (one
    column per asset, one row per period, oldest first, ``periods_per_year`` rows a year), as
    the :class:`MarketParameters` of its columns, or of ``assets`` in that order (a book's:
    ``assets=book.assets``).

    >>> import polars as pl
    >>> market = estimate_volatility(
    ...     pl.DataFrame({"a": [1.0, 1.1, 1.0, 1.1], "b": [2.0, 2.2, 2.0, 2.2]}),
    ...     periods_per_year=365)
    >>> market.assets, round(float(market.correlation[0, 1]), 6)
    (('a', 'b'), 1.0)
    """
    if assets is not None:
        missing = [a for a in assets if a not in price_table.columns]
        if missing:
            raise ArgumentError("price_table", "a frame with a column for every asset", missing)
        price_table = price_table.select(assets)
    values = price_table.to_numpy().astype(np.float64)
    if values.shape[0] < 3 or (values <= 0).any():
        raise ArgumentError("price_table", "at least 3 rows of positive prices", values.shape)
    returns = np.diff(np.log(values), axis=0)
    vols = returns.std(axis=0, ddof=1) * np.sqrt(periods_per_year)
    n = values.shape[1]
    correlation = np.corrcoef(returns, rowvar=False).reshape(n, n)
    return MarketParameters(tuple(price_table.columns), vols, correlation)


def bad_debt(
    collateral: np.ndarray,
    debt: np.ndarray,
    prices: np.ndarray,
    bonus: np.ndarray,
) -> np.ndarray:
    """Debt no liquidation can recover: ``max(0, D − Σ V_i / (1 + b_i))``, what is left when a
    liquidator takes all the collateral with its bonus (as :func:`toolkit.credit.liquidation`
    does for an insolvent account); same shapes as :func:`health_factor`."""
    recoverable = np.asarray(collateral, dtype=np.float64) @ (prices / (1.0 + bonus)).T
    if np.ndim(prices) == 2:
        recoverable = recoverable.T
    return np.maximum(0.0, np.asarray(debt, dtype=np.float64) - recoverable)


@dataclass(frozen=True)
class MonteCarloResult(Row):
    """Liquidations and bad debt at risk of a book over a horizon: what :func:`monte_carlo`
    returns (a one-row frame with :meth:`to_frame`). Amounts are in the credit asset.

    ``scenarios`` is the sample size; the ``*_at_risk`` figures are quantiles at
    ``confidence`` over the scenarios, ``bad_debt_expected_shortfall`` the mean of the worst
    ``1 − confidence`` share (Acerbi–Tasche), the ``*_mean`` figures means over all of them.
    """

    scenarios: int
    confidence: float
    horizon_d: float
    liquidations_at_risk: float
    liquidations_mean: float
    liquidation_probability: float
    debt_at_risk: float
    bad_debt_at_risk: float
    bad_debt_expected_shortfall: float
    bad_debt_mean: float


def monte_carlo(
    book: CreditBook,
    market: MarketParameters,
    *,
    horizon_d: float = 7.0,
    n_scenarios: int = 100_000,
    confidence: float = 0.99,
    chunk: int | None = None,
    seed: int = 0,
    progress: bool = True,
) -> MonteCarloResult:
    """Liquidations at risk and bad debt at risk of ``book`` over ``horizon_d``, its prices
    moving as ``market`` says (parameters of the book's assets, in its order).

    Correlated GBM terminal prices (:func:`correlated_prices`) are drawn ``chunk`` scenarios at
    a time; each chunk's ``(chunk, n_accounts)`` health factors are reduced to per-scenario
    totals at once, so memory stays ``O(chunk · n_accounts)`` however many scenarios run. By
    default a chunk holds about four million account-scenarios (32 MB per array). A progress
    bar counts the chunks (``progress=False`` or ``TQDM_DISABLE=1`` hides it). At
    ``confidence`` it reports the quantile of the number of liquidatable accounts and of the
    debt they owe, bad debt's value at risk and expected shortfall (Acerbi–Tasche: the mean of
    the worst ``1 − confidence`` share of scenarios, :func:`~toolkit.models.health.tail.tail_risk`),
    and the mean of each. Several confidences over the same draws: :func:`monte_carlo_levels`.

    >>> import numpy as np
    >>> book = CreditBook(("a",), ("usdc", "yobtc"), np.array([[0.0, 0.02]]), np.array([800.0]),
    ...                   np.array([1.0, 60_000.0]))
    >>> market = MarketParameters(book.assets, np.array([0.0, 0.6]), np.eye(2))
    >>> result = monte_carlo(book, market, n_scenarios=2_000, chunk=500, progress=False)
    >>> 0 < result.liquidation_probability < 1, result.scenarios
    (True, 2000)
    """
    (result,) = monte_carlo_levels(
        book,
        market,
        horizon_d=horizon_d,
        n_scenarios=n_scenarios,
        confidences=(confidence,),
        chunk=chunk,
        seed=seed,
        progress=progress,
    )
    return result


def monte_carlo_levels(
    book: CreditBook,
    market: MarketParameters,
    *,
    horizon_d: float = 7.0,
    n_scenarios: int = 100_000,
    confidences: Sequence[float] = (0.95, 0.99, 0.999),
    chunk: int | None = None,
    seed: int = 0,
    progress: bool = True,
) -> tuple[MonteCarloResult, ...]:
    """:func:`monte_carlo` at each of ``confidences`` from one set of draws: one result per
    confidence, in their order, each equal to ``monte_carlo(..., confidence=c)`` with the same
    other arguments (the scenarios depend on ``seed``, never on the confidence), for the price
    of one run.

    >>> import numpy as np
    >>> book = CreditBook(("a",), ("usdc", "yobtc"), np.array([[0.0, 0.02]]), np.array([800.0]),
    ...                   np.array([1.0, 60_000.0]))
    >>> market = MarketParameters(book.assets, np.array([0.0, 0.6]), np.eye(2))
    >>> levels = monte_carlo_levels(book, market, n_scenarios=2_000, confidences=(0.9, 0.99),
    ...                             progress=False)
    >>> [r.confidence for r in levels], levels[1] == monte_carlo(book, market, n_scenarios=2_000,
    ...                                                          confidence=0.99, progress=False)
    ([0.9, 0.99], True)
    """
    whole(n_scenarios, "n_scenarios", minimum=1)
    whole(seed, "seed", minimum=0)
    if not isinstance(confidences, Sequence) or len(confidences) == 0:
        raise ArgumentError("confidences", "a sequence of at least one confidence", confidences)
    for confidence in confidences:
        if not 0 < confidence < 1:
            raise ArgumentError("confidence", "a number in (0, 1)", confidence)
    market.check_for(book)
    if chunk is None:  # about 32 MB per (chunk, n_accounts) float array
        chunk = max(1, _CHUNK_ELEMENTS // max(1, book.debt.shape[0]))
    whole(chunk, "chunk", minimum=1)
    count, debt_risk, loss = _scenario_totals(
        book, market, horizon_d, n_scenarios, chunk, np.random.default_rng(seed), progress
    )
    return tuple(
        _at_confidence(count, debt_risk, loss, confidence, float(horizon_d))
        for confidence in confidences
    )


def _scenario_totals(
    book: CreditBook,
    market: MarketParameters,
    horizon_d: float,
    n_scenarios: int,
    chunk: int,
    rng: np.random.Generator,
    progress: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per scenario: the number of liquidatable accounts, the debt they owe, the bad debt."""
    start, m, bonus, owed = book.prices, book.maintenance_ltv, book.bonus, book.debt
    columns = np.ascontiguousarray(book.collateral.T)  # (n_assets, n_accounts): BLAS-friendly
    bounded = bool((m * (1.0 + bonus) <= 1.0).all())
    counts, at_risk, losses = [], [], []
    starts = range(0, n_scenarios, chunk)
    for done in progress_bar(starts, desc="monte carlo", unit="chunk", enabled=progress):
        size = min(chunk, n_scenarios - done)
        paths = correlated_prices(
            start,
            market.vols,
            market.correlation,
            horizon_d=horizon_d,
            n_scenarios=size,
            rng=rng,
        )
        # health below 1 is Σ V·m < D: no division, one (chunk, n) product and its mask
        liquidatable = (paths * m) @ columns < owed
        counts.append(liquidatable.sum(axis=1))
        at_risk.append(liquidatable @ owed)
        # bad debt (Σ V/(1+b) < D) implies Σ V·m < D when every m·(1+b) <= 1: only accounts
        # liquidatable in some scenario of the chunk can lose anything
        some = liquidatable.any(axis=0) if bounded else slice(None)
        recoverable = (paths / (1.0 + bonus)) @ columns[:, some]
        losses.append(np.maximum(owed[some] - recoverable, 0.0).sum(axis=1))
    count, debt_risk, loss = (np.concatenate(x) for x in (counts, at_risk, losses))
    return count, debt_risk, loss


def _at_confidence(
    count: np.ndarray, debt_risk: np.ndarray, loss: np.ndarray, confidence: float, horizon_d: float
) -> MonteCarloResult:
    var, shortfall = tail_risk(loss, confidence)
    return MonteCarloResult(
        scenarios=int(count.shape[0]),
        confidence=confidence,
        horizon_d=horizon_d,
        liquidations_at_risk=float(np.quantile(count, confidence)),
        liquidations_mean=float(count.mean()),
        liquidation_probability=float((count > 0).mean()),
        debt_at_risk=float(np.quantile(debt_risk, confidence)),
        bad_debt_at_risk=var,
        bad_debt_expected_shortfall=shortfall,
        bad_debt_mean=float(loss.mean()),
    )
