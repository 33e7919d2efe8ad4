"""Earn positions: lock with ``earn`` wraps USDC into the ERC-4626 vault and locks the shares;
unlock with ``unwrap`` redeems them; wrap/unwrap build calls that execute; the share price
grows along the scenario's yield path and the collateral value with it."""

from __future__ import annotations

from fractions import Fraction

from tests.credit_surface.book import account, credit_book, small_book
from toolkit.codecs import events
from toolkit.codecs.function_table import FUNCTIONS
from toolkit.codecs.functions import encode_call
from toolkit.credit import YEAR, collateral_value

USDC = 10**6


def test_lock_with_earn_then_unlock_with_unwrap() -> None:
    with credit_book(small_book(0)) as book:
        user = account(70)
        usdc = book.settings.asset_address
        vault = book.settings.collateral_by_symbol("gtUSDCp")
        assert vault is not None and vault.vault is not None
        book.deal(user, usdc, 1_000 * USDC)
        v2 = f"/credit/v2/accounts/{user}/assets/usdc"
        lock = book.ok(
            f"{v2}/lock", amount=str(1_000 * USDC), earnAsset=usdc, earn="gauntlet-usdc-prime"
        )
        assert len(lock["calls"]) == 4  # approve, deposit, approve shares, lock shares
        book.run(user, lock["calls"])
        hub = book.hub()
        locked = hub.collateral[(user.lower(), vault.address.lower())]
        # The shares locked are those previewed an hour ahead; the rest stays in the wallet.
        assert locked == int(lock["calls"][3]["data"][-64:], 16)
        in_wallet = book.balance(vault.address, user)
        assert in_wallet >= 0 and book.balance(usdc, user) == 0
        price = vault.share_price(book.now(), book.settings.asset_decimals)
        assert book.units(book.info(user)["totalCollateralValue"]) == collateral_value(
            locked, price
        )

        # A year on, the shares are worth 5 % more.
        book.advance(YEAR)
        later = vault.share_price(book.now(), book.settings.asset_decimals)
        assert later / price > Fraction(104, 100)
        assert book.units(book.info(user)["totalCollateralValue"]) == collateral_value(
            locked, later
        )

        unlock = book.ok(
            f"{v2}/unlock", amount=str(locked), collateral=vault.address, unwrap="true"
        )
        assert len(unlock["calls"]) == 2
        book.run(user, unlock["calls"])
        mined = book.w3.eth.get_block("latest")["timestamp"]
        paid = int(locked * vault.share_price(mined, book.settings.asset_decimals))
        assert book.balance(usdc, user) == paid > 1_040 * USDC
        assert book.info(user)["totalCollateralValue"] == "0.000000"


def test_wrap_and_unwrap_execute() -> None:
    with credit_book(small_book(0)) as book:
        user = account(71)
        usdc = book.settings.asset_address
        vault = book.settings.collateral_by_symbol("gtUSDCp")
        assert vault is not None
        book.deal(user, usdc, 500 * USDC)
        chain = {"chain": "eip155:8453"}
        wrap = book.ok(
            "/credit/earn/wrap", account=user, amount=str(500 * USDC), token=usdc, **chain
        )
        assert wrap["tokenOut"] == vault.address
        book.run(user, wrap["calls"])
        shares = book.balance(vault.address, user)
        assert 0 < shares <= int(wrap["amountOut"])
        unwrap = book.ok(
            "/credit/earn/unwrap",
            owner=user,
            receiver=user,
            amount=str(shares),
            asset=vault.address,
            slippage="0.5",
            **chain,
        )
        assert int(unwrap["minAmountOut"]) == int(int(unwrap["amountOut"]) * Fraction(995, 1000))
        book.run(user, unwrap["calls"])
        received = book.balance(usdc, user)
        assert int(unwrap["minAmountOut"]) <= received
        assert book.balance(vault.address, user) == 0
        mined = book.w3.eth.get_block("latest")["timestamp"]
        assert received == int(shares * vault.share_price(mined, book.settings.asset_decimals))
        assert 499 * USDC < received < 501 * USDC  # seconds of yield on top


def test_erc7540_redeem_request_then_claim_after_the_delay() -> None:
    with credit_book(small_book(0)) as book:
        user, receiver = account(72), account(73)
        usdc = book.settings.asset_address
        vault = book.settings.collateral_by_symbol("yoUSD")
        assert vault is not None and vault.vault is not None
        delay = vault.vault.redeem_delay_s
        assert delay == 86_400
        protocol = book.ok("/credit/protocol")["chains"]["eip155:8453"]
        assert protocol["strategies"]["yo-usdc"]["vaultType"] == "erc7540"
        book.deal(user, usdc, 300 * USDC)
        chain = {"chain": "eip155:8453"}
        wrap = book.ok(
            "/credit/earn/wrap",
            account=user,
            amount=str(300 * USDC),
            token=usdc,
            earn="yo-usdc",
            **chain,
        )
        book.run(user, wrap["calls"])
        shares = book.balance(vault.address, user)
        assert shares > 0
        unwrap = book.ok(
            "/credit/earn/unwrap",
            owner=user,
            receiver=receiver,
            amount=str(shares),
            asset=vault.address,
            **chain,
        )
        (request_call,) = unwrap["calls"]
        assert request_call["data"][:10] == FUNCTIONS["vault.requestRedeem"].selector
        (receipt,) = book.execute(user, unwrap["calls"])
        assert receipt["status"] == 1
        assert book.balance(vault.address, user) == 0
        (log,) = [
            events.decode_log([t.to_0x_hex() for t in lg["topics"]], bytes(lg["data"]))
            for lg in receipt["logs"]
            if lg["topics"][0].to_0x_hex() == events.EVENTS["vault.RedeemRequest"].topic0
        ]
        request_id = str(log.args["requestId"])
        requested_at = book.w3.eth.get_block(receipt["blockNumber"])["timestamp"]
        claim = {
            "owner": user,
            "receiver": receiver,
            "asset": vault.address,
            "claimRequestId": request_id,
            **chain,
        }
        status, body = book.get("/credit/earn/claim", **claim)
        assert status == 400 and body["error"].startswith(
            f"claimRequestId: request {request_id} is claimable from"
        )
        # The claim call itself reverts before the delay.
        early = {
            "chain": "8453",
            "to": vault.address,
            "data": encode_call("vault.redeem", shares, receiver, user),
            "value": "0",
        }
        (reverted,) = book.execute(user, [early])
        assert reverted["status"] == 0
        book.advance(requested_at + delay - book.now())
        calls = book.ok("/credit/earn/claim", **claim)["calls"]
        book.run(user, calls)
        assert book.balance(usdc, receiver) == int(
            shares * vault.share_price(requested_at, book.settings.asset_decimals)
        )
        status, body = book.get("/credit/earn/claim", **claim)
        assert (status, body["error"]) == (
            400,
            f"claimRequestId: request {request_id} is already claimed",
        )
        status, body = book.get("/credit/earn/claim", **{**claim, "claimRequestId": "99"})
        assert status == 404
        status, body = book.get("/credit/earn/claim", **{**claim, "claimRequestId": "１"})
        assert status == 400 and body["error"].startswith("claimRequestId: ")
