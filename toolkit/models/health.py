"""Credit health factors for a whole book at once: the kernel, and deterministic stress.

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

import numpy as np
import polars as pl

from toolkit.arguments import ArgumentError
from toolkit.credit import BPS, DEFAULT_RULES, ProductRules

__all__ = ["DEFAULT_SHOCKS", "from_bps", "health_factor", "maintenance_ltvs", "stress"]

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
    (``debt_at_risk``), and the collateral value left at the shocked prices.

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
    value = np.asarray(collateral, dtype=np.float64) @ scenarios.T  # (n, s)
    return pl.DataFrame(
        {
            "shocked": [r[0] for r in rows],
            "shock": [r[1] for r in rows],
            "liquidatable": at_risk.sum(axis=1).astype(np.int64),
            "debt_at_risk": (at_risk * owed).sum(axis=1),
            "collateral_value": value.sum(axis=0),
            "min_health_factor": hf.min(axis=1),
        }
    )
