"""``toolkit collect credit``: snapshots stored exactly (DECIMAL, never float), rounds on the
client's clock, idempotent resume, ``--all-known`` from the store and the seeded book."""

from __future__ import annotations

import itertools
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.credit_surface.book import account, credit_book, small_book
from toolkit.cli import main
from toolkit.collect import CreditCollector
from toolkit.store import Store
from toolkit.world.evm.credit import book_account, book_topup

USDC = 10**6


def test_snapshots_match_info_exactly_and_resume_adds_nothing() -> None:
    # One seeded account is read: a book of 60, not 1,200, holds it.
    with credit_book(small_book(60)) as book, Store(":memory:") as store:
        user = account(100)
        usdc = book.settings.asset_address
        book.deal(user, usdc, 1_000 * USDC)
        v2 = f"/credit/v2/accounts/{user}/assets/usdc"
        book.run(user, book.ok(f"{v2}/lock", amount=str(1_000 * USDC), earnAsset=usdc)["calls"])
        book.run(user, book.ok(f"{v2}/draw", amount=str(333 * USDC), receiver=user)["calls"])
        seeded = book_account(book.settings, 7)
        collector = CreditCollector(
            book.svc.client, store, accounts=[user, seeded], rounds=2, interval_s=30, progress=False
        )
        result = collector.run()
        assert result.status == "completed"
        rows = store.query(
            "SELECT round, debt, health_factor, due_date FROM credit_accounts "
            "WHERE account = $a AND asset = 'USDC' ORDER BY round",
            {"a": user.lower()},
        )
        info = book.info(user)
        assert rows["round"].to_list() == [0, 1]
        assert rows["debt"].to_list() == [Decimal(info["debt"])] * 2
        assert rows["health_factor"][1] == Decimal(info["healthFactor"])
        observed = store.query("SELECT DISTINCT observed_at FROM credit_protocol ORDER BY 1")
        gap = observed["observed_at"][1] - observed["observed_at"][0]
        assert gap.total_seconds() == 30
        protocol = store.query("SELECT * FROM credit_protocol WHERE round = 0 AND symbol = 'yobtc'")
        assert protocol.select("ltv_bps", "maintenance_ltv_bps", "liquidation_bonus_bps").row(
            0
        ) == (
            5500,
            7000,
            800,
        )


class _Interrupted(CreditCollector):
    """Stops (as Ctrl-C would) on its third account read."""

    reads = 0

    def _account(self, *args: Any) -> None:
        type(self).reads += 1
        if type(self).reads == 3:
            raise KeyboardInterrupt
        super()._account(*args)


def test_an_interrupted_run_resumes_without_duplicates() -> None:
    with credit_book(small_book(0)) as book, Store(":memory:") as store:  # no seeded account read
        accounts = [account(103), account(104)]
        cut = _Interrupted(book.svc.client, store, accounts=accounts, rounds=2, progress=False)
        first = cut.run()
        assert first.status == "interrupted"
        # Two accounts read, each with its USDC and EURE figures.
        assert store.query("SELECT count(*) AS n FROM credit_accounts")["n"][0] == 4
        again = CreditCollector(book.svc.client, store, progress=False).run(resume=first.run_id)
        assert again.status == "completed"
        counts = store.query(
            "SELECT round, count(*) AS n FROM credit_accounts GROUP BY round ORDER BY round"
        )
        assert counts.rows() == [(0, 4), (1, 4)]
        assert (
            again.total_rows
            == store.query(
                "SELECT (SELECT count(*) FROM credit_accounts) + (SELECT count(*) FROM "
                "credit_operators) + (SELECT count(*) FROM credit_protocol) AS n"
            )["n"][0]
        )


def test_all_known_takes_the_book_and_earlier_accounts() -> None:
    # Taking the whole book does not depend on its size: 60 seeded accounts, not 1,200.
    with credit_book(small_book(60)) as book, Store(":memory:") as store:
        stranger = account(101)
        CreditCollector(book.svc.client, store, accounts=[stranger], progress=False).run()
        collector = CreditCollector(book.svc.client, store, all_known=True, progress=False)
        result = collector.run()
        assert len(collector.accounts) == 61 and stranger.lower() in collector.accounts
        assert result.by_table["credit_accounts"] == 2 * 61  # USDC and EURE each
        configs = store.query("SELECT account, threshold, target_balance FROM credit_topup_configs")
        # seed_book's draw: 7 in 10 accounts borrow, 3 in 10 of those get an operator and a card
        # (about 13 of 60); this book's seeded draw gives 11, each with its book_topup settings.
        assert configs.height == 11
        for holder, threshold, target in configs.rows():
            assert (int(threshold), int(target)) == book_topup(book.settings, holder)


