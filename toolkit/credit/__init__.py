"""The credit product, pure: its rules and every figure an account reports, defined once.

The embedded service's credit ledger, ``/info`` and the risk models (:mod:`toolkit.models`) all
compute through this package, so a health factor means one thing everywhere.

>>> from toolkit.credit import figures
>>> figures({"usdc": 1_000 * 10**6}, principal=500 * 10**6).remaining_credit_capacity
400000000
"""

from toolkit.credit.account import (
    AccountFigures,
    Liquidation,
    collateral_value,
    figures,
    liquidation,
)
from toolkit.credit.rules import (
    BPS,
    DAY,
    DEFAULT_COLLATERAL,
    DEFAULT_RULES,
    YEAR,
    CollateralRule,
    ProductRules,
)

__all__ = [
    "BPS",
    "DAY",
    "DEFAULT_COLLATERAL",
    "DEFAULT_RULES",
    "YEAR",
    "AccountFigures",
    "CollateralRule",
    "Liquidation",
    "ProductRules",
    "collateral_value",
    "figures",
    "liquidation",
]
