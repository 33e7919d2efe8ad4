"""The credit product's rules and an account's figures: the published numbers, to the unit."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.arguments import ArgumentError
from toolkit.credit import (
    BPS,
    DAY,
    DEFAULT_RULES,
    YEAR,
    CollateralRule,
    ProductRules,
    figures,
    liquidation,
)

USDC = 10**6


def test_a_draw_of_1000_delivers_995_and_owes_1000() -> None:
    fee = DEFAULT_RULES.draw_fee(1_000 * USDC)
    assert (1_000 * USDC - fee, fee) == (995 * USDC, 5 * USDC)
    assert DEFAULT_RULES.draw_fee(1) == 1  # rounded up: never a free draw
    assert DEFAULT_RULES.draw_fee(0) == 0


def test_interest_starts_after_the_cycle_and_the_grace_period() -> None:
    due = DEFAULT_RULES.due_date(first_draw=1_000)
    assert due == 1_000 + 37 * DAY
    principal = 1_000 * USDC
    assert DEFAULT_RULES.interest(principal, due_date=due, now=due) == 0
    assert DEFAULT_RULES.interest(principal, due_date=due, now=due + YEAR) == 150 * USDC
    one_day = DEFAULT_RULES.interest(principal, due_date=due, now=due + DAY)
    assert one_day == principal * 1500 * DAY // (BPS * YEAR) == 410_958
    assert DEFAULT_RULES.interest(principal, due_date=None, now=due + YEAR) == 0


def test_the_published_collateral_parameters() -> None:
    table = {
        a: (r.ltv_bps, r.maintenance_ltv_bps, r.liquidation_bonus_bps)
        for a, r in DEFAULT_RULES.collateral.items()
    }
    assert table == {
        "usdc": (9000, 9250, 100),
        "gtusdcp": (7500, 8000, 600),
        "superusdc": (7000, 7500, 600),
        "yousd": (7000, 8000, 600),
        "yobtc": (5500, 7000, 800),
    }


def test_the_figures_of_a_mixed_account() -> None:
    values = {"usdc": 1_000 * USDC, "yobtc": 2_000 * USDC}
    f = figures(values, principal=1_500 * USDC, interest=12 * USDC, due_date=99)
    assert f.total_collateral_value == 3_000 * USDC
    assert f.total_credit_capacity == 900 * USDC + 1_100 * USDC
    assert f.remaining_credit_capacity == 2_000 * USDC - 1_512 * USDC
    assert f.health_factor == Fraction(925 + 1_400, 1_512)
    assert f.m_health_factor == Fraction(2_000, 1_512)
    # liquidation limit: the value, at this mix, where the health factor is exactly 1
    limit = f.liquidation_limit
    assert Fraction(2_325, 3_000) * limit >= 1_512 * USDC > Fraction(2_325, 3_000) * (limit - 1)
    assert (f.debt, f.due_date, f.liquidatable, f.can_draw) == (1_512 * USDC, 99, False, True)


def test_no_debt_means_an_infinite_health_factor_and_no_due_date() -> None:
    f = figures({"usdc": 10 * USDC}, due_date=5)
    assert (f.health_factor, f.m_health_factor, f.liquidation_limit, f.due_date) == (
        None,
        None,
        0,
        None,
    )
    assert not f.liquidatable


def test_capacity_is_floored_at_zero_and_stops_draws() -> None:
    f = figures({"usdc": 100 * USDC}, principal=91 * USDC)
    assert f.remaining_credit_capacity == 0 and not f.can_draw and not f.liquidatable


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: figures({"usdc": -1}), "values['usdc']: must be an integer >= 0, got -1"),
        (
            lambda: figures({"usdc": 1}, principal=1.5),  # type: ignore[arg-type]  # refused
            "principal: must be an integer >= 0",
        ),
        (lambda: figures({"doge": 1}), "asset: 'doge' is not a supported collateral"),
        (lambda: DEFAULT_RULES.draw_fee(-5), "amount: must be an integer >= 0, got -5"),
        (lambda: CollateralRule("x", "k", 8000, 7000, 100), "maintenance_ltv_bps: must be"),
        (lambda: ProductRules(origination_fee_bps=BPS), "origination_fee_bps: must be"),
    ],
)
def test_bad_input_names_the_field_and_the_rule(call: object, message: str) -> None:
    with pytest.raises((ArgumentError, KeyError), match=message.replace("[", r"\[")):
        call()  # type: ignore[operator]


def test_a_liquidation_restores_health_to_one_and_pays_the_bonus() -> None:
    values, debt = {"yobtc": 1_000 * USDC}, 720 * USDC
    assert figures(values, principal=debt).liquidatable
    liq = liquidation(values, debt)
    assert liq.bad_debt == 0
    # the closed form R = (D - V m) / (1 - m (1 + b)), rounded up to whole units
    closed = Fraction(720 - 700, 1) * USDC / (1 - Fraction(7, 10) * Fraction(108, 100))
    assert 0 <= liq.repaid - closed < 4
    assert liq.seized["yobtc"] == -(-liq.repaid * 108 // 100)  # repayment plus the 8 % bonus
    assert liq.health_factor is not None and 1 <= liq.health_factor < 1 + Fraction(1, 10**6)


def test_a_healthy_account_is_not_liquidated() -> None:
    liq = liquidation({"usdc": 1_000 * USDC}, 100 * USDC)
    assert (liq.repaid, dict(liq.seized), liq.bad_debt) == (0, {}, 0)


def test_an_insolvent_account_leaves_bad_debt() -> None:
    liq = liquidation({"yobtc": 500 * USDC}, 720 * USDC)
    assert liq.seized == {"yobtc": 500 * USDC}
    assert liq.repaid == 500 * USDC * 100 // 108
    assert liq.bad_debt == 720 * USDC - liq.repaid
    assert liq.health_factor is None


def test_a_mix_is_seized_best_bonus_first() -> None:
    values = {"usdc": 300 * USDC, "yobtc": 200 * USDC}
    debt = 420 * USDC  # HF = (277.5 + 140) / 420 < 1
    liq = liquidation(values, debt)
    assert list(liq.seized) == ["yobtc", "usdc"] or list(liq.seized) == ["yobtc"]
    left = {a: values[a] - liq.seized.get(a, 0) for a in values}
    after = figures(left, principal=debt - liq.repaid)
    assert after.health_factor is not None and after.health_factor >= 1
    assert liq.health_factor == after.health_factor


@settings(max_examples=150, deadline=None)
@given(
    usdc=st.integers(0, 10**12),
    btc=st.integers(0, 10**12),
    vault=st.integers(0, 10**12),
    debt=st.integers(1, 2 * 10**12),
)
def test_no_liquidation_creates_value(usdc: int, btc: int, vault: int, debt: int) -> None:
    values = {"usdc": usdc, "yobtc": btc, "gtusdcp": vault}
    liq = liquidation(values, debt)
    seized = sum(liq.seized.values())
    assert all(0 <= liq.seized.get(a, 0) <= v for a, v in values.items())
    assert 0 <= liq.repaid <= debt
    # the liquidator never gets more than the repayment plus the best bonus (and a unit per asset)
    assert seized <= liq.repaid * 108 // 100 + 3
    if liq.bad_debt:
        assert seized == sum(values.values()) and liq.repaid + liq.bad_debt == debt
    else:
        left = {a: values[a] - liq.seized.get(a, 0) for a in values}
        after = figures(left, principal=debt - liq.repaid).health_factor
        assert after is None or after >= 1
