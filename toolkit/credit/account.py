"""One account's figures, defined once: what ``/info`` reports and every risk model reuses.

All values are integers in the credit asset's smallest units (USDC: 6 decimals); ratios are exact
``Fraction``s (``None`` stands for an infinite health factor, with no debt). With ``V_i`` the
value of collateral asset ``i``, ``ltv_i`` and ``m_i`` its LTV and maintenance LTV (as
fractions) and ``D`` the debt:

- ``total_collateral_value`` = Σ V_i; ``total_credit_capacity`` = Σ V_i·ltv_i, rounded down;
- ``remaining_credit_capacity`` = capacity − debt, floored at 0;
- ``health_factor`` = Σ V_i·m_i / D: liquidatable below 1;
- ``m_health_factor`` = Σ V_i·ltv_i / D: below 1, no new draws;
- ``liquidation_limit`` = the total collateral value, at today's mix, where the health factor
  reaches 1: D · Σ V_i / Σ V_i·m_i, rounded up (0 with no debt).

The vendor's documents disagree about some of these (research §4.4); these are the toolkit's.

>>> f = figures({"usdc": 2_500 * 10**6}, principal=750 * 10**6)
>>> f.total_credit_capacity, f.remaining_credit_capacity, float(f.health_factor)
(2250000000, 1500000000, 3.0833333333333335)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from toolkit.arguments import whole
from toolkit.credit.rules import BPS, DEFAULT_RULES, ProductRules

__all__ = ["AccountFigures", "Liquidation", "collateral_value", "figures", "liquidation"]


def collateral_value(amount: int, price: Fraction) -> int:
    """The value of ``amount`` smallest units of an asset at ``price`` (credit-asset smallest
    units per asset smallest unit), rounded down.

    >>> collateral_value(10**8, Fraction(60_000 * 10**6, 10**8))  # one BTC at 60,000 USDC
    60000000000
    """
    whole(amount, "amount", minimum=0)
    return int(amount * Fraction(price))


@dataclass(frozen=True)
class AccountFigures:
    """An account's figures (see the module docstring for their definitions)."""

    total_collateral_value: int
    total_credit_capacity: int
    remaining_credit_capacity: int
    health_factor: Fraction | None
    m_health_factor: Fraction | None
    liquidation_limit: int
    principal: int
    interest: int
    debt: int
    due_date: int | None

    @property
    def liquidatable(self) -> bool:
        """The health factor is below 1."""
        return self.health_factor is not None and self.health_factor < 1

    @property
    def can_draw(self) -> bool:
        """The maintenance health factor is not below 1 and capacity remains."""
        healthy = self.m_health_factor is None or self.m_health_factor >= 1
        return healthy and self.remaining_credit_capacity > 0


def _weighted(values: Mapping[str, int], rules: ProductRules, attribute: str) -> Fraction:
    return sum(
        (Fraction(v * getattr(rules.rule(a), attribute), BPS) for a, v in values.items()),
        Fraction(0),
    )


