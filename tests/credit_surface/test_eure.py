"""The EURe credit hub: the same rules as USDC's (fee, due date, overdue APR, LTVs) against the
same collateral valued in euros at the scenario's euro price, with its own hub, escrow and
operator; ``/info`` reports it under ``EURE`` beside ``USDC``. Every call executed on chain."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from fractions import Fraction

import pytest

from tests.credit_surface.book import Book, account, credit_book, small_book
from toolkit.credit import DAY, DEFAULT_RULES
from toolkit.scenario import ScenarioError, load_scenario
from toolkit.scenario.credit import CreditSettings, parse_credit

USDC = 10**6
EURE = 10**18


def _eure(book: Book) -> CreditSettings:
    hub = book.settings.hub_for("eure")
    assert hub is not None and hub.asset == "EURe" and hub.asset_decimals == 18
    return hub


def _human(units: int) -> str:
    return f"{Decimal(units).scaleb(-18):f}"


def _eure_info(book: Book, user: str) -> dict[str, str]:
    data = book.ok(f"/credit/accounts/{user}/info")["data"]
    assert set(data) == {"USDC", "EURE"}
    info: dict[str, str] = data["EURE"]
    return info


def test_protocol_lists_both_hubs_and_unknown_assets_are_refused() -> None:
    with credit_book(small_book(0)) as book:
        eure = _eure(book)
        hubs = book.ok("/credit/protocol")["chains"]["eip155:8453"]["creditHubs"]
        assert set(hubs) == {"usdc", "eure"}
        assert hubs["eure"]["assetAddress"] == eure.asset_address
        assert hubs["eure"]["creditHubAddress"] == eure.hub != book.settings.hub
        user = account(50)
        status, body = book.get(f"/credit/v2/accounts/{user}/assets/gbp/operator")
        assert status == 400 and body["error"].startswith("asset:")
        assert (
            book.ok(f"/credit/v2/accounts/{user}/assets/eure/operator")["data"]["receivers"] == []
        )
        usdc = book.settings.asset_address
        details = book.ok(f"/credit/v2/assets/eure/collateral/eip155:8453/{usdc}")["data"]
        assert details["collateralPriceUsd"] == 1.0


def test_lock_draw_repay_unlock_in_euros_to_the_unit() -> None:
    with credit_book(small_book(0)) as book:
        eure = _eure(book)
        user, shop = account(51), account(52)
        usdc = book.settings.asset_address
        book.deal(user, usdc, 1_080 * USDC)
        v2 = f"/credit/v2/accounts/{user}/assets/eure"
        locked = book.ok(f"{v2}/lock", amount=str(1_080 * USDC), earnAsset=usdc)
        assert locked["calls"][1]["to"] == eure.escrow != book.settings.escrow
        book.run(user, locked["calls"])
        assert book.balance(usdc, eure.escrow) == 1_080 * USDC
        info = _eure_info(book, user)
        # 1,080 USD of USDC at 1.08 USD per euro: 1,000 EUR, capacity 90 %.
        assert info["totalCollateralValue"] == "1000.000000000000000000"
        assert info["totalCreditCapacity"] == "900.000000000000000000"
        assert info["healthFactor"] == "Infinity" and info["dueDate"] is None
        # The USDC hub knows nothing of it.
        usdc_info = book.info(user)
        assert usdc_info["totalCollateralValue"] == "0.000000"

        status, body = book.get(f"{v2}/draw", amount=str(900 * EURE + 1), receiver=shop)
        assert status == 400 and "remaining credit capacity" in body["error"]
        assert "EURe" in body["error"]
        book.run(user, book.ok(f"{v2}/draw", amount=str(500 * EURE), receiver=shop)["calls"])
        drawn = book.w3.eth.get_block("latest")["timestamp"]
        assert book.balance(eure.asset_address, shop) == 497_500 * EURE // 1000  # fee 0.50 %
        info = _eure_info(book, user)
        assert info["debt"] == "500.000000000000000000"
        assert info["healthFactor"] == "1.8500"  # 1000 × 92.5 % / 500
        due = DEFAULT_RULES.due_date(drawn)
        book.advance(due + 20 * DAY - book.now())
        interest = DEFAULT_RULES.interest(500 * EURE, due_date=due, now=book.now())
        assert interest > 0 and _eure_info(book, user)["interest"] == _human(interest)

        book.deal(user, eure.asset_address, 600 * EURE)
        book.run(user, book.ok(f"{v2}/repay", amount=str(600 * EURE))["calls"])
        repaid = book.w3.eth.get_block("latest")["timestamp"]
        owed = 500 * EURE + DEFAULT_RULES.interest(500 * EURE, due_date=due, now=repaid)
        assert book.balance(eure.asset_address, user) == 600 * EURE - owed
        assert _eure_info(book, user)["debt"] == "0.000000000000000000"

        book.run(user, book.ok(f"{v2}/unlock", amount=str(1_080 * USDC), collateral=usdc)["calls"])
        assert book.balance(usdc, user) == 1_080 * USDC
        assert _eure_info(book, user)["totalCollateralValue"] == "0.000000000000000000"


def test_euro_figures_follow_the_scenario_price_and_vault_shares() -> None:
    with credit_book(small_book(0)) as book:
        eure = _eure(book)
        c = eure.collateral_by_symbol("gtUSDCp")
        assert c is not None
        now = book.now()
        usdc_hub = book.settings
        assert eure.unit_price(c, now) == usdc_hub.unit_price(c, now) * Fraction(10**12) / Fraction(
            "1.08"
        )


def test_eure_operator_is_its_own() -> None:
    with credit_book(small_book(0)) as book:
        eure = _eure(book)
        user, card = account(53), account(54)
        v2 = f"/credit/v2/accounts/{user}/assets/eure/operator"
        enable = book.ok(
            f"{v2}/auto-topup/enable",
            receiver=card,
            threshold=str(50 * EURE),
            targetBalance=str(100 * EURE),
        )
        assert [c["to"] for c in enable["calls"]] == [eure.hub, eure.operator]
        book.run(user, enable["calls"])
        status = book.ok(v2)["data"]
        assert status["operator"] == eure.operator and [r.lower() for r in status["receivers"]] == [
            card
        ]
        config = book.ok(f"{v2}/auto-topup/config", receiver=card)["config"]
        assert config["threshold"] == str(50 * EURE)
        # The USDC hub's operator status and config are untouched.
        usdc = book.ok(f"/credit/v2/accounts/{user}/assets/usdc/operator")["data"]
        assert usdc["receivers"] == []
        usdc_config = f"/credit/v2/accounts/{user}/assets/usdc/operator/auto-topup/config"
        assert book.get(usdc_config, receiver=card)[0] == 404


def test_no_eure_hub_is_a_404() -> None:
    scenario = load_scenario("default")
    assert scenario.credit is not None
    without = dataclasses.replace(scenario, credit=dataclasses.replace(scenario.credit, others=()))
    with credit_book(without) as book:
        user = account(55)
        status, body = book.get(
            f"/credit/v2/accounts/{user}/assets/eure/draw", amount="1", receiver=user
        )
        assert (status, body["error"]) == (404, "asset: the scenario has no credit hub for eure")
        assert set(book.ok(f"/credit/accounts/{user}/info")["data"]) == {"USDC"}


def test_eure_settings_are_checked() -> None:
    tokens = load_scenario("default").tokens
    credit = parse_credit({"eure": False}, scenario="x", tokens=tokens)
    assert credit is not None and credit.others == ()
    with pytest.raises(ScenarioError, match=r"credit\.eure\.eur_usd"):
        parse_credit({"eure": {"eur_usd": [[0, "0"]]}}, scenario="x", tokens=tokens)
    with pytest.raises(ScenarioError, match=r"credit\.eure\.fx: unknown key"):
        parse_credit({"eure": {"fx": 1}}, scenario="x", tokens=tokens)
    priced = parse_credit({"eure": {"eur_usd": [[0, "1.25"]]}}, scenario="x", tokens=tokens)
    assert priced is not None
    hub = priced.hub_for("EURE")
    assert hub is not None
    usdc = hub.collateral_by_symbol("usdc")
    assert usdc is not None
    assert hub.unit_price(usdc, 0) == Fraction(10**12) / Fraction("1.25")
