"""The seeded book is opened as a real chain's would be: each account's lock, draw and operator
is its own transaction (hash, nonce, receipt, logs) in ordinary blocks before the service's
start, several accounts a block, the same on every run."""

from __future__ import annotations

from collections import Counter
from typing import Any

from web3 import Web3

from tests.credit_surface.book import T0, credit_book, small_book
from toolkit.codecs.events import EVENTS
from toolkit.codecs.functions import decode_call
from toolkit.world.evm.genesis import SEEDED_SENDERS_PER_BLOCK


def _logs(w3: Web3, address: str, event: str) -> list[Any]:
    topic = EVENTS[event].topic0
    head = int(w3.eth.block_number)
    return list(
        w3.eth.get_logs(
            {
                "fromBlock": 0,
                "toBlock": head,
                "address": Web3.to_checksum_address(address),
                "topics": [topic],
            }
        )
    )


# How the book is opened does not depend on its size: 60 accounts (six blocks of
# SEEDED_SENDERS_PER_BLOCK senders, some drawing, some with an operator), not 1,200.
BOOK = small_book(60)


def test_each_lock_draw_and_operator_is_the_accounts_own_transaction() -> None:
    with credit_book(BOOK) as book:
        w3, s = book.w3, book.settings
        deposits = _logs(w3, s.escrow, "collateralEscrow.Deposited")
        draws = _logs(w3, s.hub, "creditHub.CreditDrawn")
        operators = _logs(w3, s.hub, "creditHub.OperatorSet")
        assert len(deposits) >= s.book_accounts and draws and operators
        expected = {
            "collateralEscrow.Deposited": "collateralEscrow.deposit",
            "creditHub.CreditDrawn": "creditHub.drawCredit",
            "creditHub.OperatorSet": "creditHub.setOperator",
        }
        for event, log in (
            ("collateralEscrow.Deposited", deposits[0]),
            ("collateralEscrow.Deposited", deposits[-1]),
            ("creditHub.CreditDrawn", draws[len(draws) // 2]),
            ("creditHub.OperatorSet", operators[-1]),
        ):
            receipt = w3.eth.get_transaction_receipt(log["transactionHash"])
            tx = w3.eth.get_transaction(log["transactionHash"])
            account = "0x" + log["topics"][1].hex()[-40:]
            assert receipt["status"] == 1 and receipt["gasUsed"] > 0
            assert receipt["from"].lower() == tx["from"].lower() == account
            assert receipt["to"].lower() == log["address"].lower()
            assert log in receipt["logs"]
            call = decode_call(bytes(tx["input"]))
            assert call.function == expected[event]
            block = w3.eth.get_block(log["blockNumber"])
            assert block["number"] > 0 and block["timestamp"] < T0  # before the service's start


def test_several_accounts_share_a_block_and_nonces_count_up() -> None:
    with credit_book(BOOK) as book:
        w3, s = book.w3, book.settings
        logs = _logs(w3, s.escrow, "collateralEscrow.Deposited")
        per_block: dict[int, set[str]] = {}
        for log in logs:
            per_block.setdefault(log["blockNumber"], set()).add(log["topics"][1].hex()[-40:])
        sizes = Counter(len(senders) for senders in per_block.values())
        assert max(sizes) == SEEDED_SENDERS_PER_BLOCK and min(sizes) >= 1
        first = logs[0]["topics"][1].hex()[-40:]
        mine = [log for log in logs if log["topics"][1].hex()[-40:] == first]
        nonces = [w3.eth.get_transaction(log["transactionHash"])["nonce"] for log in mine]
        assert nonces == list(range(len(nonces)))
        assert w3.eth.get_transaction_count(Web3.to_checksum_address("0x" + first)) >= len(mine)


def test_the_seeded_blocks_are_the_same_on_every_run() -> None:
    hashes = []
    for _ in range(2):
        with credit_book(BOOK) as book:
            logs = _logs(book.w3, book.settings.hub, "creditHub.CreditDrawn")
            hashes.append([(log["blockHash"], log["transactionHash"]) for log in logs])
    assert hashes[0] == hashes[1]
