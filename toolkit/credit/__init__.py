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
from toolkit.credit.call import (
    CLOSE_FACTOR_HF_THRESHOLD,
    DEFAULT_CLOSE_FACTOR_BPS,
    MAX_CLOSE_FACTOR_BPS,
    liquidation_call,
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
    "CLOSE_FACTOR_HF_THRESHOLD",
    "DAY",
    "DEFAULT_CLOSE_FACTOR_BPS",
    "DEFAULT_COLLATERAL",
    "DEFAULT_RULES",
    "MAX_CLOSE_FACTOR_BPS",
    "YEAR",
    "AccountFigures",
    "CollateralRule",
    "Liquidation",
    "ProductRules",
    "collateral_value",
    "figures",
    "liquidation",
    "liquidation_call",
]
