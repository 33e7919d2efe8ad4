"""The credit product's rules, each a setting with the published default.

Sources: the vendor's supported-assets page ("currently live, verified from contract") and the
card-spend configuration (research/service-api.md §4.4). Where the pages disagree the
supported-assets numbers win; where they are silent the choice is stated here:

- LTV / maintenance LTV per collateral: USDC 90 % / 92.5 %, stable vault (``gtUSDCp``) 75 / 80,
  super-vault (``superUSDC``) 70 / 75, yield vault (``yoUSD``) 70 / 80, BTC vault (``yoBTC``)
  55 / 70. Liquidation bonus: raw stable 1 %, stable vault 6 %, super-vault 6 %, volatile vault
  8 %; the pages name four bonuses for five assets, so the yield vault (a stablecoin vault) takes
  the stable-vault 6 % and the BTC vault the volatile 8 %.
- A 0.50 % origination fee on each draw, rounded up to the smallest unit and deducted from what
  is delivered (draw 1,000 USDC: 995 delivered, debt +1,000).
- A 30-day billing cycle and a 7-day grace period from the first draw on a zero balance: the due
  date is 37 days after that draw. Before it no interest accrues; after it 15 % APR simple
  interest accrues on the outstanding principal per second (actual/365), rounded down.

Amounts are integers in smallest units; rates are basis points (1 % = 100 bps).

>>> DEFAULT_RULES.collateral["usdc"].ltv_bps, DEFAULT_RULES.draw_fee(1_000 * 10**6)
(9000, 5000000)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from toolkit.arguments import ArgumentError, whole

__all__ = [
    "BPS",
    "DAY",
    "DEFAULT_COLLATERAL",
    "DEFAULT_RULES",
    "YEAR",
    "CollateralRule",
    "ProductRules",
]

BPS = 10_000
DAY = 86_400
YEAR = 365 * DAY


@dataclass(frozen=True)
class CollateralRule:
    """One collateral asset's parameters: credit capacity (``ltv_bps``), the liquidation line
    (``maintenance_ltv_bps``) and what a liquidator earns in collateral (``liquidation_bonus_bps``).

    >>> CollateralRule("yobtc", "btc-vault", 5500, 7000, 800).maintenance_ltv_bps
    7000
    >>> CollateralRule("x", "stable", 9500, 9000, 100)
    Traceback (most recent call last):
    ...
    toolkit.arguments.ArgumentError: maintenance_ltv_bps: must be an integer >= 9500 ...
    """

    asset: str
    kind: str
    ltv_bps: int
    maintenance_ltv_bps: int
    liquidation_bonus_bps: int

    def __post_init__(self) -> None:
        whole(self.ltv_bps, "ltv_bps", minimum=0, maximum=BPS)
        whole(self.maintenance_ltv_bps, "maintenance_ltv_bps", minimum=self.ltv_bps, maximum=BPS)
        whole(self.liquidation_bonus_bps, "liquidation_bonus_bps", minimum=0, maximum=BPS)


DEFAULT_COLLATERAL: Mapping[str, CollateralRule] = MappingProxyType(
    {
        rule.asset: rule
        for rule in (
            CollateralRule("usdc", "stable", 9000, 9250, 100),
            CollateralRule("gtusdcp", "stable-vault", 7500, 8000, 600),
            CollateralRule("superusdc", "super-vault", 7000, 7500, 600),
            CollateralRule("yousd", "yield-vault", 7000, 8000, 600),
            CollateralRule("yobtc", "btc-vault", 5500, 7000, 800),
        )
    }
)
"""The published defaults, keyed by lower-case asset symbol."""


@dataclass(frozen=True)
class ProductRules:
    """The product's rules: collateral parameters, the draw fee, the term and overdue interest.

    >>> rules = ProductRules()
    >>> rules.due_date(first_draw=0) == 37 * DAY
    True
    >>> rules.interest(1_000 * 10**6, due_date=0, now=YEAR)  # a year overdue: 15 %
    150000000
    """

    collateral: Mapping[str, CollateralRule] = field(default_factory=lambda: DEFAULT_COLLATERAL)
    origination_fee_bps: int = 50
    billing_cycle_s: int = 30 * DAY
    grace_s: int = 7 * DAY
    overdue_apr_bps: int = 1500

    def __post_init__(self) -> None:
        whole(self.origination_fee_bps, "origination_fee_bps", minimum=0, below=BPS)
        whole(self.billing_cycle_s, "billing_cycle_s", minimum=0)
        whole(self.grace_s, "grace_s", minimum=0)
        whole(self.overdue_apr_bps, "overdue_apr_bps", minimum=0)
        for key, rule in self.collateral.items():
            if key != rule.asset:
                raise ArgumentError(f"collateral[{key!r}]", "keyed by its asset", rule.asset)

    def rule(self, asset: str) -> CollateralRule:
        """The rule of ``asset``; an unsupported asset raises ``KeyError`` naming the known ones.

        >>> DEFAULT_RULES.rule("USDC").liquidation_bonus_bps
        100
        """
        rule = self.collateral.get(asset.lower())
        if rule is None:
            known = ", ".join(sorted(self.collateral))
            raise KeyError(f"asset: {asset!r} is not a supported collateral (known: {known})")
        return rule

    def draw_fee(self, amount: int) -> int:
        """The origination fee of a draw of ``amount``, rounded up; ``amount - fee`` is delivered.

        >>> DEFAULT_RULES.draw_fee(1), DEFAULT_RULES.draw_fee(200)
        (1, 1)
        """
        whole(amount, "amount", minimum=0)
        return -(-amount * self.origination_fee_bps // BPS)

    def due_date(self, first_draw: int) -> int:
        """When overdue interest starts: the billing cycle and the grace period after
        ``first_draw`` (the first draw on a zero balance; Unix seconds)."""
        return whole(first_draw, "first_draw") + self.billing_cycle_s + self.grace_s

    def interest(self, principal: int, *, due_date: int | None, now: int) -> int:
        """Simple overdue interest on ``principal`` from ``due_date`` to ``now``, rounded down;
        0 before the due date and with no debt (``due_date`` None).

        >>> DEFAULT_RULES.interest(10**9, due_date=100, now=100)
        0
        """
        whole(principal, "principal", minimum=0)
        if due_date is None or now <= due_date:
            return 0
        return principal * self.overdue_apr_bps * (now - due_date) // (BPS * YEAR)


DEFAULT_RULES = ProductRules()
"""The product with its published defaults."""
