"""The credit backtest: the product's rules day by day, exact liquidations, sweeps."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from toolkit.arguments import ArgumentError
from toolkit.backtest.credit import (
    CreditBehaviour,
    CreditSummary,
    credit_sweep,
    default_market,
    generate_book,
    replay_credit,
    scaled_rules,
)
from toolkit.credit import DEFAULT_RULES
from toolkit.models.health import MarketParameters

BOOK = generate_book(400, seed=5)
MARKET = default_market()
CRASH = {10: {"yobtc": -0.5}}


def test_the_same_seed_gives_the_same_run() -> None:
    a = replay_credit(BOOK, MARKET, span_d=20, seed=3)
    b = replay_credit(BOOK, MARKET, span_d=20, seed=3)
    assert a.daily.equals(b.daily) and a.summary == b.summary
    assert a.daily["day"].to_list() == list(range(20))
    assert isinstance(a.summary, CreditSummary) and a.summary.span_d == 20
    assert a.summary.revenue == a.summary.fees + a.summary.interest
    assert a.summary.to_frame().row(0, named=True) == a.summary.as_dict()


def test_fees_are_the_origination_fee_on_every_draw() -> None:
    daily = replay_credit(BOOK, MARKET, span_d=30, seed=1).daily
    np.testing.assert_allclose(daily["fees"].to_numpy(), daily["drawn"].to_numpy() * 0.005)


def test_interest_comes_only_from_late_payers() -> None:
    on_time = replay_credit(
        BOOK, MARKET, span_d=60, seed=2, behaviour=CreditBehaviour(late_share=0.0)
    )
    late = replay_credit(BOOK, MARKET, span_d=60, seed=2, behaviour=CreditBehaviour(late_share=1.0))
    assert on_time.summary.interest == 0.0
    assert late.summary.interest > 0.0
    # nobody is overdue before the first term (37 days) has run out
    assert late.daily.filter(day=36)["overdue_accounts"].item() == 0
    assert late.daily.filter(day=40)["overdue_accounts"].item() > 0


def test_a_crash_liquidates_and_health_is_restored() -> None:
    result = replay_credit(BOOK, MARKET, span_d=20, seed=1, shocks=CRASH)
    crash_day = result.daily.filter(day=10).row(0, named=True)
    assert crash_day["liquidations"] > 0 and crash_day["liquidation_bonus"] > 0
    # after each day's liquidations no account is left below 1 (the exact liquidation works in
    # smallest units; the book in floats sees 1 within float precision)
    assert (result.daily["min_health_factor"] >= 1.0 - 1e-6).all()
    calm = replay_credit(BOOK, MARKET, span_d=20, seed=1)
    assert result.summary.liquidations > calm.summary.liquidations


def test_a_sweep_runs_the_same_through_any_executor() -> None:
    grid = {"ltv_scale": [0.8, 1.1], "bonus_scale": [0.5, 2.0]}
    inline = credit_sweep(BOOK, MARKET, grid, span_d=20, seed=1, shocks=CRASH)
    with ThreadPoolExecutor(2) as pool:
        pooled = credit_sweep(BOOK, MARKET, grid, span_d=20, seed=1, shocks=CRASH, executor=pool)
    assert inline.equals(pooled)
    assert inline.select("ltv_scale", "bonus_scale").rows() == [
        (0.8, 0.5), (0.8, 2.0), (1.1, 0.5), (1.1, 2.0)
    ]  # fmt: skip
    by = {(r["ltv_scale"], r["bonus_scale"]): r for r in inline.iter_rows(named=True)}
    assert by[(1.1, 2.0)]["bonus"] > by[(1.1, 0.5)]["bonus"]  # a larger bonus pays more
    assert by[(1.1, 1 / 2)]["declined"] < by[(0.8, 0.5)]["declined"]  # more credit, fewer no's
    assert inline.columns == ["ltv_scale", "bonus_scale", *CreditSummary.__dataclass_fields__]


def test_a_book_with_debt_owes_it_from_day_0_and_repays_it_at_its_term() -> None:
    owing = BOOK.with_debt(BOOK.values() @ np.full(5, 0.2))
    fresh = replay_credit(BOOK, MARKET, span_d=40, seed=4, progress=False)
    run = replay_credit(owing, MARKET, span_d=40, seed=4, progress=False)
    assert run.daily["debt"][0] > fresh.daily["debt"][0] + 0.9 * owing.debt.sum()
    # the debt carried in falls due 37 days on: repaid then, by those who pay on time
    repaid = run.daily["repaid"] - fresh.daily["repaid"]
    assert repaid[:37].abs().max() == 0 and repaid[37] > 0.5 * owing.debt.sum()


def test_rules_come_from_the_book() -> None:
    tight = BOOK.with_rules(scaled_rules(DEFAULT_RULES, ltv_scale=0.5))
    loose = replay_credit(BOOK, MARKET, span_d=10, seed=1, progress=False)
    strict = replay_credit(tight, MARKET, span_d=10, seed=1, progress=False)
    assert strict.summary.declined > loose.summary.declined


def test_scaled_rules_keep_the_maintenance_margin() -> None:
    rules = scaled_rules(DEFAULT_RULES, ltv_scale=1.1, bonus_scale=2.0)
    btc = rules.rule("yobtc")
    assert (btc.ltv_bps, btc.maintenance_ltv_bps, btc.liquidation_bonus_bps) == (6050, 7550, 1600)
    assert rules.rule("usdc").maintenance_ltv_bps == 10_000  # capped at 100 %


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: credit_sweep(BOOK, MARKET, {"fee_scale": [1.0]}), "grid: must be a mapping of"),
        (lambda: replay_credit(BOOK, MARKET, span_d=0), "span_d: must be an integer >= 1"),
        (
            lambda: replay_credit(BOOK, MARKET, shocks={3: {"doge": -0.1}}),
            "shocks: must be moves of",
        ),
        (lambda: replay_credit(BOOK, MARKET, shocks={3: {"yobtc": -1.0}}), r"shocks\[3\]: must be"),
        (lambda: CreditBehaviour(late_share=1.5), "late_share: must be a finite number"),
        (
            lambda: replay_credit(BOOK, MarketParameters(("usdc",), np.ones(1), np.eye(1))),
            "market: must be parameters of the book's assets",
        ),
    ],
)
def test_bad_settings_name_the_field(call: object, message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        call()  # type: ignore[operator]
