"""The super-vault ``superUSDC`` (over USDC) and the BTC vault ``yoBTC`` (over cbBTC) are ERC-7540
vaults, as the vendor lists them: wrap deposits synchronously, unwrap (or unlock with
``unwrap``) requests the redemption, and ``/credit/earn/claim`` claims it by the ``requestId``
of the vault's ``RedeemRequest`` event once the delay has passed — executed on chain."""

from __future__ import annotations

from typing import Any

import pytest

from tests.credit_surface.book import Book, account, credit_book, small_book
from toolkit.codecs import events
from toolkit.codecs.function_table import FUNCTIONS
from toolkit.credit import collateral_value
from toolkit.scenario.credit import CBBTC, CreditCollateral

CHAIN = {"chain": "eip155:8453"}
CASES = [("superUSDC", "superform-usdc", "Superform", 10**6), ("yoBTC", "yo-btc", "Yo", 10**8)]


def _vault(book: Book, symbol: str) -> tuple[CreditCollateral, str, int]:
    c = book.settings.collateral_by_symbol(symbol)
    assert c is not None and c.vault is not None and c.vault.asynchronous
    underlying, decimals = book.settings.underlying_of(c)
    return c, underlying, decimals


def _request_id(receipt: Any) -> tuple[str, int]:
    """The ``requestId`` of the receipt's ``RedeemRequest`` and its shares."""
    (log,) = [
        events.decode_log([t.to_0x_hex() for t in lg["topics"]], bytes(lg["data"]))
        for lg in receipt["logs"]
        if lg["topics"][0].to_0x_hex() == events.EVENTS["vault.RedeemRequest"].topic0
    ]
    return str(log.args["requestId"]), int(log.args["shares"])


def test_protocol_lists_them_as_erc7540_with_their_underlyings() -> None:
    with credit_book(small_book(0)) as book:
        strategies = book.ok("/credit/protocol")["chains"]["eip155:8453"]["strategies"]
        assert strategies["superform-usdc"]["vaultType"] == "erc7540"
        assert strategies["superform-usdc"]["curator"] == "Superform"
        assert strategies["superform-usdc"]["protocol"] == "superform"
        assert strategies["superform-usdc"]["underlyingAddress"] == book.settings.asset_address
        assert strategies["yo-btc"]["vaultType"] == "erc7540"
        assert strategies["yo-btc"]["underlyingAddress"] == CBBTC
        assert strategies["gauntlet-usdc-prime"]["vaultType"] == "erc4626"
        yobtc = book.settings.collateral_by_symbol("yoBTC")
        assert yobtc is not None
        details = book.ok(f"/credit/collateral/eip155:8453/{yobtc.address}")["data"]
        assert details["isEarnVault"] is True and details["underlyingAsset"] == CBBTC
        assert details["underlyingPriceUsd"] == 60_000.0
        assert details["collateralPriceUsd"] >= 60_000.0  # the share price has grown


