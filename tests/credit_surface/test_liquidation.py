"""Partial liquidation on chain: a BTC-vault collateral whose oracle price falls along the
scenario path; ``liquidate`` restores the health factor to 1 (not a unit more than needed),
pays the liquidator the 8 % bonus in collateral, and records bad debt when collateral is gone."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from fractions import Fraction

from tests.credit_surface.book import T0, Book, account, credit_book
from toolkit.codecs.functions import encode_call
from toolkit.credit import collateral_value, liquidation
from toolkit.scenario import Scenario, load_scenario
from toolkit.scenario.credit import CreditCollateral

USDC = 10**6
BTC = 10**8


def _falling_btc(to_usd: int) -> Scenario:
    """The default scenario with yoBTC's cbBTC at 60,000 USD until T0 + 1000 s, then
    ``to_usd``, and the vault's yield at zero (so the price path alone moves its value)."""
    scenario = load_scenario("default")
    credit = scenario.credit
    assert credit is not None
    path = ((T0, Decimal(60_000)), (T0 + 1_000, Decimal(60_000)), (T0 + 1_001, Decimal(to_usd)))

    def falling(c: CreditCollateral) -> CreditCollateral:
        assert c.vault is not None
        return dataclasses.replace(c, prices=path, vault=dataclasses.replace(c.vault, apy_bps=0))

    collateral = tuple(falling(c) if c.key == "yobtc" else c for c in credit.collateral)
    return dataclasses.replace(scenario, credit=dataclasses.replace(credit, collateral=collateral))


def _borrow_against_btc(book: Book, user: str) -> None:
    btc = book.settings.collateral_by_symbol("yoBTC")
    assert btc is not None
    book.deal(user, btc.address, BTC)
    v2 = f"/credit/v2/accounts/{user}/assets/usdc"
    book.run(user, book.ok(f"{v2}/lock", amount=str(BTC), earnAsset=btc.address)["calls"])
    info = book.info(user)
    assert info["totalCollateralValue"] == "60000.000000"
    assert info["totalCreditCapacity"] == "33000.000000"  # LTV 55 %
    book.run(user, book.ok(f"{v2}/draw", amount=str(33_000 * USDC), receiver=user)["calls"])
    status, body = book.get(f"{v2}/draw", amount="1", receiver=user)
    assert status == 400 and "remaining credit capacity" in body["error"]


def _liquidate(book: Book, liquidator: str, borrower: str) -> list[object]:
    usdc = book.settings.asset_address
    book.deal(liquidator, usdc, 100_000 * USDC)
    calls = [
        {
            "chain": "8453",
            "to": usdc,
            "data": encode_call("erc20.approve", book.settings.hub, 100_000 * USDC),
            "value": "0",
        },
        {
            "chain": "8453",
            "to": book.settings.hub,
            "data": encode_call("creditHub.liquidate", borrower, 100_000 * USDC),
            "value": "0",
        },
    ]
    return book.execute(liquidator, calls)


def test_liquidation_restores_the_health_factor_to_one_and_pays_the_bonus() -> None:
    with credit_book(_falling_btc(40_000)) as book:
        user, liquidator = account(40), account(41)
        _borrow_against_btc(book, user)
        btc = book.settings.collateral_by_symbol("yoBTC")
        assert btc is not None
        # Healthy: nobody may liquidate.
        (early,) = _liquidate(book, liquidator, user)[1:]
        assert early["status"] == 0  # type: ignore[index]
        book.advance(T0 + 1_010 - book.now())
        info = book.info(user)
        assert info["healthFactor"] == "0.8484"  # 40,000 × 70 % / 33,000
        assert info["totalCollateralValue"] == "40000.000000"

        usdc = book.settings.asset_address
        approve, liquidate = _liquidate(book, liquidator, user)
        assert liquidate["status"] == 1  # type: ignore[index]
        paid = 100_000 * USDC - book.balance(usdc, liquidator)
        seized = book.balance(btc.address, liquidator)
        # The plan of toolkit.credit at the oracle price: repay R, seize R × 1.08 in BTC.
        price = Fraction(40_000 * USDC, BTC)
        plan = liquidation({"yobtc": collateral_value(BTC, price)}, 33_000 * USDC)
        assert paid == plan.repaid
        assert seized == int(plan.seized["yobtc"] / price)
        assert collateral_value(seized, price) <= plan.repaid * Fraction(108, 100)
        assert collateral_value(seized + 1, price) > plan.repaid * Fraction(108, 100)
        hub = book.hub()
        after = hub.figures(user.lower(), book.now())
        assert after.health_factor is not None and after.health_factor >= 1
        # Just enough: above 1 only by the rounding of whole satoshis (one is 400 USDC units).
        assert after.health_factor < 1 + Fraction(1, 10**6)
        info = book.info(user)
        assert info["healthFactor"].startswith("1.0000")
        assert book.units(info["debt"]) == 33_000 * USDC - plan.repaid
        assert hub.totals["bad_debt"] == 0
        assert approve["status"] == 1  # type: ignore[index]


def test_collapse_leaves_bad_debt_recorded() -> None:
    with credit_book(_falling_btc(20_000)) as book:
        user, liquidator = account(42), account(43)
        _borrow_against_btc(book, user)
        btc = book.settings.collateral_by_symbol("yoBTC")
        assert btc is not None
        book.advance(T0 + 1_010 - book.now())
        _, liquidate = _liquidate(book, liquidator, user)
        assert liquidate["status"] == 1  # type: ignore[index]
        usdc = book.settings.asset_address
        paid = 100_000 * USDC - book.balance(usdc, liquidator)
        # Everything is seized: 20,000 of value covers 20,000 / 1.08 of the debt.
        assert book.balance(btc.address, liquidator) == BTC
        assert paid == int(Fraction(20_000 * USDC) / Fraction(108, 100))
        hub = book.hub()
        assert hub.totals["bad_debt"] == 33_000 * USDC - paid
        info = book.info(user)
        assert info["debt"] == "0.000000" and info["totalCollateralValue"] == "0.000000"
