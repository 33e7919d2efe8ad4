"""The credit book followed: one round a poll, each collateral read naming the hub chain's block
it was read at, and a read at a block the chain has since replaced read again."""

from __future__ import annotations

import time

import polars as pl

from tests.credit_surface.book import Book, account, credit_book, small_book
from toolkit.collect import CreditCollector
from toolkit.collect.followers import CreditFollower
from toolkit.store import Store

USDC = 10**6


def _locked(book: Book, user: str, amount: int) -> None:
    usdc = book.settings.asset_address
    book.deal(user, usdc, amount)
    path = f"/credit/v2/accounts/{user}/assets/usdc/lock"
    book.run(user, book.ok(path, amount=str(amount), earnAsset=usdc)["calls"])


def _follower(
    book: Book, store: Store, users: list[str], resume: str | None = None
) -> CreditFollower:
    collector = CreditCollector(book.svc.client, store, accounts=users, progress=False)
    follower = CreditFollower(collector, every_s=60, resume=resume)
    follower.start()
    return follower


def test_each_poll_is_a_round_and_collateral_names_its_block() -> None:
    with credit_book(small_book(0)) as book, Store(":memory:") as store:
        users = [account(320), account(321)]
        for i, user in enumerate(users):
            _locked(book, user, (i + 1) * 100 * USDC)
        follower = _follower(book, store, users)
        assert follower.poll(time.time()) is False
        book.advance(30)
        book.rpc("evm_mine")
        follower.poll(time.time())
        rounds = store.query("SELECT DISTINCT round FROM credit_protocol ORDER BY round")
        assert rounds["round"].to_list() == [0, 1]
        held = store.table("credit_collateral")
        assert held.filter(pl.col("round") == 1)["amount"].sort().to_list() == [
            100 * USDC,
            200 * USDC,
        ]
        for row in held.iter_rows(named=True):
            header = book.rpc("eth_getBlockByNumber", hex(row["block_number"]), False)
            assert (row["hub_chain"], row["block_hash"]) == (8453, header["hash"])
        follower.stop("interrupted")
        again = _follower(book, store, users, resume=follower.run_id)
        assert again.round_no == 1  # the last stored round, read again whole


def test_collateral_read_at_a_replaced_block_is_read_again() -> None:
    with credit_book(small_book(0)) as book, Store(":memory:") as store:
        user = account(322)
        _locked(book, user, 300 * USDC)
        follower = _follower(book, store, [user])
        follower.poll(time.time())
        read = store.table("credit_collateral")
        # As if the hub's chain had replaced the block the round was read at.
        orphaned = read.with_columns(block_hash=pl.lit("0x" + "00" * 32))
        store.delete_rows("credit_collateral", {"run_id": follower.run_id})
        store.append("credit_collateral", orphaned)
        _locked(book, user, 50 * USDC)  # the account moved meanwhile
        follower.poll(time.time())
        again = store.table("credit_collateral").filter(pl.col("round") == 0)
        assert again["amount"].to_list() == [350 * USDC]  # read again, at the new block
        header = book.rpc("eth_getBlockByNumber", hex(again["block_number"][0]), False)
        assert again["block_hash"].to_list() == [header["hash"]]
        assert follower.status.reorgs == 1
