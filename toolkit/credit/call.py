"""One liquidation call as Aave v3 sizes it: the close factor, the bonus, the collateral cap.

Facts from Aave v3's ``LiquidationLogic`` (``executeLiquidationCall`` and
``_calculateAvailableCollateralToLiquidate``) and the Aave v3 developer docs' liquidation guide:

- an account is liquidatable when its health factor ``Σ collateral·price·liquidationThreshold /
  debt`` is below 1 (``GenericLogic.calculateUserAccountData``; the threshold is this toolkit's
  maintenance LTV);
- one call repays at most ``debt × close factor``: 50 % (``DEFAULT_LIQUIDATION_CLOSE_FACTOR``),
  or 100 % (``MAX_LIQUIDATION_CLOSE_FACTOR``) once the health factor is at or below 0.95
  (``CLOSE_FACTOR_HF_THRESHOLD``);
- it seizes one collateral: ``debt repaid × debt price × (1 + liquidation bonus) / collateral
  price``; if the account holds less, all of it is seized and the debt repaid is backed out of
  it, ``collateral × collateral price / (debt price × (1 + bonus))``;
- percentages round half up (``PercentageMath.percentMul`` / ``percentDiv``);
- an account left with debt and no collateral has its debt written off as a deficit (v3.3's
  bad-debt clean-up): here ``bad_debt``.

Values here are in the credit asset's smallest units (``collateral × price`` already), so the
debt price is 1. The protocol's share of the bonus (``liquidationProtocolFee``) is not part of
this product and is left out.

>>> call = liquidation_call({"usdc": 1_000 * 10**6}, debt=950 * 10**6)  # HF 0.974
>>> call.repaid, call.seized["usdc"], float(call.health_factor) > 1
(475000000, 479750000, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from toolkit.arguments import ArgumentError, whole
from toolkit.credit.account import Liquidation, figures
from toolkit.credit.rules import BPS, DEFAULT_RULES, ProductRules

__all__ = [
    "CLOSE_FACTOR_HF_THRESHOLD",
    "DEFAULT_CLOSE_FACTOR_BPS",
    "MAX_CLOSE_FACTOR_BPS",
    "liquidation_call",
    "percent_div",
    "percent_mul",
]

DEFAULT_CLOSE_FACTOR_BPS = 5_000
MAX_CLOSE_FACTOR_BPS = 10_000
CLOSE_FACTOR_HF_THRESHOLD = Fraction(95, 100)


def percent_mul(value: int, bps: int) -> int:
    """``value × bps / 10,000`` rounded half up, as Aave's ``PercentageMath.percentMul``.

    >>> percent_mul(3, 5_000), percent_mul(1_000, 10_800)
    (2, 1080)
    """
    return (value * bps + BPS // 2) // BPS


def percent_div(value: int, bps: int) -> int:
    """``value × 10,000 / bps`` rounded half up, as Aave's ``PercentageMath.percentDiv``.

    >>> percent_div(1_080, 10_800)
    1000
    """
    return (value * BPS + bps // 2) // bps


def liquidation_call(
    values: Mapping[str, int],
    debt: int,
    *,
    collateral: str | None = None,
    debt_to_cover: int | None = None,
    rules: ProductRules = DEFAULT_RULES,
) -> Liquidation:
    """One call on an account holding collateral worth ``values`` (asset → value) and owing
    ``debt``: repay up to ``debt_to_cover`` (default: the most the close factor allows) against
    ``collateral`` (default: the held asset with the highest bonus, as a liquidator picks).

    A healthy account, or one with nothing to seize, gives a call that moves nothing
    (``repaid == 0``, no ``seized``): not a liquidation.

    >>> liquidation_call({"usdc": 10**9}, debt=10**8).repaid  # healthy: nothing to do
    0
    """
    for asset, value in values.items():
        whole(value, f"values[{asset!r}]", minimum=0)
    whole(debt, "debt", minimum=0)
    before = figures(values, principal=debt, rules=rules).health_factor
    held = {a: v for a, v in values.items() if v > 0}
    if before is None or before >= 1 or not held:
        return Liquidation(0, {}, 0, before)
    if collateral is None:
        collateral = max(held, key=lambda a: (rules.rule(a).liquidation_bonus_bps, held[a], a))
    elif collateral not in held:
        raise ArgumentError(
            "collateral", f"an asset the account holds ({sorted(held)})", collateral
        )
    close = (
        MAX_CLOSE_FACTOR_BPS if before <= CLOSE_FACTOR_HF_THRESHOLD else DEFAULT_CLOSE_FACTOR_BPS
    )
    most = percent_mul(debt, close)
    cover = most if debt_to_cover is None else min(whole(debt_to_cover, "debt_to_cover"), most)
    premium = BPS + rules.rule(collateral).liquidation_bonus_bps
    seized = percent_mul(cover, premium)
    repaid = cover
    if seized > held[collateral]:  # not enough of it: all of it, and the debt that buys
        seized = held[collateral]
        repaid = min(cover, percent_div(seized, premium))
    if repaid == 0 or seized == 0:
        return Liquidation(0, {}, 0, before)
    after = dict(values)
    after[collateral] -= seized
    left = debt - repaid
    bad = left if left > 0 and sum(after.values()) == 0 else 0
    hf = figures(after, principal=left - bad, rules=rules).health_factor
    return Liquidation(repaid, {collateral: seized}, bad, hf)