@pytest.mark.parametrize(("symbol", "strategy", "curator", "unit"), CASES)
def test_wrap_request_then_claim_by_request_id(
    symbol: str, strategy: str, curator: str, unit: int
) -> None:
    with credit_book(small_book(0)) as book:
        user, receiver = account(80), account(81)
        vault, underlying, decimals = _vault(book, symbol)
        book.deal(user, underlying, 3 * unit)
        wrap = book.ok(
            "/credit/earn/wrap",
            account=user,
            amount=str(3 * unit),
            token=underlying,
            earn=strategy,
            **CHAIN,
        )
        assert wrap["tokenOut"] == vault.address
        book.run(user, wrap["calls"])
        shares = book.balance(vault.address, user)
        assert 0 < shares <= int(wrap["amountOut"]) and book.balance(underlying, user) == 0
        unwrap = book.ok(
            "/credit/earn/unwrap",
            owner=user,
            receiver=receiver,
            amount=str(shares),
            asset=vault.address,
            **CHAIN,
        )
        assert unwrap["tokenOut"] == underlying
        assert [c["data"][:10] for c in unwrap["calls"]] == [
            FUNCTIONS["vault.requestRedeem"].selector
        ]
        (receipt,) = book.execute(user, unwrap["calls"])
        assert receipt["status"] == 1
        request_id, requested = _request_id(receipt)
        assert requested == shares
        requested_at = book.w3.eth.get_block(receipt["blockNumber"])["timestamp"]
        claim = {
            "owner": user,
            "receiver": receiver,
            "asset": vault.address,
            "claimRequestId": request_id,
            **CHAIN,
        }
        status, body = book.get("/credit/earn/claim", **claim)
        assert status == 400 and "is claimable from" in body["error"]
        assert vault.vault is not None and vault.vault.redeem_delay_s is not None
        book.advance(requested_at + vault.vault.redeem_delay_s - book.now())
        book.run(user, book.ok("/credit/earn/claim", **claim)["calls"])
        paid = int(shares * vault.share_price(requested_at, decimals))
        assert book.balance(underlying, receiver) == paid
        assert 3 * unit - 2 <= paid <= 3 * unit * 1001 // 1000  # seconds of yield at most


def test_lock_yobtc_with_earn_then_unlock_with_unwrap_and_claim() -> None:
    with credit_book(small_book(0)) as book:
        user = account(82)
        vault, cbbtc, decimals = _vault(book, "yoBTC")
        book.deal(user, cbbtc, 10**8)
        v2 = f"/credit/v2/accounts/{user}/assets/usdc"
        lock = book.ok(f"{v2}/lock", amount=str(10**8), earnAsset=cbbtc, earn="yo-btc")
        assert len(lock["calls"]) == 4  # approve, deposit, approve shares, lock shares
        book.run(user, lock["calls"])
        locked = book.hub().collateral[(user, vault.address.lower())]
        price = book.settings.unit_price(vault, book.now())
        value = book.units(book.info(user)["totalCollateralValue"])
        assert value == collateral_value(locked, price)
        assert 59_900 * 10**6 < value < 60_100 * 10**6  # one BTC at 60,000 USD

        unlock = book.ok(
            f"{v2}/unlock", amount=str(locked), collateral=vault.address, unwrap="true"
        )
        assert [c["data"][:10] for c in unlock["calls"]][1] == FUNCTIONS[
            "vault.requestRedeem"
        ].selector
        receipts = book.execute(user, unlock["calls"])
        assert all(r["status"] == 1 for r in receipts)
        request_id, shares = _request_id(receipts[1])
        assert shares == locked
        assert book.info(user)["totalCollateralValue"] == "0.000000"
        requested_at = book.w3.eth.get_block(receipts[1]["blockNumber"])["timestamp"]
        book.advance(86_400)
        claim = book.ok(
            "/credit/earn/claim",
            owner=user,
            receiver=user,
            asset=vault.address,
            claimRequestId=request_id,
            **CHAIN,
        )
        book.run(user, claim["calls"])
        # Every cbBTC went into the vault; what comes back is the locked shares' worth (the
        # lock locked the shares previewed an hour ahead: the rest stays in the wallet).
        paid = int(locked * vault.share_price(requested_at, decimals))
        assert book.balance(cbbtc, user) == paid and 10**8 - 1_000 <= paid < 10**8
        assert book.balance(vault.address, user) > 0


def test_wrap_refuses_a_token_the_strategy_does_not_hold() -> None:
    with credit_book(small_book(0)) as book:
        user = account(83)
        status, body = book.get(
            "/credit/earn/wrap",
            account=user,
            amount="100",
            token=book.settings.asset_address,
            earn="yo-btc",
            **CHAIN,
        )
        assert status == 400 and body["error"] == (f"token: must be {CBBTC}, the asset of yoBTC")
