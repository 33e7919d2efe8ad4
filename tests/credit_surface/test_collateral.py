"""Each account's collateral mix, read on chain: the hub's ``collateralOf`` view over
JSON-RPC ``eth_call``, and the credit collector storing it in ``credit_collateral`` (exact,
idempotent on re-runs and resumes, a migration that applies to an existing database)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
from web3 import Web3

from tests.credit_surface.book import Book, account, credit_book
from toolkit.codecs.functions import json_abi
from toolkit.collect import CreditCollector
from toolkit.store import Store
from toolkit.store.migrations import MIGRATIONS, apply_migrations, schema_version

USDC = 10**6
ETHEREUM = 1
HUB_ABI = json_abi("creditHub")


def _collateral_of(book: Book, hub: str, borrower: str, token: str) -> int:
    contract = book.w3.eth.contract(address=Web3.to_checksum_address(hub), abi=HUB_ABI)
    value: int = contract.functions.collateralOf(
        Web3.to_checksum_address(borrower), Web3.to_checksum_address(token)
    ).call()
    return value


def _lock(book: Book, user: str, token: str, amount: int, chain: int = 8453, **earn: str) -> None:
    book.deal(user, token, amount, chain=chain)
    path = f"/credit/v2/accounts/{user}/assets/usdc/lock"
    book.run(user, book.ok(path, amount=str(amount), earnAsset=token, **earn)["calls"])


def _mixed_book(book: Book) -> list[str]:
    """Three accounts with different mixes (Base USDC, the BTC vault's underlying wrapped,
    Ethereum USDC), two of them with a draw; Ethereum's confirmations passed."""
    s = book.settings
    usdc = s.asset_address
    (eth_usdc,) = (c.address for c in s.remote)
    yobtc = s.collateral_by_symbol("yobtc")
    assert yobtc is not None and yobtc.vault is not None and yobtc.vault.underlying is not None
    cbbtc = yobtc.vault.underlying[1]
    users = [account(300), account(301), account(302)]
    _lock(book, users[0], usdc, 1_000 * USDC)
    _lock(book, users[0], cbbtc, 10**6, earn="yo-btc")  # 0.01 BTC, wrapped into the vault
    _lock(book, users[1], usdc, 250 * USDC)
    _lock(book, users[1], eth_usdc, 700 * USDC, chain=ETHEREUM)
    _lock(book, users[2], cbbtc, 3 * 10**6, earn="yo-btc")
    book.advance(120)  # past Ethereum's confirmations
    book.rpc("evm_mine")
    v2 = "/credit/v2/accounts/{}/assets/usdc/draw"
    for user, amount in ((users[0], 400 * USDC), (users[1], 500 * USDC)):
        book.run(user, book.ok(v2.format(user), amount=str(amount), receiver=user)["calls"])
    return users


def test_collateral_of_reads_the_booked_amount_through_eth_call() -> None:
    with credit_book() as book:
        s = book.settings
        user = account(310)
        usdc = s.asset_address
        assert _collateral_of(book, s.hub, user, usdc) == 0
        _lock(book, user, usdc, 1_234 * USDC)
        assert _collateral_of(book, s.hub, user, usdc) == 1_234 * USDC
        booked = book.hub().collateral[(user, usdc.lower())]
        assert _collateral_of(book, s.hub, user, usdc) == booked
        yousd = s.collateral_by_symbol("yousd")
        assert yousd is not None
        assert _collateral_of(book, s.hub, user, yousd.address) == 0
        (eure,) = s.others
        assert _collateral_of(book, eure.hub, user, usdc) == 0  # the other hub's ledger
        # A view: nothing is mined, and the gas estimate is a read's.
        before = book.w3.eth.block_number
        _collateral_of(book, s.hub, user, usdc)
        assert book.w3.eth.block_number == before


def _stored(store: Store) -> list[tuple[Any, ...]]:
    return store.query(
        "SELECT round, account, asset, chain_id, token, symbol, amount, decimals "
        "FROM credit_collateral ORDER BY round, account, chain_id, token"
    ).rows()


def test_collector_stores_each_accounts_mix_exactly() -> None:
    with credit_book() as book, Store(":memory:") as store:
        users = _mixed_book(book)
        result = CreditCollector(
            book.svc.client, store, accounts=users, rounds=2, interval=10, progress=False
        ).run()
        assert result.status == "completed"
        rows = _stored(store)
        hub = book.hub()
        for round_ in (0, 1):
            for user in users:
                mine = {
                    (r[4], r[3]): (r[6], r[7], r[5], r[2])
                    for r in rows
                    if r[0] == round_ and r[1] == user.lower()
                }
                held = hub.holdings(user.lower())
                assert {t for t, _ in mine} == set(held)
                for (token, chain), (amount, decimals, symbol, asset) in mine.items():
                    c = book.settings.collateral_at(token)
                    assert c is not None
                    expected = (held[token], c.decimals, c.key, "USDC")
                    assert (amount, decimals, symbol, asset) == expected
                    assert chain == book.settings.chain_of(c)
        chains = {r[3] for r in rows if r[1] == users[1].lower()}
        assert chains == {8453, ETHEREUM}
        assert result.by_table["credit_collateral"] == len(rows) == 2 * 5


def test_rerun_and_resume_add_no_collateral_rows(tmp_path: Path) -> None:
    with credit_book() as book, Store(tmp_path / "c.duckdb") as store:
        users = _mixed_book(book)

        class Interrupted(CreditCollector):
            reads = 0

            def _account(self, *args: Any) -> None:
                type(self).reads += 1
                if type(self).reads == 5:  # round 1, second account
                    raise KeyboardInterrupt
                super()._account(*args)

        cut = Interrupted(book.svc.client, store, accounts=users, rounds=2, progress=False)
        first = cut.run()
        assert first.status == "interrupted"
        partial = _stored(store)
        assert {r[0] for r in partial} == {0, 1}
        again = CreditCollector(book.svc.client, store, progress=False).run(resume=first.run_id)
        assert again.status == "completed"
        rows = _stored(store)
        assert len(rows) == len(set(rows)) == 2 * 5
        assert set(partial) <= set(rows)
        # The same rows written again (a re-run of the writes) change nothing.
        frame = store.query("SELECT * FROM credit_collateral")
        assert store.append("credit_collateral", frame) == 0
        assert _stored(store) == rows


def test_migration_adds_the_table_to_an_existing_database(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    apply_migrations(con, MIGRATIONS[:5])
    con.execute(
        "INSERT INTO credit_accounts (run_id, round, observed_at, account, asset) "
        "VALUES ('r', 0, now(), '0xab', 'USDC')"
    )
    con.close()
    with Store(path) as store:
        assert store.query("SELECT count(*) AS n FROM credit_accounts")["n"][0] == 1
        assert store.query("SELECT count(*) AS n FROM credit_collateral")["n"][0] == 0
    con = duckdb.connect(str(path))
    assert schema_version(con) == 6
    con.close()


def test_bad_web3s_are_refused() -> None:
    with (
        credit_book() as book,
        Store(":memory:") as store,
        pytest.raises(ValueError, match=r"web3s: must be an integer >= 1, got 'base'"),
    ):
        CreditCollector(book.svc.client, store, accounts=[account(1)], web3s={"base": book.w3})