def test_bad_accounts_are_refused() -> None:
    with credit_book(small_book(0)) as book, Store(":memory:") as store:  # no seeded account read
        with pytest.raises(ValueError, match="accounts: 'me'"):
            CreditCollector(book.svc.client, store, accounts=["me"], progress=False)
        with pytest.raises(ValueError, match="accounts: give at least one"):
            CreditCollector(book.svc.client, store, progress=False).run()


def test_cli_collects_credit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "credit.duckdb"
    code = main(
        [
            "collect",
            "credit",
            "--embedded",
            "--accounts",
            account(102),
            "--db",
            str(db),
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "credit_accounts 2" in out  # USDC and EURE
    code = main(
        ["collect", "credit", "--embedded", "--accounts", "0x12", "--db", str(db), "--no-progress"]
    )
    assert code == 2
    assert "accounts: '0x12'" in capsys.readouterr().err


class _CutW3:
    """``w3`` whose ``eth_getLogs`` is interrupted (Ctrl-C) at its ``cut_at``-th call."""

    def __init__(self, w3: Any, cut_at: int) -> None:
        self.w3, self.cut_at, self.calls = w3, cut_at, 0
        self.eth = self
        self.to_checksum_address, self.provider = w3.to_checksum_address, w3.provider

    @property
    def block_number(self) -> int:
        return int(self.w3.eth.block_number)

    def get_logs(self, query: Any) -> Any:
        self.calls += 1
        if self.calls == self.cut_at:
            raise KeyboardInterrupt
        return self.w3.eth.get_logs(query)


def _ranges(store: Store, run_id: str) -> list[tuple[int, int]]:
    frame = store.query(
        "SELECT from_block, to_block FROM chain_ranges WHERE run_id = $run AND chain = 8453 "
        "ORDER BY from_block",
        {"run": run_id},
    )
    return [(int(a), int(b)) for a, b in frame.rows()]


def test_account_discovery_resumes_by_range_and_later_runs_scan_only_new_blocks() -> None:
    # Resuming by block range does not depend on the book's size: 60 seeded accounts, not 1,200
    # (each run snapshots every account; the scan itself is the same).
    with credit_book(small_book(60)) as book, Store(":memory:") as store:
        # The seeded book is opened in blocks before the start; one borrower later, 12 blocks.
        _borrow(book, account(106))
        book.rpc("anvil_mine", hex(12))
        head = int(book.w3.eth.block_number)
        chunk = 3
        cut = _CutW3(book.w3, cut_at=3)
        first = CreditCollector(
            book.svc.client, store, all_known=True, web3s={8453: cut}, chunk=chunk, progress=False
        ).run()
        assert first.status == "interrupted"
        done = _ranges(store, first.run_id)
        assert done == [(0, chunk - 1), (chunk, 2 * chunk - 1)]  # two chunks stored, then Ctrl-C
        assert store.query("SELECT count(*) AS n FROM credit_accounts")["n"][0] == 0

        resumed = CreditCollector(
            book.svc.client, store, web3s={8453: _CutW3(book.w3, 0)}, chunk=chunk, progress=False
        )
        again = resumed.run(resume=first.run_id)
        assert again.status == "completed"
        ranges = _ranges(store, first.run_id)
        # Contiguous from block 0 to the head, each block read once.
        assert ranges[0][0] == 0 and ranges[-1][1] == head
        assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(ranges))
        assert ranges[:2] == done
        logs = store.query(
            "SELECT count(*) AS n, count(DISTINCT (block_number, log_index)) AS d FROM chain_logs "
            "WHERE chain = 8453"
        ).row(0)
        assert logs[0] == logs[1] > 0
        assert book.settings.book_accounts == 60
        assert len(resumed.accounts) == 61 and account(106).lower() in resumed.accounts

        # A new borrower after the scan: the next run reads only the blocks since, and adds it.
        _borrow(book, account(105))
        later = CreditCollector(book.svc.client, store, all_known=True, progress=False)
        result = later.run()
        assert later.discover_from[8453] == head + 1
        assert _ranges(store, result.run_id)[0][0] == head + 1
        assert len(later.accounts) == 62 and account(105).lower() in later.accounts


def _borrow(book: Any, user: str) -> None:
    usdc = book.settings.asset_address
    book.deal(user, usdc, 1_000 * USDC)
    v2 = f"/credit/v2/accounts/{user}/assets/usdc"
    book.run(user, book.ok(f"{v2}/lock", amount=str(1_000 * USDC), earnAsset=usdc)["calls"])
    book.run(user, book.ok(f"{v2}/draw", amount=str(10 * USDC), receiver=user)["calls"])
