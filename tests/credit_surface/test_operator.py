"""Auto top-up and the operator contract: enable/update/disable/config per the spec's rules, the
calls executed on chain, operator draws only to whitelisted receivers, and the revoke delay."""

from __future__ import annotations

from typing import Any

from web3 import Web3

from tests.credit_surface.book import Book, account, credit_book, small_book
from toolkit.codecs.function_table import FUNCTIONS
from toolkit.codecs.functions import encode_call

USDC = 10**6
ZERO = "0x" + "00" * 20


def _funded(book: Book, user: str, locked: int = 1_000 * USDC) -> None:
    usdc = book.settings.asset_address
    book.deal(user, usdc, locked)
    v2 = f"/credit/v2/accounts/{user}/assets/usdc"
    book.run(user, book.ok(f"{v2}/lock", amount=str(locked), earnAsset=usdc)["calls"])


def _open_line(book: Book, borrower: str, receiver: str, amount: int) -> dict[str, Any]:
    return {
        "chain": "8453",
        "to": book.settings.operator,
        "data": encode_call("operator.openCreditLine", borrower, receiver, amount),
        "value": "0",
    }


def _call(book: Book, contract: str, function: str, *args: Any) -> dict[str, Any]:
    return {"chain": "8453", "to": contract, "data": encode_call(function, *args), "value": "0"}


def test_enable_then_operator_draws_to_the_whitelisted_receiver_only() -> None:
    with credit_book(small_book(0)) as book:
        user, card, other = account(10), account(11), account(12)
        _funded(book, user)
        # The card holds its top-up target, so the service's auto top-up stays out of this.
        book.deal(card, book.settings.asset_address, 100 * USDC)
        v2 = f"/credit/v2/accounts/{user}/assets/usdc/operator"
        params = {"receiver": card, "threshold": str(50 * USDC), "targetBalance": str(100 * USDC)}
        enable = book.ok(f"{v2}/auto-topup/enable", **params)
        selectors = [c["data"][:10] for c in enable["calls"]]
        assert selectors == ["0xb3ab15fb", "0x0b0dd11c"]  # setOperator, addCreditReceiver
        book.run(user, enable["calls"])
        status = book.ok(v2)["data"]
        assert status == {
            "operator": Web3.to_checksum_address(book.settings.operator),
            "receivers": [Web3.to_checksum_address(card)],
        }
        assert book.ok(f"{v2}/auto-topup/enable", **params) == {"calls": []}
        config = book.ok(f"{v2}/auto-topup/config", receiver=card)
        assert config == {
            "config": {
                "threshold": "50000000",
                "targetBalance": "100000000",
                "healthFactor": "10000",
            }
        }
        update = {**params, "threshold": str(20 * USDC), "healthFactor": "13000"}
        assert book.ok(f"{v2}/auto-topup/update", **update) == {"calls": []}
        assert (
            book.ok(f"{v2}/auto-topup/config", receiver=card)["config"]["healthFactor"] == "13000"
        )

        caller = book.settings.operator_caller
        book.run(caller, [_open_line(book, user, card, 100 * USDC)])
        assert book.balance(book.settings.asset_address, card) == 100 * USDC + 99_500_000
        assert book.info(user)["principal"] == "100.000000"

        # Not whitelisted, not the caller: both revert and change nothing.
        (receipt,) = book.execute(caller, [_open_line(book, user, other, 100 * USDC)])
        assert receipt["status"] == 0
        (receipt,) = book.execute(user, [_open_line(book, user, card, 100 * USDC)])
        assert receipt["status"] == 0
        assert book.balance(book.settings.asset_address, other) == 0
        assert book.info(user)["principal"] == "100.000000"

        disable = book.ok(f"{v2}/auto-topup/disable", receiver=card)
        remove = FUNCTIONS["creditHub.removeCreditReceiver"].selector
        assert [c["data"][:10] for c in disable["calls"]] == [remove]
        book.run(user, disable["calls"])
        assert book.ok(v2)["data"]["receivers"] == []
        assert book.ok(f"{v2}/auto-topup/disable", receiver=card) == {"calls": []}
        assert book.get(f"{v2}/auto-topup/config", receiver=card)[0] == 404
        (receipt,) = book.execute(caller, [_open_line(book, user, card, USDC)])
        assert receipt["status"] == 0


def test_enable_rules_409_and_400() -> None:
    with credit_book(small_book(0)) as book:
        user, card, stranger = account(20), account(21), account(22)
        v2 = f"/credit/v2/accounts/{user}/assets/usdc/operator/auto-topup/enable"
        status, body = book.get(v2, receiver=card, threshold="10", targetBalance="5")
        assert status == 400 and body["error"] == "targetBalance: must be at least threshold"
        book.run(user, [_call(book, book.settings.hub, "creditHub.setOperator", stranger)])
        status, body = book.get(v2, receiver=card, threshold="5", targetBalance="10")
        assert (status, body) == (409, {"error": "Account has a different operator"})
        v1 = f"/credit/accounts/{user}/operator/auto-topup/enable"
        assert book.get(v1, receiver=card)[0] == 409
        assert book.ok(f"/credit/accounts/{user}/operator")["data"]["operator"] == (
            Web3.to_checksum_address(stranger)
        )


def test_revoke_cannot_finalize_one_second_early() -> None:
    with credit_book(small_book(0)) as book:
        user, card = account(30), account(31)
        _funded(book, user)
        v1 = f"/credit/accounts/{user}/operator"
        book.run(user, book.ok(f"{v1}/auto-topup/enable", receiver=card)["calls"])
        operator = book.settings.operator
        book.run(user, [_call(book, operator, "operator.revoke")])
        scheduled = book.w3.eth.get_block("latest")["timestamp"]
        until = scheduled + book.settings.revoke_delay_s
        caller = book.settings.operator_caller
        # In the block at accessUntil the operator may still draw, and finalizing (which needs
        # strictly after it) reverts; both go into that one block.
        book.rpc("evm_setNextBlockTimestamp", until - 1)  # the next block's slot is `until`
        line = book.send(caller, _open_line(book, user, card, USDC))
        early = book.send(user, _call(book, operator, "operator.finalizeRevoke"))
        book.rpc("evm_mine")
        line, early = (book.w3.eth.get_transaction_receipt(h) for h in (line, early))
        assert book.w3.eth.get_block(early["blockNumber"])["timestamp"] == until
        assert (line["status"], early["status"]) == (1, 0)
        assert book.ok(v1)["data"]["operator"] == Web3.to_checksum_address(operator)
        book.run(user, [_call(book, operator, "operator.finalizeRevoke")])
        assert book.ok(v1)["data"] == {"operator": ZERO, "receivers": []}
        (late,) = book.execute(caller, [_open_line(book, user, card, USDC)])
        assert late["status"] == 0
