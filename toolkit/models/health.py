"""Credit health factors for a whole book at once: the kernel, stress grids, Monte Carlo.

The health factor is the one of :mod:`toolkit.credit` (Σ value × maintenance LTV / debt),
vectorised with numpy over accounts, and over price scenarios when ``prices`` has a scenario
axis. Shapes:

- ``collateral``: ``(n_accounts, n_assets)``, asset units (any unit, consistently with prices);
- ``maintenance_ltv``: ``(n_assets,)``, fractions (``0.925``), or bps via :func:`from_bps`;
- ``debt``: ``(n_accounts,)``, in the credit asset's units;
- ``prices``: ``(n_assets,)`` or ``(n_scenarios, n_assets)``, credit-asset units per asset unit.

The result is ``(n_accounts,)`` or ``(n_scenarios, n_accounts)``, ``inf`` where the debt is 0.
Floats here, exact fractions in :mod:`toolkit.credit`: the two agree to float precision (the
tests hold them to 1e-12 relative).

>>> import numpy as np
>>> health_factor(np.array([[1_000.0, 0.0], [0.0, 1.0]]), np.array([0.925, 0.7]),
...               np.array([500.0, 0.0]), np.array([1.0, 60_000.0]))
array([1.85,  inf])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from toolkit.arguments import ArgumentError, whole
from toolkit.credit import BPS, DEFAULT_RULES, CollateralRule, ProductRules
from toolkit.progress import progress_bar

__all__ = [
    "DEFAULT_CAPS",
    "DEFAULT_GROUPS",
    "DEFAULT_SHOCKS",
    "Book",
    "bad_debt",
    "collected_book",
    "collected_monte_carlo",
    "collected_stress",
    "concentration",
    "correlated_prices",
    "estimate_volatility",
    "from_bps",
    "health_factor",
    "liquidations",
    "maintenance_ltvs",
    "monte_carlo",
    "snapshot_stress",
    "stress",
]

_CHUNK_ELEMENTS = 4_000_000

#: Price shocks of the stress grid: -5 % to -60 %.
DEFAULT_SHOCKS: tuple[float, ...] = (-0.05, -0.1, -0.2, -0.3, -0.4, -0.5, -0.6)


def from_bps(bps: Sequence[int] | np.ndarray) -> np.ndarray:
    """Basis points as fractions: ``from_bps([9250]) == [0.925]``.

    >>> from_bps([9250, 7000]).tolist()
    [0.925, 0.7]
    """
    return np.asarray(bps, dtype=np.float64) / BPS


def maintenance_ltvs(assets: Sequence[str], rules: ProductRules = DEFAULT_RULES) -> np.ndarray:
    """The maintenance LTVs of ``assets`` (in that order) from the product rules.

    >>> maintenance_ltvs(["usdc", "yobtc"]).tolist()
    [0.925, 0.7]
    """
    return from_bps([rules.rule(asset).maintenance_ltv_bps for asset in assets])


def _array(value: object, name: str, ndim: Sequence[int]) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if array.ndim not in ndim:
        rule = " or ".join(f"a {d}-d array" for d in ndim)
        raise ArgumentError(name, rule, f"shape {array.shape}")
    if not np.isfinite(array).all() or (array < 0).any():
        raise ArgumentError(name, "finite and non-negative", "a negative or non-finite entry")
    return array


def health_factor(
    collateral: np.ndarray,
    maintenance_ltv: np.ndarray,
    debt: np.ndarray,
    prices: np.ndarray,
) -> np.ndarray:
    """Health factors of every account (and every price scenario); see the module docstring.

    >>> import numpy as np
    >>> hf = health_factor(np.ones((3, 2)), np.array([0.9, 0.5]), np.ones(3),
    ...                    np.array([[1.0, 1.0], [0.5, 0.5]]))
    >>> hf.shape, float(hf[1, 0])
    ((2, 3), 0.7)
    """
    held = _array(collateral, "collateral", (2,))
    m = _array(maintenance_ltv, "maintenance_ltv", (1,))
    owed = _array(debt, "debt", (1,))
    price = _array(prices, "prices", (1, 2))
    n_accounts, n_assets = held.shape
    if m.shape != (n_assets,):
        raise ArgumentError("maintenance_ltv", f"of shape ({n_assets},)", f"shape {m.shape}")
    if owed.shape != (n_accounts,):
        raise ArgumentError("debt", f"of shape ({n_accounts},)", f"shape {owed.shape}")
    if price.shape[-1] != n_assets:
        raise ArgumentError("prices", f"{n_assets} prices per scenario", f"shape {price.shape}")
    # Σ_a collateral[n, a] * price[s, a] * m[a]: one matrix product, scenarios first.
    weighted = held @ (price * m).T  # (n,) or (n, s)
    if price.ndim == 2:
        weighted = weighted.T
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(owed > 0, weighted / np.where(owed > 0, owed, 1.0), np.inf)


def stress(
    collateral: np.ndarray,
    debt: np.ndarray,
    prices: Mapping[str, float],
    *,
    shocks: Sequence[float] = DEFAULT_SHOCKS,
    rules: ProductRules = DEFAULT_RULES,
) -> pl.DataFrame:
    """A deterministic shock grid: each asset alone and all together, at every shock.

    ``collateral`` is ``(n_accounts, n_assets)`` with the assets in the order of ``prices``
    (asset → price). Per scenario: accounts liquidatable (health below 1), the debt they owe
    (``debt_at_risk``), the collateral value at the shocked prices, what liquidating every
    liquidatable account back to health takes (:func:`liquidations`: ``repayment_needed``,
    ``collateral_to_seize`` with the bonus) and the ``bad_debt`` left where collateral cannot
    restore it.

    >>> import numpy as np
    >>> frame = stress(np.array([[1_000.0, 0.0], [0.0, 0.02]]), np.array([800.0, 500.0]),
    ...                {"usdc": 1.0, "yobtc": 60_000.0}, shocks=[-0.5])
    >>> frame.select("shocked", "shock", "liquidatable", "debt_at_risk").rows()
    [('usdc', -0.5, 1, 800.0), ('yobtc', -0.5, 1, 500.0), ('all', -0.5, 2, 1300.0)]
    """
    assets = list(prices)
    base = np.array([prices[a] for a in assets], dtype=np.float64)
    m = maintenance_ltvs(assets, rules)
    owed = _array(debt, "debt", (1,))
    rows: list[tuple[str, float]] = []
    grid = []
    for shock in shocks:
        if not -1 < shock <= 0:
            raise ArgumentError("shocks", "price changes in (-1, 0]", shock)
        for i, asset in enumerate([*assets, "all"]):
            factor = np.ones(len(assets))
            if asset == "all":
                factor[:] += shock
            else:
                factor[i] += shock
            rows.append((asset, float(shock)))
            grid.append(base * factor)
    scenarios = np.array(grid)
    hf = health_factor(collateral, m, owed, scenarios)
    at_risk = hf < 1
    held = np.asarray(collateral, dtype=np.float64)
    value = held @ scenarios.T  # (n, s)
    needs = [liquidations(held * row, owed, assets, rules=rules) for row in scenarios]
    return pl.DataFrame(
        {
            "shocked": [r[0] for r in rows],
            "shock": [r[1] for r in rows],
            "liquidatable": at_risk.sum(axis=1).astype(np.int64),
            "debt_at_risk": (at_risk * owed).sum(axis=1),
            "collateral_value": value.sum(axis=0),
            "min_health_factor": hf.min(axis=1),
            "repayment_needed": [float(r.sum()) for r, _, _ in needs],
            "collateral_to_seize": [float(z.sum()) for _, z, _ in needs],
            "bad_debt": [float(b.sum()) for _, _, b in needs],
        }
    )


def liquidations(
    values: np.ndarray,
    debt: np.ndarray,
    assets: Sequence[str],
    *,
    rules: ProductRules = DEFAULT_RULES,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The partial liquidation of every account at once: ``(repaid, seized, bad_debt)``.

    The algorithm of :func:`toolkit.credit.liquidation` (the one definition), in floats and
    vectorised over accounts: assets are seized highest bonus first; seizing ``R·(1 + b_j)`` of
    asset ``j`` to repay ``R`` restores the health factor to 1 when ``R = (D − Σ V_i·m_i) /
    (1 − m_j·(1 + b_j))``, else all of ``j`` goes and the next asset is taken; debt left when
    the collateral is gone is bad debt. ``values`` is ``(n_accounts, n_assets)`` collateral
    *values* in the credit asset (amount × price) in the order of ``assets``, ``debt``
    ``(n_accounts,)``; ``repaid`` and ``bad_debt`` are ``(n_accounts,)``, ``seized`` (value,
    bonus included) ``(n_accounts, n_assets)``. Healthy accounts get zeros. The exact version
    works in whole units; the tests hold the two within 1e-5 relative (or 30 smallest units).

    >>> import numpy as np
    >>> repaid, seized, bad = liquidations(np.array([[1_000.0]]), np.array([720.0]), ["yobtc"])
    >>> round(float(repaid[0]), 3), round(float(seized[0, 0]), 3), float(bad[0])
    (81.967, 88.525, 0.0)
    """
    held = _array(values, "values", (2,)).copy()
    owed = _array(debt, "debt", (1,)).copy()
    names = list(assets)
    if held.shape != (owed.shape[0], len(names)):
        raise ArgumentError(
            "values", f"of shape ({owed.shape[0]}, {len(names)})", f"shape {held.shape}"
        )
    m = maintenance_ltvs(names, rules)
    premium = 1.0 + from_bps([rules.rule(a).liquidation_bonus_bps for a in names])
    repaid = np.zeros_like(owed)
    seized = np.zeros_like(held)
    order = sorted(range(len(names)), key=lambda i: (-premium[i], names[i]))
    for j in order:
        weighted = held @ m
        shortfall = owed - weighted
        active = (shortfall > 0) & (owed > 0)
        if not active.any():
            break
        slope = 1.0 - m[j] * premium[j]
        cover = held[:, j] / premium[j]
        with np.errstate(divide="ignore", invalid="ignore"):
            exact = np.where(slope > 0, shortfall / slope, np.inf)
        everything = active & (exact >= cover)  # this asset cannot restore health: all goes
        step = np.where(active, np.minimum(exact, cover), 0.0)
        take = np.where(everything, held[:, j], np.minimum(held[:, j], step * premium[j]))
        held[:, j] -= take
        seized[:, j] += take
        owed -= step
        repaid += step
    bad = np.where(held.sum(axis=1) <= 0, np.maximum(owed, 0.0), 0.0)
    return repaid, seized, bad


