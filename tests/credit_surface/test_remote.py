"""Collateral locked on Ethereum: the lock and unlock calls execute on chain 1's escrow, and the
Base hub's ``/info`` counts them only once Ethereum's confirmations (36 s in the default
scenario) have passed since the block that emitted the event — not a second before."""

from __future__ import annotations

from typing import Any

import pytest

from tests.credit_surface.book import BASE, Book, account, credit_book, small_book
from toolkit.codecs.functions import encode_call
from toolkit.credit import DAY
from toolkit.scenario import ScenarioError, load_scenario
from toolkit.scenario.credit import parse_credit

USDC = 10**6
ETHEREUM = 1
CONFIRMATIONS = 36  # the default scenario's confirmation_s of Ethereum


def _eth_usdc(book: Book) -> str:
    (c,) = book.settings.remote
    assert c.chain == ETHEREUM and c.symbol == "USDC"
    return c.address


def _mined_at(book: Book, chain: int) -> int:
    stamp: int = book.web3(chain).eth.get_block("latest")["timestamp"]
    return stamp


def _wait_until(book: Book, moment: int) -> None:
    if moment > book.now():
        book.advance(moment - book.now())


def _lock_on_ethereum(book: Book, user: str, amount: int) -> int:
    """Lock ``amount`` USDC on Ethereum as ``user``; the deposit block's timestamp."""
    usdc = _eth_usdc(book)
    book.deal(user, usdc, amount, chain=ETHEREUM)
    body = book.ok(
        f"/credit/v2/accounts/{user}/assets/usdc/lock", amount=str(amount), earnAsset=usdc
    )
    assert [c["chain"] for c in body["calls"]] == ["1", "1"]
    assert body["calls"][1]["to"] == book.settings.escrow
    book.run(user, body["calls"])
    return _mined_at(book, ETHEREUM)


def test_protocol_and_collateral_details_list_the_ethereum_escrow() -> None:
    with credit_book(small_book(0)) as book:
        usdc = _eth_usdc(book)
        chains = book.ok("/credit/protocol")["chains"]
        assert set(chains) == {"eip155:8453", "eip155:1"}
        entry = chains["eip155:1"]["collateral"][f"erc20:{usdc.lower()}"]
        assert entry["escrowAddress"] == book.settings.escrow
        assert (entry["ltv"], entry["maintenanceLtv"]) == ("9000", "9250")
        assert chains["eip155:1"]["creditHubs"] == {}
        details = book.ok(f"/credit/collateral/eip155:1/{usdc}")["data"]
        assert details["collateralAddress"] == usdc and details["isEarnVault"] is False
        # Base's USDC is not collateral on Ethereum, nor Ethereum's on Base.
        base_usdc = book.settings.asset_address
        assert book.get(f"/credit/collateral/eip155:1/{base_usdc}")[0] == 404
        assert book.get(f"/credit/collateral/eip155:8453/{usdc}")[0] == 404
        assert book.get(f"/credit/collateral/eip155:10/{usdc}")[0] == 404


def test_lock_counts_after_the_confirmations_then_unlock_pays_back_on_ethereum() -> None:
    with credit_book(small_book(0)) as book:
        user = account(40)
        usdc = _eth_usdc(book)
        escrow = book.settings.escrow
        mined = _lock_on_ethereum(book, user, 2_000 * USDC)
        assert book.balance(usdc, escrow, ETHEREUM) == 2_000 * USDC
        assert book.balance(usdc, user, ETHEREUM) == 0
        assert book.info(user)["totalCollateralValue"] == "0.000000"
        _wait_until(book, mined + CONFIRMATIONS - 1)
        assert book.info(user)["totalCollateralValue"] == "0.000000"  # one second early
        status, body = book.get(
            f"/credit/v2/accounts/{user}/assets/usdc/draw", amount=str(USDC), receiver=user
        )
        assert status == 400 and "remaining credit capacity" in body["error"]
        _wait_until(book, mined + CONFIRMATIONS)
        info = book.info(user)
        assert info["totalCollateralValue"] == "2000.000000"
        assert info["totalCreditCapacity"] == "1800.000000"  # the USDC rule: LTV 90 %

        # Credit on Base against collateral on Ethereum, repaid in full.
        v2 = f"/credit/v2/accounts/{user}/assets/usdc"
        book.run(user, book.ok(f"{v2}/draw", amount=str(1_000 * USDC), receiver=user)["calls"])
        assert book.info(user)["healthFactor"] == "1.8500"
        book.deal(user, book.settings.asset_address, 1_000 * USDC)  # sets the balance
        book.run(user, book.ok(f"{v2}/repay", amount=str(1_000 * USDC))["calls"])
        assert book.info(user)["debt"] == "0.000000"

        # Unlock: a withdraw request on Ethereum, paid out once the hub has heard of it.
        status, body = book.get(f"{v2}/unlock", amount=str(2_000 * USDC + 1), collateral=usdc)
        assert status == 400 and body["error"].startswith("amount:")
        unlock = book.ok(f"{v2}/unlock", amount=str(2_000 * USDC), collateral=usdc)
        assert [c["chain"] for c in unlock["calls"]] == ["1"]
        book.run(user, unlock["calls"])
        mined = _mined_at(book, ETHEREUM)
        assert book.info(user)["totalCollateralValue"] == "2000.000000"
        assert book.balance(usdc, user, ETHEREUM) == 0
        _wait_until(book, mined + CONFIRMATIONS - 1)
        assert book.info(user)["totalCollateralValue"] == "2000.000000"
        _wait_until(book, mined + CONFIRMATIONS)
        assert book.info(user)["totalCollateralValue"] == "0.000000"
        assert book.balance(usdc, user, ETHEREUM) == 2_000 * USDC
        assert book.balance(usdc, escrow, ETHEREUM) == 0


