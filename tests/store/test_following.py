"""What followers write besides rows: a reorg's deletion in one transaction, finality promoted
only forwards, and each follower's status replaced by name."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from toolkit.store import Store, StoreError, polars_schema
from toolkit.store.following import ORPHAN_DELETES

NOW = datetime(2024, 5, 1, 12, tzinfo=UTC)


def _blocks(chain: int, numbers: range, run_id: str = "r1") -> pl.DataFrame:
    rows = [
        {"chain": chain, "number": n, "hash": f"0x{n:064x}", "parent_hash": f"0x{n - 1:064x}",
         "timestamp": 1_700_000_000 + n, "run_id": run_id}
        for n in numbers
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=polars_schema("chain_blocks"))


def _logs(chain: int, numbers: range, per_block: int = 2) -> pl.DataFrame:
    rows = [
        {"chain": chain, "block_number": n, "log_index": i, "tx_hash": f"0x{n:02x}{i:02x}",
         "block_hash": f"0x{n:064x}", "address": "0x" + "aa" * 20, "data": "0x", "run_id": "r1"}
        for n in numbers
        for i in range(per_block)
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=polars_schema("chain_logs"))


def _snapshot(chain: int, block: int, snapshot_id: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    snap = pl.DataFrame(
        [{"snapshot_id": snapshot_id, "chain": chain, "pool": "0xp", "observed_at": NOW,
          "block_number": block, "block_hash": f"0x{block:064x}"}],
        schema=polars_schema("amm_pool_snapshots"),
    )  # fmt: skip
    ticks = pl.DataFrame(
        [{"snapshot_id": snapshot_id, "chain": chain, "pool": "0xp", "tick": 60,
          "liquidity_net": 5, "liquidity_gross": 5}],
        schema=polars_schema("amm_pool_ticks"),
    )  # fmt: skip
    return snap, ticks


@pytest.fixture
def chain_store(store: Store) -> Store:
    store.append("chain_blocks", _blocks(1, range(1, 21)))
    store.append("chain_blocks", _blocks(2, range(1, 21)))  # another chain: untouched
    store.append("chain_logs", _logs(1, range(1, 21)))
    store.append("chain_logs", _logs(2, range(1, 21)))
    ranges = [
        {"run_id": "r1", "chain": 1, "from_block": 1, "to_block": 10, "logs": 20},
        {"run_id": "r1", "chain": 1, "from_block": 11, "to_block": 20, "logs": 20},
        {"run_id": "r2", "chain": 1, "from_block": 18, "to_block": 20, "logs": 6},
    ]
    store.append("chain_ranges", pl.DataFrame(ranges, schema=polars_schema("chain_ranges")))
    for block, sid in ((12, "s-old"), (17, "s-new")):
        snap, ticks = _snapshot(1, block, sid)
        store.append("amm_pool_snapshots", snap)
        store.append("amm_pool_ticks", ticks)
    return store


def test_a_reorg_deletes_every_row_of_the_orphaned_blocks_and_trims_ranges(
    chain_store: Store,
) -> None:
    deleted = chain_store.drop_orphaned(1, 15, old_hash="0xold", new_hash="0xnew", run_id="f1")
    assert deleted == {
        "chain_logs": 12,
        "chain_blocks": 6,
        "amm_pool_ticks": 1,
        "amm_pool_snapshots": 1,
        "chain_ranges": 1,
    }
    q = chain_store.query
    assert q("SELECT max(block_number) AS b FROM chain_logs WHERE chain = 1")["b"][0] == 14
    assert q("SELECT max(number) AS b FROM chain_blocks WHERE chain = 1")["b"][0] == 14
    assert q("SELECT count(*) AS n FROM chain_logs WHERE chain = 2")["n"][0] == 40
    ranges = q("SELECT run_id, from_block, to_block FROM chain_ranges ORDER BY from_block").rows()
    assert ranges == [("r1", 1, 10), ("r1", 11, 14)]
    assert chain_store.table("amm_pool_snapshots")["snapshot_id"].to_list() == ["s-old"]
    assert chain_store.table("amm_pool_ticks")["snapshot_id"].to_list() == ["s-old"]
    reorg = chain_store.table("chain_reorgs").row(0, named=True)
    assert (reorg["fork_block"], reorg["depth"], reorg["rows_deleted"]) == (15, 6, 21)
    assert (reorg["old_hash"], reorg["new_hash"], reorg["run_id"]) == ("0xold", "0xnew", "f1")


def test_the_deletion_covers_every_table_placed_in_a_block() -> None:
    from toolkit.store.schema import TABLES

    placed = {n for n, s in TABLES.items() if {"chain", "block_number"} <= set(s.by_name)}
    assert placed | {"chain_blocks", "amm_pools", "amm_pool_ticks", "credit_collateral",
                     "chain_ranges"} == set(ORPHAN_DELETES)  # fmt: skip


def test_a_failed_reorg_deletes_nothing(chain_store: Store) -> None:
    with pytest.raises(StoreError, match="reorg not applied, nothing deleted"):
        chain_store.drop_orphaned(1, 15, old_hash=None, new_hash=None, run_id="f1")  # type: ignore[arg-type]
    assert chain_store.query("SELECT count(*) AS n FROM chain_logs")["n"][0] == 80
    assert chain_store.table("chain_reorgs").height == 0


def test_finality_only_moves_forward(chain_store: Store) -> None:
    assert chain_store.mark_finality(1, finalized=5, safe=10) == 10
    assert chain_store.mark_finality(1, finalized=3, safe=4) == 0  # never back
    assert chain_store.mark_finality(1, finalized=8, safe=12) == 5  # 6-8 final, 11-12 safe
    frame = chain_store.query(
        "SELECT finality, count(*) AS n FROM chain_blocks WHERE chain = 1 "
        "GROUP BY finality ORDER BY finality"
    )
    assert frame.rows() == [("finalized", 8), ("safe", 4), (None, 8)]
    assert (
        chain_store.query(
            "SELECT count(*) AS n FROM chain_blocks WHERE chain = 2 AND finality IS NOT NULL"
        )["n"][0]
        == 0
    )


def _status(**changes: object) -> dict[str, object]:
    row: dict[str, object] = {"name": "chain:1", "kind": "chain", "target_url": "http://n:8545",
        "state": "running", "every_s": 2.0, "started_at": NOW, "updated_at": NOW, "polls": 1,
        "rows_written": 10, "errors": 0, "reorgs": 0}  # fmt: skip
    return row | changes


def test_a_status_is_replaced_by_name(store: Store) -> None:
    store.record_status(_status())
    store.record_status(_status(polls=2, head_block=100, lag_s=1.5))
    store.record_status(_status(name="pools:1", kind="pools"))
    frame = store.statuses()
    assert frame["name"].to_list() == ["chain:1", "pools:1"]
    assert frame.row(0, named=True)["polls"] == 2
    assert frame.row(0, named=True)["head_block"] == 100


def test_a_bad_status_names_the_column_and_changes_nothing(store: Store) -> None:
    store.record_status(_status())
    with pytest.raises(StoreError, match="state"):
        store.record_status(_status(state="sleeping", polls=9))
    assert store.statuses()["polls"].to_list() == [1]