#: The published concentration caps, as shares of the book's collateral value (research §4:
#: "per vault 8–20 % TVL, per protocol 40 %, per stablecoin 60 %, per chain 70 %"; the vault cap
#: is the top of its published range).
DEFAULT_CAPS: dict[str, float] = {
    "vault": 0.20,
    "protocol": 0.40,
    "stablecoin": 0.60,
    "chain": 0.70,
}

#: What each default collateral asset counts toward (research §4, supported assets and earn
#: strategies: all on Base; the vaults' strategies and the protocols behind them).
DEFAULT_GROUPS: dict[str, dict[str, str]] = {
    "usdc": {"stablecoin": "USDC", "chain": "base"},
    "gtusdcp": {
        "vault": "gauntlet-usdc-prime",
        "protocol": "morpho",
        "stablecoin": "USDC",
        "chain": "base",
    },
    "superusdc": {
        "vault": "superform-usdc",
        "protocol": "superform",
        "stablecoin": "USDC",
        "chain": "base",
    },
    "yousd": {"vault": "yo-usdc", "protocol": "yo", "stablecoin": "USDC", "chain": "base"},
    "yobtc": {"vault": "yo-btc", "protocol": "yo", "chain": "base"},
}


def concentration(
    values: Mapping[str, float],
    *,
    groups: Mapping[str, Mapping[str, str]] | None = None,
    caps: Mapping[str, float] | None = None,
) -> pl.DataFrame:
    """The book's collateral concentration against the caps: one row per (dimension, group).

    ``values`` is the collateral value per asset (credit-asset units: amount × price, summed
    over accounts, e.g. ``(collateral * prices).sum(axis=0)``); ``groups`` says which vault,
    protocol, stablecoin and chain each asset counts toward (default :data:`DEFAULT_GROUPS`),
    ``caps`` the largest share of the book's total per dimension (default
    :data:`DEFAULT_CAPS`). Columns: ``dimension``, ``group``, ``value``, ``share``, ``cap``,
    ``headroom`` (value that may still be added before the cap binds, other assets unchanged;
    0 once breached) and ``breach``. Under a price shock, call it with the shocked values.

    >>> frame = concentration({"usdc": 300.0, "gtusdcp": 500.0, "yobtc": 200.0})
    >>> frame.filter(dimension="vault").select("group", "share", "breach").rows()
    [('gauntlet-usdc-prime', 0.5, True), ('yo-btc', 0.2, False)]
    """
    mapping = DEFAULT_GROUPS if groups is None else groups
    limits = DEFAULT_CAPS if caps is None else caps
    for dimension, cap in limits.items():
        if not 0 < cap <= 1:
            raise ArgumentError(f"caps.{dimension}", "a share in (0, 1]", cap)
    totals: dict[tuple[str, str], float] = {}
    for asset, value in values.items():
        if not np.isfinite(value) or value < 0:
            raise ArgumentError(f"values.{asset}", "finite and non-negative", value)
        if asset not in mapping:
            raise ArgumentError("groups", f"an entry for every asset (none for {asset!r})", asset)
        for dimension, group in mapping[asset].items():
            if dimension in limits:
                key = (dimension, group)
                totals[key] = totals.get(key, 0.0) + float(value)
    book = float(sum(values.values()))
    rows = []
    for (dimension, group), value in sorted(totals.items()):
        cap = float(limits[dimension])
        share = value / book if book > 0 else 0.0
        # x more of this group keeps it within the cap while (value + x) <= cap (book + x).
        headroom = max(0.0, (cap * book - value) / (1 - cap)) if cap < 1 else float("inf")
        rows.append((dimension, group, value, share, cap, headroom, share > cap))
    schema = {
        "dimension": pl.String,
        "group": pl.String,
        "value": pl.Float64,
        "share": pl.Float64,
        "cap": pl.Float64,
        "headroom": pl.Float64,
        "breach": pl.Boolean,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def snapshot_stress(
    accounts: pl.DataFrame, *, shocks: Sequence[float] = DEFAULT_SHOCKS
) -> pl.DataFrame:
    """Stress the stored book: the ``credit_accounts`` snapshot under shocks to every asset.

    ``accounts`` has the store's columns (``account``, ``asset``, ``round``, ``debt``,
    ``total_collateral_value``, ``liquidation_limit``, ``health_factor``; decimals as stored);
    the latest round of each account is taken. The API reports each account's totals, not its
    collateral mix, so the shock is one move of every collateral price together: the
    maintenance-weighted value ``W = debt · total_collateral_value / liquidation_limit``
    scales by ``1 + shock`` and so does the health factor. Per-asset shocks need the holdings:
    the collector stores them in ``credit_collateral``, and :func:`collected_book` with
    :func:`collected_stress` shock each asset alone. Per shock: accounts with debt,
    ``liquidatable``, ``debt_at_risk``, the shocked collateral value and the lowest health
    factor.

    >>> import datetime as dt
    >>> from decimal import Decimal as D
    >>> book = pl.DataFrame({"account": ["a", "b"], "asset": ["USDC", "USDC"], "round": [0, 0],
    ...     "debt": [D("500"), D("0")], "total_collateral_value": [D("1000"), D("10")],
    ...     "liquidation_limit": [D("625"), D("0")], "health_factor": [D("1.6"), None]})
    >>> snapshot_stress(book, shocks=[-0.3, -0.4]).select("shock", "liquidatable").rows()
    [(-0.3, 0), (-0.4, 1)]
    """
    need = ("account", "asset", "round", "debt", "total_collateral_value", "liquidation_limit")
    missing = [c for c in need if c not in accounts.columns]
    if missing:
        raise ArgumentError("accounts", f"the credit_accounts columns ({', '.join(need)})", missing)
    for shock in shocks:
        if not -1 < shock <= 0:
            raise ArgumentError("shocks", "price changes in (-1, 0]", shock)
    latest = accounts.filter(
        pl.col("round") == pl.col("round").max().over("account", "asset")
    ).select(
        pl.col(c).cast(pl.Float64) for c in ("debt", "total_collateral_value", "liquidation_limit")
    )
    owed = latest["debt"].to_numpy()
    value = latest["total_collateral_value"].to_numpy()
    limit = latest["liquidation_limit"].to_numpy()
    indebted = (owed > 0) & (limit > 0)
    weighted = np.where(indebted, owed * value / np.where(indebted, limit, 1.0), 0.0)
    rows = []
    for shock in shocks:
        hf = np.where(indebted, weighted * (1 + shock) / np.where(indebted, owed, 1.0), np.inf)
        at_risk = hf < 1
        rows.append(
            (
                float(shock),
                int(indebted.sum()),
                int(at_risk.sum()),
                float(owed[at_risk].sum()),
                float(value.sum() * (1 + shock)),
                float(hf.min()) if hf.size else float("inf"),
            )
        )
    schema = [
        "shock",
        "indebted",
        "liquidatable",
        "debt_at_risk",
        "collateral_value",
        "min_health_factor",
    ]
    return pl.DataFrame(rows, schema=schema, orient="row")


def correlated_prices(
    prices: np.ndarray,
    vols: np.ndarray,
    correlation: np.ndarray,
    *,
    horizon_days: float,
    n_scenarios: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Terminal prices ``(n_scenarios, n_assets)`` of driftless correlated geometric Brownian
    motions after ``horizon_days``: ``S_T = S_0 · exp(σ√T·Z − σ²T/2)``, ``Z ~ N(0, C)`` drawn
    through the Cholesky factor of the correlation matrix ``C``; ``vols`` are annual.

    >>> import numpy as np
    >>> paths = correlated_prices(np.array([1.0, 60_000.0]), np.array([0.0, 0.6]),
    ...     np.eye(2), horizon_days=7, n_scenarios=4, rng=np.random.default_rng(1))
    >>> paths.shape, bool((paths[:, 0] == 1.0).all())
    ((4, 2), True)
    """
    start = _array(prices, "prices", (1,))
    sigma = _array(vols, "vols", (1,))
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
    years = float(horizon_days) / 365.0
    shocks = rng.standard_normal((n_scenarios, n)) @ factor.T
    return start * np.exp(sigma * np.sqrt(years) * shocks - 0.5 * sigma**2 * years)


def estimate_volatility(
    price_table: pl.DataFrame, *, periods_per_year: float
) -> tuple[np.ndarray, np.ndarray]:
    """Annual volatilities and the correlation matrix of log returns of a price table (one
    column per asset, one row per period, oldest first).

    >>> import polars as pl
    >>> vols, corr = estimate_volatility(
    ...     pl.DataFrame({"a": [1.0, 1.1, 1.0, 1.1], "b": [2.0, 2.2, 2.0, 2.2]}),
    ...     periods_per_year=365)
    >>> round(float(corr[0, 1]), 6)
    1.0
    """
    values = price_table.to_numpy().astype(np.float64)
    if values.shape[0] < 3 or (values <= 0).any():
        raise ArgumentError("price_table", "at least 3 rows of positive prices", values.shape)
    returns = np.diff(np.log(values), axis=0)
    vols = returns.std(axis=0, ddof=1) * np.sqrt(periods_per_year)
    return vols, np.corrcoef(returns, rowvar=False).reshape(values.shape[1], values.shape[1])


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


def monte_carlo(
    collateral: np.ndarray,
    debt: np.ndarray,
    prices: Mapping[str, float],
    vols: np.ndarray,
    correlation: np.ndarray,
    *,
    horizon_days: float = 7.0,
    n_scenarios: int = 100_000,
    confidence: float = 0.99,
    chunk: int | None = None,
    seed: int = 0,
    rules: ProductRules = DEFAULT_RULES,
    progress: bool = True,
) -> dict[str, float]:
    """Liquidations at risk and bad debt at risk of a book over ``horizon_days``.

    Correlated GBM terminal prices (:func:`correlated_prices`) are drawn ``chunk`` scenarios at
    a time; each chunk's ``(chunk, n_accounts)`` health factors are reduced to per-scenario
    totals at once, so memory stays ``O(chunk · n_accounts)`` however many scenarios run. By
    default a chunk holds about four million account-scenarios (32 MB per array). A progress
    bar counts the chunks (``progress=False`` or ``TQDM_DISABLE=1`` hides it). At
    ``confidence`` it reports the quantile of the number of liquidatable accounts and of the
    debt they owe, the quantile of bad debt (value at risk) and its expected shortfall (the mean
    beyond the quantile), and the mean of each.

    >>> import numpy as np
    >>> result = monte_carlo(np.array([[0.0, 0.02]]), np.array([800.0]),
    ...     {"usdc": 1.0, "yobtc": 60_000.0}, np.array([0.0, 0.6]), np.eye(2),
    ...     n_scenarios=2_000, chunk=500)
    >>> 0 < result["liquidation_probability"] < 1, result["scenarios"]
    (True, 2000.0)
    """
    whole(n_scenarios, "n_scenarios", minimum=1)
    whole(seed, "seed", minimum=0)
    if not 0 < confidence < 1:
        raise ArgumentError("confidence", "a number in (0, 1)", confidence)
    assets = list(prices)
    start = np.array([prices[a] for a in assets], dtype=np.float64)
    m = maintenance_ltvs(assets, rules)
    bonus = from_bps([rules.rule(a).liquidation_bonus_bps for a in assets])
    owed = _array(debt, "debt", (1,))
    held = _array(collateral, "collateral", (2,))
    if held.shape != (owed.shape[0], len(assets)):
        raise ArgumentError("collateral", f"of shape ({owed.shape[0]}, {len(assets)})", held.shape)
    if chunk is None:  # about 32 MB per (chunk, n_accounts) float array
        chunk = max(1, _CHUNK_ELEMENTS // max(1, owed.shape[0]))
    whole(chunk, "chunk", minimum=1)
    columns = np.ascontiguousarray(held.T)  # (n_assets, n_accounts): BLAS-friendly
    bounded = bool((m * (1.0 + bonus) <= 1.0).all())
    rng = np.random.default_rng(seed)
    counts, at_risk, losses = [], [], []
    starts = range(0, n_scenarios, chunk)
    for done in progress_bar(starts, desc="monte carlo", unit="chunk", enabled=progress):
        size = min(chunk, n_scenarios - done)
        paths = correlated_prices(
            start, vols, correlation, horizon_days=horizon_days, n_scenarios=size, rng=rng
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
    var = float(np.quantile(loss, confidence))
    tail = loss[loss >= var]
    return {
        "scenarios": float(n_scenarios),
        "confidence": confidence,
        "liquidations_at_risk": float(np.quantile(count, confidence)),
        "liquidations_mean": float(count.mean()),
        "liquidation_probability": float((count > 0).mean()),
        "debt_at_risk": float(np.quantile(debt_risk, confidence)),
        "bad_debt_at_risk": var,
        "bad_debt_expected_shortfall": float(tail.mean()) if tail.size else var,
        "bad_debt_mean": float(loss.mean()),
    }


@dataclass(frozen=True)
class Book:
    """A collected credit book as the arrays of the kernel (module docstring for the shapes).

    ``accounts`` and ``assets`` label the rows and columns of ``collateral`` (whole tokens,
    summed over the chains an asset is locked on); ``debt`` and ``prices`` are in the credit
    asset; ``maintenance_ltv`` and ``bonus`` are fractions per asset and ``rules`` the same
    parameters as product rules (what :func:`stress` and :func:`monte_carlo` take);
    ``stored_health_factor`` is what the service reported (``inf`` without debt).
    """

    accounts: tuple[str, ...]
    assets: tuple[str, ...]
    collateral: np.ndarray
    debt: np.ndarray
    prices: np.ndarray
    maintenance_ltv: np.ndarray
    bonus: np.ndarray
    stored_health_factor: np.ndarray
    rules: ProductRules

    @property
    def price_map(self) -> dict[str, float]:
        """``prices`` by asset, in the order of ``assets``."""
        return dict(zip(self.assets, self.prices.tolist(), strict=True))

    def health_factors(self, prices: np.ndarray | None = None) -> np.ndarray:
        """:func:`health_factor` of the book at ``prices`` (default: the book's)."""
        return health_factor(
            self.collateral,
            self.maintenance_ltv,
            self.debt,
            self.prices if prices is None else prices,
        )


def _columns(frame: pl.DataFrame, name: str, need: Sequence[str]) -> None:
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise ArgumentError(name, f"a frame with the columns {', '.join(need)}", missing)


def _latest(accounts: pl.DataFrame, asset: str) -> pl.DataFrame:
    """Each account's latest snapshot of ``asset`` (by ``observed_at`` when present, then
    ``round``)."""
    mine = accounts.filter(pl.col("asset").str.to_uppercase() == asset.upper())
    order = [c for c in ("observed_at", "round") if c in mine.columns]
    return mine.sort(order).group_by("account", maintain_order=True).last().sort("account")


def _price_row(prices: Mapping[str, float] | pl.DataFrame) -> dict[str, float]:
    if isinstance(prices, pl.DataFrame):
        if prices.height == 0:
            raise ArgumentError("prices", "a price table with at least one row", "no rows")
        return {str(k): float(v) for k, v in prices.row(prices.height - 1, named=True).items()}
    return {str(k): float(v) for k, v in prices.items()}


def _rules(
    protocol: pl.DataFrame | None, assets: Sequence[str], rules: ProductRules
) -> ProductRules:
    """Product rules whose collateral parameters are the protocol rows' (``credit_protocol``:
    latest round, one per symbol), else those of ``rules``."""
    if protocol is None:
        return ProductRules(collateral={a: rules.rule(a) for a in assets})
    _columns(protocol, "protocol", ("symbol", "maintenance_ltv_bps", "liquidation_bonus_bps"))
    if "round" in protocol.columns:
        protocol = protocol.filter(pl.col("round") == pl.col("round").max())
    found: dict[str, CollateralRule] = {}
    for row in protocol.iter_rows(named=True):
        symbol = str(row["symbol"]).lower()
        m, b = row["maintenance_ltv_bps"], row["liquidation_bonus_bps"]
        if m is None or b is None:
            raise ArgumentError(f"protocol.{symbol}", "a maintenance LTV and a bonus", None)
        ltv = row.get("ltv_bps")
        found[symbol] = CollateralRule(symbol, "collected", int(m if ltv is None else ltv), m, b)
    for asset in assets:
        if asset not in found:
            raise ArgumentError(
                "protocol", f"a row for every held asset (none for {asset!r})", asset
            )
    return ProductRules(collateral={a: found[a] for a in assets})


def collected_book(
    collateral: pl.DataFrame,
    accounts: pl.DataFrame,
    prices: Mapping[str, float] | pl.DataFrame,
    protocol: pl.DataFrame | None = None,
    *,
    asset: str = "USDC",
    rules: ProductRules = DEFAULT_RULES,
) -> Book:
    """The collected book of credit asset ``asset`` as a :class:`Book`.

    ``accounts`` are ``credit_accounts`` rows (``account``, ``asset``, ``round``, ``debt``,
    ``health_factor``; ``run_id`` and ``observed_at`` when present): each account's latest
    snapshot gives its debt. ``collateral`` are ``credit_collateral`` rows (``account``,
    ``asset``, ``symbol``, ``amount`` in smallest units, ``decimals``) of the same snapshot
    (matched on ``run_id`` and ``round`` where both frames have them); an account without rows
    holds nothing. ``prices`` maps each asset's symbol to its price in the credit asset, or is
    a price table (one column per symbol, oldest row first: its last row is taken).
    Maintenance LTVs and bonuses come from ``protocol`` (``credit_protocol`` rows, latest
    round) or, without it, from ``rules``. Assets are the protocol's symbols (else the held
    ones), sorted.

    >>> from decimal import Decimal as D
    >>> held = pl.DataFrame({"account": ["a", "a"], "asset": ["USDC", "USDC"], "round": [0, 0],
    ...     "symbol": ["usdc", "yobtc"], "amount": [500 * 10**6, 10**6], "decimals": [6, 8]})
    >>> book = pl.DataFrame({"account": ["a", "b"], "asset": ["USDC", "USDC"], "round": [0, 0],
    ...     "debt": [D("600"), D("0")], "health_factor": [D("1.470833333333333333"), None]})
    >>> b = collected_book(held, book, {"usdc": 1.0, "yobtc": 60_000.0})
    >>> b.accounts, b.assets, b.collateral.tolist()
    (('a', 'b'), ('usdc', 'yobtc'), [[500.0, 0.01], [0.0, 0.0]])
    >>> [round(float(h), 9) for h in b.health_factors()]
    [1.470833333, inf]
    """
    _columns(accounts, "accounts", ("account", "asset", "round", "debt", "health_factor"))
    _columns(collateral, "collateral", ("account", "asset", "symbol", "amount", "decimals"))
    latest = _latest(accounts, asset)
    place = [c for c in ("run_id", "round") if c in latest.columns and c in collateral.columns]
    held = (
        collateral.filter(pl.col("asset").str.to_uppercase() == asset.upper())
        .join(latest.select("account", *place), on=["account", *place], how="semi")
        .select(
            "account",
            pl.col("symbol").str.to_lowercase(),
            pl.col("amount").cast(pl.Float64) / pl.lit(10.0).pow(pl.col("decimals")),
        )
    )
    if held["amount"].null_count():
        raise ArgumentError("collateral", "an amount and decimals on every row", "a null")
    if protocol is not None and "symbol" in protocol.columns:
        assets = sorted({str(s).lower() for s in protocol["symbol"].drop_nulls()})
    else:
        assets = sorted(set(held["symbol"].to_list()))
    unknown = sorted(set(held["symbol"].to_list()) - set(assets))
    if unknown:
        raise ArgumentError("collateral", "symbols the protocol lists", unknown)
    given = {k.lower(): v for k, v in _price_row(prices).items()}
    missing = [a for a in assets if a not in given]
    if missing:
        raise ArgumentError("prices", "a price for every asset", missing)
    names = tuple(str(a) for a in latest["account"].to_list())
    row_of = {a: i for i, a in enumerate(names)}
    col_of = {a: j for j, a in enumerate(assets)}
    matrix = np.zeros((len(names), len(assets)))
    for account, symbol, amount in held.iter_rows():
        matrix[row_of[account], col_of[symbol]] += amount
    product = _rules(protocol, assets, rules)
    stored = latest["health_factor"].cast(pl.Float64).fill_null(np.inf).to_numpy()
    return Book(
        accounts=names,
        assets=tuple(assets),
        collateral=matrix,
        debt=latest["debt"].cast(pl.Float64).fill_null(0.0).to_numpy(),
        prices=_array([given[a] for a in assets], "prices", (1,)),
        maintenance_ltv=maintenance_ltvs(assets, product),
        bonus=from_bps([product.rule(a).liquidation_bonus_bps for a in assets]),
        stored_health_factor=stored,
        rules=product,
    )


def collected_stress(book: Book, *, shocks: Sequence[float] = DEFAULT_SHOCKS) -> pl.DataFrame:
    """:func:`stress` of a collected book: each asset alone and all together at every shock,
    with the book's maintenance LTVs and bonuses.

    >>> b = Book(("a",), ("usdc", "yobtc"), np.array([[0.0, 0.02]]), np.array([800.0]),
    ...     np.array([1.0, 60_000.0]), np.array([0.925, 0.7]), np.array([0.01, 0.08]),
    ...     np.array([1.05]), DEFAULT_RULES)
    >>> collected_stress(b, shocks=[-0.1]).select("shocked", "liquidatable").rows()
    [('usdc', 0), ('yobtc', 1), ('all', 1)]
    """
    return stress(book.collateral, book.debt, book.price_map, shocks=shocks, rules=book.rules)


def collected_monte_carlo(
    book: Book, price_table: pl.DataFrame, *, periods_per_year: float, **options: Any
) -> dict[str, float]:
    """:func:`monte_carlo` of a collected book, with volatilities and correlations estimated
    (:func:`estimate_volatility`) from ``price_table`` (a column per asset of the book, oldest
    row first, ``periods_per_year`` rows a year); ``options`` go to :func:`monte_carlo`.

    >>> b = Book(("a",), ("usdc", "yobtc"), np.array([[0.0, 0.02]]), np.array([800.0]),
    ...     np.array([1.0, 60_000.0]), np.array([0.925, 0.7]), np.array([0.01, 0.08]),
    ...     np.array([1.05]), DEFAULT_RULES)
    >>> history = pl.DataFrame({"usdc": [1.0, 1.0, 1.001, 1.0],
    ...                         "yobtc": [58_000.0, 61_000.0, 57_500.0, 60_000.0]})
    >>> r = collected_monte_carlo(b, history, periods_per_year=365, n_scenarios=1_000,
    ...                           progress=False)
    >>> r["scenarios"], 0 < r["liquidation_probability"] < 1
    (1000.0, True)
    """
    missing = [a for a in book.assets if a not in price_table.columns]
    if missing:
        raise ArgumentError(
            "price_table", "a frame with a column for every asset of the book", missing
        )
    vols, correlation = estimate_volatility(
        price_table.select(book.assets), periods_per_year=periods_per_year
    )
    return monte_carlo(
        book.collateral, book.debt, book.price_map, vols, correlation, rules=book.rules, **options
    )
