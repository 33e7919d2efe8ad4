"""The health-factor kernel: Σ value × maintenance LTV / debt over a whole book at once, and the
partial liquidation of every account (shapes in :mod:`toolkit.models.health`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from toolkit.arguments import ArgumentError
from toolkit.credit import BPS, DEFAULT_RULES, ProductRules

__all__ = ["from_bps", "health_factor", "liquidations", "maintenance_ltvs"]


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


def checked_array(value: object, name: str, ndim: Sequence[int]) -> np.ndarray:
    """``value`` as a float array of a dimension in ``ndim``, finite and non-negative (else an
    :class:`~toolkit.arguments.ArgumentError` naming ``name``): the shared input check."""
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
    held = checked_array(collateral, "collateral", (2,))
    m = checked_array(maintenance_ltv, "maintenance_ltv", (1,))
    owed = checked_array(debt, "debt", (1,))
    price = checked_array(prices, "prices", (1, 2))
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
    held = checked_array(values, "values", (2,)).copy()
    owed = checked_array(debt, "debt", (1,)).copy()
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
