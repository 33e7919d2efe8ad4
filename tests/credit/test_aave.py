"""Health factor and liquidation sizing against Aave v3's published formulas and worked examples.

References (facts recorded, no code copied):
- Aave v3 core, ``GenericLogic.calculateUserAccountData``: health factor
  ``Σ collateral·price·liquidationThreshold / total debt``, below 1 liquidatable.
- Aave v3 core, ``LiquidationLogic``: close factor 50 % (``DEFAULT_LIQUIDATION_CLOSE_FACTOR``),
  100 % (``MAX_LIQUIDATION_CLOSE_FACTOR``) at a health factor at or below 0.95
  (``CLOSE_FACTOR_HF_THRESHOLD``); collateral seized ``debtToCover · debtPrice ·
  liquidationBonus / collateralPrice``; above the user's balance, the whole balance is seized
  and ``debtAmountNeeded = balance · collateralPrice / (debtPrice · liquidationBonus)``;
  ``PercentageMath`` rounds half up.
- Aave v3 developer docs, "Liquidations" guide: ``maxAmountOfCollateralToLiquidate =
  debtAssetPrice · debtToCover · liquidationBonus / collateralPrice``.
- Aave risk docs' worked examples: 0.25 ETH at 4,000 USD (LTV 70 %, threshold 75 %) borrowing
  500 USD has a health factor of 1.5, below 1 at 2,664 USD; Bob (5 ETH and 4 ETH of YFI,
  5 ETH of DAI debt) is liquidated for 2.5 ETH of DAI, and the liquidator claims YFI (bonus
  15 % over ETH's 5 %): 2.5 + 0.375 = 2.875 ETH of YFI.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.arguments import ArgumentError
from toolkit.credit import (
    CLOSE_FACTOR_HF_THRESHOLD,
    CollateralRule,
    ProductRules,
    figures,
    liquidation_call,
)

USD = 10**6  # values in millionths of a dollar, the credit asset's smallest unit
ETH_RULE = CollateralRule("eth", "volatile", 7000, 7500, 500)
RULES = ProductRules(
    collateral={
        "eth": ETH_RULE,
        "yfi": CollateralRule("yfi", "volatile", 4000, 5500, 1500),
        "usdc": CollateralRule("usdc", "stable", 9000, 9250, 100),
    }
)


def test_the_health_factor_of_the_docs_example() -> None:
    """0.25 ETH at 4,000 USD against 500 USD of debt: 1.5; at 2,664 USD: 0.999, liquidatable."""
    at_4000 = figures({"eth": 1_000 * USD}, principal=500 * USD, rules=RULES)
    assert at_4000.health_factor == Fraction(3, 2)
    assert at_4000.total_credit_capacity == 700 * USD  # the LTV's maximum debt
    at_2664 = figures({"eth": 666 * USD}, principal=500 * USD, rules=RULES)
    assert at_2664.health_factor == Fraction(666 * 75, 500 * 100)
    assert at_2664.liquidatable


def test_bobs_liquidation_claims_2_875_eth_of_yfi_for_2_5_eth_of_dai() -> None:
    """Bob holds 5 ETH and 4 ETH of YFI and owes 5 ETH of DAI (prices in ETH, scaled to
    integers). His health factor is (5·0.75 + 4·0.55) / 5 = 1.19 at these thresholds, so the
    example's 'if it drops below 1' is reached by a 20 % fall of both collaterals, which
    leaves the claim in ETH terms as the example states it."""
    eth = 10**12
    values = {"eth": 4 * eth, "yfi": 16 * eth // 5}  # both 20 % lower
    debt = 5 * eth
    hf = figures(values, principal=debt, rules=RULES).health_factor
    assert hf is not None and CLOSE_FACTOR_HF_THRESHOLD < hf < 1  # 0.952
    call = liquidation_call(values, debt, rules=RULES)
    assert call.repaid == 5 * eth // 2  # 50 %: the close factor
    assert call.seized == {"yfi": 2_875 * eth // 1_000}  # YFI: the higher bonus
    assert call.bad_debt == 0


def test_the_close_factor_is_100_percent_at_or_below_0_95() -> None:
    values = {"eth": 1_000 * USD}
    debt = 789_474 * USD // 1_000  # HF 0.95000
    health = figures(values, principal=debt, rules=RULES).health_factor
    assert health is not None and health <= CLOSE_FACTOR_HF_THRESHOLD
    full = liquidation_call(values, debt, rules=RULES)
    assert full.repaid == debt  # all of it: 1.05 × debt ≤ 1,000 USD of collateral
    assert full.seized == {"eth": (debt * 10_500 + 5_000) // 10_000}
    half = liquidation_call(values, 780 * USD, rules=RULES)  # HF 0.9615: above the threshold
    assert half.repaid == 390 * USD


def test_seizure_is_capped_by_the_collateral_and_the_debt_backed_out_of_it() -> None:
    """HF 0.6: the 100 % close factor would seize 1,312.5 USD of ETH; 1,000 is there, so all of
    it goes, repaying 1,000 / 1.05 = 952.38 USD; the account has nothing left and 297.62 USD
    of debt is written off (Aave v3.3's deficit)."""
    call = liquidation_call({"eth": 1_000 * USD}, 1_250 * USD, rules=RULES)
    assert call.seized == {"eth": 1_000 * USD}
    assert call.repaid == (1_000 * USD * 10_000 + 10_500 // 2) // 10_500 == 952_380_952
    assert call.bad_debt == 1_250 * USD - 952_380_952
    assert call.health_factor is None


def test_the_formula_in_amounts_and_prices() -> None:
    """The docs' ``debtPrice · debtToCover · bonus / collateralPrice`` in token amounts: 1,000 USD
    of debt against WETH at 2,500 USD with a 5 % bonus seizes 0.42 WETH."""
    price = Fraction(2_500)
    weth = Fraction(3)  # 7,500 USD of ETH
    debt = 5_700 * USD  # HF 0.987
    call = liquidation_call({"eth": int(weth * price * USD)}, debt, debt_to_cover=1_000 * USD,
                            rules=RULES)  # fmt: skip
    assert Fraction(call.seized["eth"], USD) / price == Fraction(1_000) * Fraction(105, 100) / price
    assert Fraction(call.seized["eth"], USD) / price == Fraction(42, 100)


@settings(max_examples=300, deadline=None)
@given(
    eth=st.integers(0, 10**12),
    usdc=st.integers(0, 10**12),
    debt=st.integers(1, 2 * 10**12),
    cover=st.one_of(st.none(), st.integers(1, 2 * 10**12)),
)
def test_every_call_obeys_the_published_bounds(
    eth: int, usdc: int, debt: int, cover: int | None
) -> None:
    values = {"eth": eth, "usdc": usdc}
    hf = figures(values, principal=debt, rules=RULES).health_factor
    call = liquidation_call(values, debt, debt_to_cover=cover, rules=RULES)
    if hf is None or hf >= 1 or eth + usdc == 0:
        assert (call.repaid, call.seized) == (0, {})
        return
    close = 1 if hf <= CLOSE_FACTOR_HF_THRESHOLD else Fraction(1, 2)
    assert call.repaid <= debt * close + 1  # the close factor, half-up rounding
    if cover is not None:
        assert call.repaid <= cover
    if call.repaid == 0:
        assert call.seized == {}
        return
    ((asset, seized),) = call.seized.items()
    assert asset == ("eth" if eth else "usdc")  # the higher bonus, when held
    assert 0 < seized <= values[asset]
    premium = 1 + Fraction(RULES.rule(asset).liquidation_bonus_bps, 10_000)
    if seized < values[asset]:  # not capped: seized = repaid × (1 + bonus), half up
        assert abs(seized - call.repaid * premium) <= Fraction(1, 2)
    else:  # capped: repaid backed out of the whole balance, never more than it buys
        assert call.repaid <= seized / premium + Fraction(1, 2)


def test_a_collateral_the_account_does_not_hold_is_refused() -> None:
    with pytest.raises(ArgumentError, match=r"collateral: must be an asset the account holds"):
        liquidation_call({"eth": 10 * USD}, 10 * USD, collateral="usdc", rules=RULES)
