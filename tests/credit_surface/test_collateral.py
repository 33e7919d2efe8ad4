"""Each account's collateral mix, read on chain: the hub's ``collateralOf`` view over
JSON-RPC ``eth_call``, the credit collector storing it in ``credit_collateral`` (exact,
idempotent on re-runs and resumes, a migration that applies to an existing database), and the
collected book as the health kernel's matrix: its health factors are the stored ones, and
per-asset shocks move only the accounts holding the asset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pytest
from web3 import Web3

from tests.credit_surface.book import Book, account, credit_book, small_book
from toolkit.codecs.functions import json_abi
from toolkit.collect import CreditCollector
from toolkit.models.health import (
    CreditBook,
    collected_book,
    estimate_volatility,
    monte_carlo,
    snapshot_stress,
    stress,
)
from toolkit.store import Store
from toolkit.store.migrations import MIGRATIONS, apply_migrations, schema_version
from toolkit.world.evm.credit import book_account

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
    with credit_book(small_book(0)) as book:
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
    with credit_book(small_book(0)) as book, Store(":memory:") as store:
        users = _mixed_book(book)
        result = CreditCollector(
            book.svc.client, store, accounts=users, rounds=2, interval_s=10, progress=False
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
    with credit_book(small_book(0)) as book, Store(tmp_path / "c.duckdb") as store:
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
    assert schema_version(con) == MIGRATIONS[-1].version
    con.close()


def test_bad_web3s_are_refused() -> None:
    with (
        credit_book(small_book(0)) as book,
        Store(":memory:") as store,
        pytest.raises(ValueError, match=r"web3s: must be an integer >= 1, got 'base'"),
    ):
        CreditCollector(book.svc.client, store, accounts=[account(1)], web3s={"base": book.w3})


def _prices(book: Book) -> dict[str, float]:
    """Each collateral symbol's price in USDC at the service's time (as the hub values it)."""
    s, now = book.settings, book.now()
    return {
        c.key: float(s.unit_price(c, now) * 10**c.decimals / 10**s.asset_decimals)
        for c in s.collateral
    }


# Tests of the collected book read its first 60 (or 40) seeded accounts: small_book(60) seeds
# those exactly as the 1,200-account book does (one draw after another from the same generator).


def _collected(book: Book, store: Store, accounts: list[str]) -> CreditBook:
    CreditCollector(book.svc.client, store, accounts=accounts, progress=False).run()
    return collected_book(
        store.query("SELECT * FROM credit_collateral"),
        store.query("SELECT * FROM credit_accounts"),
        _prices(book),
        store.query("SELECT * FROM credit_protocol"),
    )


def test_the_matrix_gives_the_stored_health_factors() -> None:
    with credit_book(small_book(60)) as book, Store(":memory:") as store:
        users = _mixed_book(book)
        seeded = [book_account(book.settings, i) for i in range(60)]
        collected = _collected(book, store, users + seeded)
        assert collected.assets == ("gtusdcp", "superusdc", "usdc", "yobtc", "yousd")
        assert collected.maintenance_ltv.tolist() == [0.8, 0.75, 0.925, 0.7, 0.8]
        hf = collected.health_factors()
        stored = collected.stored_health_factor
        indebted = collected.debt > 0
        assert indebted.sum() > 30 and np.isinf(hf[~indebted]).all()
        assert np.isinf(stored[~indebted]).all()
        # The ledger values each holding in whole smallest units of USDC, rounded down: one
        # unit per holding is all the matrix's values may exceed the stored totals by.
        held = (collected.collateral > 0).sum(axis=1)
        value = collected.collateral @ collected.prices
        totals = store.query(
            "SELECT account, total_collateral_value AS v FROM credit_accounts "
            "WHERE asset = 'USDC' ORDER BY account"
        )
        assert totals["account"].to_list() == list(collected.accounts)
        exact = totals["v"].cast(pl.Float64).to_numpy()
        assert (value >= exact - 1e-12 * exact).all()
        assert (value - exact <= held * 1e-6 + 1e-12 * exact).all()
        # /info publishes the health factor rounded down to 4 decimals: the matrix's is that
        # figure's own value, up to the same rounding of the holdings' values.
        owed = collected.debt[indebted]
        slack = held[indebted] * 1e-6 / owed + 1e-12 * hf[indebted]
        assert (hf[indebted] >= stored[indebted] - 1e-12).all()
        assert (hf[indebted] < stored[indebted] + 1e-4 + slack).all()
        # users[1] holds USDC on Base and on Ethereum: one column, both amounts.
        row = collected.accounts.index(users[1].lower())
        assert collected.collateral[row].tolist() == [0.0, 0.0, 950.0, 0.0, 0.0]


def test_per_asset_stress_of_the_collected_book() -> None:
    with credit_book(small_book(60)) as book, Store(":memory:") as store:
        users = _mixed_book(book)
        seeded = [book_account(book.settings, i) for i in range(60)]
        collected = _collected(book, store, users + seeded)
        grid = stress(collected, shocks=[-0.3, -0.6])
        assert grid.height == 2 * (len(collected.assets) + 1)
        btc = collected.assets.index("yobtc")
        base = collected.health_factors()
        shocked = collected.prices.copy()
        shocked[btc] *= 0.4
        after = collected.health_factors(shocked)
        # Shocking only BTC leaves every account without BTC where it was ...
        without = collected.collateral[:, btc] == 0
        assert np.array_equal(after[without], base[without])
        # ... and lowers the others' health factors.
        indebted = (collected.debt > 0) & ~without
        assert indebted.any() and (after[indebted] < base[indebted]).all()
        row = grid.filter(shocked="yobtc", shock=-0.6).row(0, named=True)
        assert row["liquidatable"] == int((after < 1).sum())
        assert row["debt_at_risk"] == pytest.approx(float(collected.debt[after < 1].sum()))
        everything = grid.filter(shocked="all", shock=-0.6).row(0, named=True)
        assert everything["liquidatable"] > row["liquidatable"]
        # All together, the matrix agrees with the totals-only stress of the stored snapshot.
        uniform = snapshot_stress(
            store.query("SELECT * FROM credit_accounts WHERE asset = 'USDC'"), shocks=[-0.6]
        )
        assert uniform["liquidatable"][0] == everything["liquidatable"]


def test_the_collected_book_runs_a_monte_carlo_on_a_price_tables_parameters() -> None:
    with credit_book(small_book(60)) as book, Store(":memory:") as store:
        collected = _collected(book, store, [book_account(book.settings, i) for i in range(40)])
        rng = np.random.default_rng(3)
        walk = np.exp(np.cumsum(rng.normal(0, 0.03, (60, len(collected.assets))), axis=0))
        table = pl.DataFrame(walk * collected.prices, schema=list(collected.assets))
        # the table's column order does not matter: the parameters follow the book's assets
        shuffled = table.select(list(reversed(table.columns)))
        market = estimate_volatility(shuffled, periods_per_year=365, assets=collected.assets)
        assert market.assets == collected.assets
        result = monte_carlo(collected, market, n_scenarios=2_000, progress=False)
        assert result.scenarios == 2_000
        assert 0 <= result.liquidation_probability <= 1
        with pytest.raises(ValueError, match="price_table: must be a frame with a column"):
            estimate_volatility(table.drop("yobtc"), periods_per_year=365, assets=collected.assets)


def test_collected_book_names_bad_input() -> None:
    accounts = pl.DataFrame({"account": ["a"], "asset": ["USDC"], "round": [0], "debt": [1.0]})
    held = pl.DataFrame(
        {"account": ["a"], "asset": ["USDC"], "symbol": ["usdc"], "amount": [10], "decimals": [6]}
    )
    with pytest.raises(ValueError, match="accounts: must be a frame with the columns"):
        collected_book(held, accounts, {"usdc": 1.0})
    accounts = accounts.with_columns(health_factor=pl.lit(None, pl.Float64))
    with pytest.raises(ValueError, match="prices: must be a price for every asset"):
        collected_book(held, accounts, {"yobtc": 1.0})
