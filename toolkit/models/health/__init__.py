"""Credit health factors for a whole book at once: the kernel, stress grids, Monte Carlo.

A book of accounts is a :class:`CreditBook` (made by :func:`toolkit.backtest.generate_book` or,
from the store's rows, by :func:`collected_book`); the risk functions take one: :func:`stress`,
:func:`monte_carlo` (with the :class:`MarketParameters` its prices move with, from
:func:`estimate_volatility`; :func:`monte_carlo_levels` for several confidences over one set of
draws), :func:`toolkit.models.liquidation_cascade`. Results are frozen
dataclasses with typed fields and ``to_frame()`` (:class:`MonteCarloResult`) or frames.

Prices are one convention everywhere: a float array in the order of the book's ``assets``
(see :mod:`toolkit.models.health.book` for why). The array kernels below take the same.

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

from toolkit.models.health.alerts import (
    ALERT_KINDS,
    DEFAULT_ALERT_RULES,
    AlertRule,
    Crossing,
    alert_rules,
    breaches,
    crossings,
)
from toolkit.models.health.book import CreditBook, MarketParameters, collected_book
from toolkit.models.health.caps import DEFAULT_CAPS, DEFAULT_GROUPS, concentration
from toolkit.models.health.kernel import (
    from_bps,
    health_factor,
    liquidations,
    maintenance_ltvs,
)
from toolkit.models.health.montecarlo import (
    MonteCarloResult,
    bad_debt,
    correlated_prices,
    estimate_volatility,
    monte_carlo,
    monte_carlo_levels,
)
from toolkit.models.health.positions import Position, unit_price
from toolkit.models.health.shocks import DEFAULT_SHOCKS, snapshot_stress, stress
from toolkit.models.health.tail import tail_risk

__all__ = [
    "ALERT_KINDS",
    "DEFAULT_ALERT_RULES",
    "DEFAULT_CAPS",
    "DEFAULT_GROUPS",
    "DEFAULT_SHOCKS",
    "AlertRule",
    "CreditBook",
    "Crossing",
    "MarketParameters",
    "MonteCarloResult",
    "Position",
    "alert_rules",
    "bad_debt",
    "breaches",
    "collected_book",
    "concentration",
    "correlated_prices",
    "crossings",
    "estimate_volatility",
    "from_bps",
    "health_factor",
    "liquidations",
    "maintenance_ltvs",
    "monte_carlo",
    "monte_carlo_levels",
    "snapshot_stress",
    "stress",
    "tail_risk",
    "unit_price",
]