def figures(
    values: Mapping[str, int],
    *,
    principal: int = 0,
    interest: int = 0,
    due_date: int | None = None,
    rules: ProductRules = DEFAULT_RULES,
) -> AccountFigures:
    """The figures of an account holding collateral worth ``values`` (asset → value).

    >>> figures({"usdc": 10**9}).health_factor is None  # no debt: an infinite health factor
    True
    """
    for asset, value in values.items():
        whole(value, f"values[{asset!r}]", minimum=0)
    whole(principal, "principal", minimum=0)
    whole(interest, "interest", minimum=0)
    debt = principal + interest
    total = sum(values.values())
    capacity = _weighted(values, rules, "ltv_bps")
    maintenance = _weighted(values, rules, "maintenance_ltv_bps")
    hf = None if debt == 0 else maintenance / debt
    mhf = None if debt == 0 else capacity / debt
    if debt == 0:
        limit = 0
    elif maintenance == 0:
        limit = total  # nothing counts towards maintenance: liquidatable at any value
    else:
        exact = Fraction(debt * total) / maintenance
        limit = -(-exact.numerator // exact.denominator)
    return AccountFigures(
        total_collateral_value=total,
        total_credit_capacity=int(capacity),
        remaining_credit_capacity=max(0, int(capacity) - debt),
        health_factor=hf,
        m_health_factor=mhf,
        liquidation_limit=limit,
        principal=principal,
        interest=interest,
        debt=debt if debt else 0,
        due_date=due_date if debt else None,
    )


@dataclass(frozen=True)
class Liquidation:
    """What a partial liquidation does: the debt ``repaid``, the collateral value ``seized``
    per asset (repayment plus the asset's bonus), and the ``bad_debt`` left when collateral
    cannot restore health. ``health_factor`` is the account's afterwards (None: no debt left)."""

    repaid: int
    seized: Mapping[str, int]
    bad_debt: int
    health_factor: Fraction | None


def liquidation(
    values: Mapping[str, int], debt: int, *, rules: ProductRules = DEFAULT_RULES
) -> Liquidation:
    """The partial liquidation that restores the health factor to exactly 1 (rounded so it
    ends at or above 1), seizing collateral with the highest bonus first, as a liquidator would.

    Seizing ``R·(1 + b_j)`` of asset ``j`` to repay ``R`` moves the health factor to 1 when
    ``R = (D − Σ V_i·m_i) / (1 − m_j·(1 + b_j))``, the closed form for one asset; with a mix, the
    assets are taken in turn until one restores health. When no asset can (``m_j·(1 + b_j) ≥ 1``
    or too little collateral), everything is seized, the debt it covers is repaid and the rest
    is bad debt.

    >>> liq = liquidation({"yobtc": 1_000 * 10**6}, debt=720 * 10**6)  # HF 0.972
    >>> liq.repaid, liq.seized["yobtc"], liq.bad_debt, liq.health_factor >= 1
    (81967216, 88524594, 0, True)
    """
    whole(debt, "debt", minimum=0)
    remaining = dict(values)
    seized: dict[str, int] = {}
    repaid = 0
    order = sorted(
        remaining, key=lambda a: (-rules.rule(a).liquidation_bonus_bps, a)
    )  # best bonus first
    for asset in order:
        current = figures(remaining, principal=debt - repaid, rules=rules).health_factor
        if current is None or current >= 1:
            break
        rule = rules.rule(asset)
        m = Fraction(rule.maintenance_ltv_bps, BPS)
        premium = 1 + Fraction(rule.liquidation_bonus_bps, BPS)
        weighted = _weighted(remaining, rules, "maintenance_ltv_bps")
        shortfall = (debt - repaid) - weighted
        slope = 1 - m * premium
        cover = Fraction(remaining[asset]) / premium  # the most this asset can repay
        restores = slope > 0 and shortfall / slope <= cover
        if restores:
            exact = shortfall / slope
            step = -(-exact.numerator // exact.denominator)
            take = _seize(step, premium, remaining[asset])
        else:  # this asset cannot restore health: all of it goes
            step, take = int(cover), remaining[asset]
        # Whole units round against the account: repay a unit more until health is back.
        while (
            restores
            and step < cover
            and not _restored(remaining, asset, take, debt - repaid - step, rules)
        ):
            step += 1
            take = _seize(step, premium, remaining[asset])
        remaining[asset] -= take
        seized[asset] = seized.get(asset, 0) + take
        repaid += step
    left = debt - repaid
    after = figures(remaining, principal=left, rules=rules).health_factor
    bad = left if sum(remaining.values()) == 0 else 0
    return Liquidation(repaid, seized, bad, None if bad else after)


def _seize(repay: int, premium: Fraction, available: int) -> int:
    """Collateral value paid for ``repay``: with the bonus, rounded up, at most what is there."""
    owed = repay * premium
    return min(available, -(-owed.numerator // owed.denominator))


def _restored(
    values: Mapping[str, int], asset: str, take: int, debt: int, rules: ProductRules
) -> bool:
    after = dict(values)
    after[asset] -= take
    hf = figures(after, principal=max(debt, 0), rules=rules).health_factor
    return hf is None or hf >= 1