def test_a_withdrawal_that_a_draw_overtook_is_handed_back() -> None:
    with credit_book(small_book(0)) as book:
        user = account(41)
        usdc = _eth_usdc(book)
        mined = _lock_on_ethereum(book, user, 1_000 * USDC)
        _wait_until(book, mined + CONFIRMATIONS)
        v2 = f"/credit/v2/accounts/{user}/assets/usdc"
        # Healthy with no debt: the unlock of everything is built and requested on Ethereum...
        book.run(user, book.ok(f"{v2}/unlock", amount=str(1_000 * USDC), collateral=usdc)["calls"])
        requested = _mined_at(book, ETHEREUM)
        # ...but a draw on Base gets in first, so unlocking would make it liquidatable.
        book.run(user, book.ok(f"{v2}/draw", amount=str(900 * USDC), receiver=user)["calls"])
        _wait_until(book, requested + CONFIRMATIONS)
        info = book.info(user)
        assert info["totalCollateralValue"] == "1000.000000" and info["debt"] == "900.000000"
        assert book.balance(usdc, user, ETHEREUM) == 0
        # The collateral is locked again: the same request can be made once the debt is gone.
        book.deal(user, book.settings.asset_address, 1_000 * USDC)  # sets the balance
        book.run(user, book.ok(f"{v2}/repay", amount=str(900 * USDC))["calls"])
        book.run(user, book.ok(f"{v2}/unlock", amount=str(1_000 * USDC), collateral=usdc)["calls"])
        _wait_until(book, _mined_at(book, ETHEREUM) + CONFIRMATIONS)
        assert book.balance(usdc, user, ETHEREUM) == 1_000 * USDC
        assert book.info(user)["totalCollateralValue"] == "0.000000"


def test_earn_on_ethereum_collateral_and_unsupported_tokens_are_refused() -> None:
    with credit_book(small_book(0)) as book:
        user = account(42)
        usdc = _eth_usdc(book)
        v1 = f"/credit/accounts/{user}"
        status, body = book.get(f"{v1}/lock", amount="1", asset=usdc, earn="gauntlet-usdc-prime")
        assert status == 400 and body["error"].startswith("earn:")
        # The Base escrow refuses Ethereum's USDC (it is collateral on its own chain only).
        book.deal(user, book.settings.asset_address, USDC)
        call = {
            "chain": str(BASE),
            "to": book.settings.escrow,
            "data": encode_call("collateralEscrow.deposit", usdc, USDC),
            "value": "0",
        }
        (receipt,) = book.execute(user, [call])
        assert receipt["status"] == 0


def _liquidate(book: Book, liquidator: str, borrower: str) -> None:
    s = book.settings
    book.deal(liquidator, s.asset_address, 10_000 * USDC)
    calls: list[dict[str, Any]] = [
        {
            "chain": str(BASE),
            "to": s.asset_address,
            "data": encode_call("erc20.approve", s.hub, 10_000 * USDC),
            "value": "0",
        },
        {
            "chain": str(BASE),
            "to": s.hub,
            "data": encode_call("creditHub.liquidate", borrower, 10_000 * USDC),
            "value": "0",
        },
    ]
    book.run(liquidator, calls)


def test_liquidation_pays_ethereum_collateral_to_the_liquidator_on_ethereum() -> None:
    with credit_book(small_book(0)) as book:
        user, liquidator = account(43), account(44)
        usdc = _eth_usdc(book)
        mined = _lock_on_ethereum(book, user, 1_000 * USDC)
        _wait_until(book, mined + CONFIRMATIONS)
        v2 = f"/credit/v2/accounts/{user}/assets/usdc"
        book.run(user, book.ok(f"{v2}/draw", amount=str(900 * USDC), receiver=user)["calls"])
        # 15 % APR after the due date pushes the debt past 92.5 % of the collateral.
        book.advance(140 * DAY)
        assert float(book.info(user)["healthFactor"]) < 1
        _liquidate(book, liquidator, user)
        seized_at = _mined_at(book, BASE)
        left = book.units(book.info(user)["totalCollateralValue"])
        seized = 1_000 * USDC - left
        assert seized > 0 and float(book.info(user)["healthFactor"]) >= 1
        assert book.balance(usdc, liquidator, ETHEREUM) == 0
        _wait_until(book, seized_at + 10)  # Base's confirmations
        assert book.balance(usdc, liquidator, ETHEREUM) == seized
        assert book.balance(usdc, book.settings.escrow, ETHEREUM) == left


def test_remote_chains_are_checked() -> None:
    tokens = load_scenario("default").tokens
    optimism = parse_credit({"remote_chains": [10]}, scenario="x", tokens=tokens)
    assert optimism is not None
    assert [(c.chain, c.symbol) for c in optimism.remote] == [(10, "USDC")]
    none = parse_credit({"remote_chains": []}, scenario="x", tokens=tokens)
    assert none is not None and none.remote == () and none.remote_chains == ()
    with pytest.raises(ScenarioError, match=r"credit\.remote_chains\[0\]: must be distinct"):
        parse_credit({"remote_chains": [8453]}, scenario="x", tokens=tokens)
    with pytest.raises(ScenarioError, match=r"credit\.remote_chains\[1\]: must be distinct"):
        parse_credit({"remote_chains": [1, 1]}, scenario="x", tokens=tokens)
    with pytest.raises(ScenarioError, match=r"credit\.remote_chains\[0\]: no token"):
        parse_credit({"remote_chains": [5]}, scenario="x", tokens=tokens)
    with pytest.raises(ScenarioError, match=r"credit\.remote_chains: must be an array"):
        parse_credit({"remote_chains": 1}, scenario="x", tokens=tokens)
