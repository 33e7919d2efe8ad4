"""A chain follower on anvil keeps exactly the canonical chain's logs through reorgs (3 and 12
blocks deep, a rollback, a reorg while it was down), a flush cut short, and says how final each
stored block is."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from web3 import Web3

from tests.follow.conftest import assert_canonical, catch_up
from toolkit.collect.chain_follow import DEFAULT_CONFIRMATIONS, ChainFollower
from toolkit.collect.rpc import RpcFailure
from toolkit.store import Store, StoreError
from toolkit.testing.transfers import TokenActivity


def _follower(
    w3: Web3, store: Store, *, chunk: int = 7, confirmations: int = DEFAULT_CONFIRMATIONS
) -> ChainFollower:
    follower = ChainFollower(
        w3,
        store,
        from_block=0,
        events=["transfers"],
        poll_s=0.1,
        chunk=chunk,
        confirmations=confirmations,
    )
    follower.start()
    return follower


@pytest.mark.parametrize("depth", [3, 12])
def test_a_reorg_leaves_exactly_the_canonical_logs(
    token: TokenActivity, w3: Web3, depth: int
) -> None:
    token.mine(5, blocks=30)
    store = Store(":memory:")
    follower = _follower(w3, store)
    catch_up(follower)
    assert_canonical(store, token)
    before = store.query("SELECT count(*) AS n FROM chain_logs")["n"][0]
    assert before == 1 + 5 * 30  # the token's mint in block 1, then 30 blocks of 5

    token.reorg(depth, transfers=3)  # same height, other transfers in the replaced blocks
    catch_up(follower)
    assert_canonical(store, token)
    after = store.query("SELECT count(*) AS n FROM chain_logs")["n"][0]
    assert after == 1 + 5 * (30 - depth) + 3 * depth
    reorg = store.table("chain_reorgs").row(0, named=True)
    assert (reorg["fork_block"], reorg["depth"]) == (31 - depth + 1, depth)
    assert follower.status.reorgs == 1

    token.mine(2, blocks=4)  # the new branch goes on
    catch_up(follower)
    assert_canonical(store, token)


def test_a_rollback_and_a_reorg_of_blocks_not_yet_read(token: TokenActivity, w3: Web3) -> None:
    token.mine(4, blocks=20)
    store = Store(":memory:")
    follower = _follower(w3, store)
    catch_up(follower)
    token.rollback(2)  # the head goes below the stored tip
    catch_up(follower)
    assert_canonical(store, token)
    assert follower.status.stored_block == token.head()
    token.mine(3, blocks=5)
    token.reorg(8, transfers=1)  # forks below the stored tip, above it too
    catch_up(follower)
    assert_canonical(store, token)
    assert store.table("chain_reorgs")["new_hash"].null_count() == 1  # the rollback's


def test_a_reorg_while_the_follower_was_down_is_found_on_resume(
    token: TokenActivity, w3: Web3, db: Path
) -> None:
    token.mine(3, blocks=15)
    with Store(db) as store:
        follower = _follower(w3, store)
        catch_up(follower)
        follower.stop("interrupted")
        run_id = follower.run_id
    token.reorg(5, transfers=2)
    with Store(db) as store:
        resumed = ChainFollower(w3, store, poll_s=0.1, resume=run_id)
        resumed.start()
        catch_up(resumed)
        assert_canonical(store, token)
        assert store.run_record(run_id)["status"] == "running"
        resumed.stop("interrupted")
        assert store.run_record(run_id)["status"] == "interrupted"


def test_a_flush_cut_short_resumes_with_nothing_duplicated_or_orphaned(
    token: TokenActivity, w3: Web3, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token.mine(6, blocks=25)
    store = Store(db)
    follower = _follower(w3, store)
    follower.poll(time.time())
    original = Store.append

    def crash_on_transfers(self: Store, table: str, frame: Any) -> int:
        if table == "token_transfers":  # after the headers and raw logs, before the range
            raise KeyboardInterrupt
        return original(self, table, frame)

    monkeypatch.setattr(Store, "append", crash_on_transfers)
    with pytest.raises(KeyboardInterrupt):
        follower.poll(time.time())
    monkeypatch.setattr(Store, "append", original)
    ranges = store.query("SELECT max(to_block) AS b FROM chain_ranges")["b"][0]
    raw = store.query("SELECT max(block_number) AS b FROM chain_logs")["b"][0]
    assert raw > ranges  # rows of a range not recorded as stored
    token.reorg(20, transfers=1)  # the partial range (blocks 7-13) is orphaned meanwhile
    resumed = ChainFollower(w3, store, poll_s=0.1, resume=follower.run_id)
    resumed.start()
    assert resumed.next_block == ranges + 1
    catch_up(resumed)
    assert_canonical(store, token)
    store.close()


def test_finality_from_the_tags_or_the_confirmation_depth(token: TokenActivity, w3: Web3) -> None:
    token.mine(1, blocks=80)  # anvil calls a block finalized 64 blocks below the head
    store = Store(":memory:")
    follower = _follower(w3, store, chunk=100)
    catch_up(follower)
    tagged = token.rpc("eth_getBlockByNumber", ["finalized", False])["number"]
    finality = store.query(
        "SELECT max(number) FILTER (finality = 'finalized') AS final, "
        "min(number) FILTER (finality = 'unsafe') AS unsafe FROM chain_blocks"
    ).row(0)
    assert finality[0] == int(tagged, 16)
    assert finality[1] > finality[0]

    untagged = Store(":memory:")
    plain = _follower(w3, untagged, confirmations=10, chunk=100)
    call = plain.chain_collector._call

    def no_tags(method: str, params: list[Any]) -> Any:
        if method == "eth_getBlockByNumber" and params[0] in ("finalized", "safe"):
            raise RpcFailure(method, -32602, "unknown block tag")
        return call(method, params)

    plain.chain_collector._call = no_tags  # type: ignore[method-assign]
    catch_up(plain)
    head = token.head()
    final = untagged.query(
        "SELECT max(number) AS n FROM chain_blocks WHERE finality = 'finalized'"
    )["n"][0]
    assert final == head - 10
    token.mine(0, blocks=5)
    catch_up(plain)
    promoted = untagged.query(
        "SELECT max(number) AS n FROM chain_blocks WHERE finality = 'finalized'"
    )["n"][0]
    assert promoted == head + 5 - 10


def test_a_new_run_starts_after_what_an_earlier_run_stored(token: TokenActivity, w3: Web3) -> None:
    token.mine(2, blocks=10)
    store = Store(":memory:")
    first = _follower(w3, store)
    catch_up(first)
    first.stop("interrupted")
    token.mine(2, blocks=3)
    second = ChainFollower(w3, store, events=["transfers"], poll_s=0.1)
    second.start()
    assert first.status.stored_block is not None
    assert second.next_block == first.status.stored_block + 1
    catch_up(second)
    assert_canonical(store, token)
    other_events = ChainFollower(w3, store, events=["approvals"], poll_s=0.1)
    other_events.start()
    assert other_events.next_block == token.head()  # nothing of its events stored: the head


def test_resuming_a_run_of_another_kind_is_refused(w3: Web3) -> None:
    store = Store(":memory:")
    run = store.start_run("rfq", {}, "https://h/")
    with pytest.raises(ValueError, match=f"resume: run {run} is a rfq run, not a chain run"):
        ChainFollower(w3, store, resume=run).start()
    with pytest.raises(StoreError, match="no run"):
        ChainFollower(w3, store, resume="nope").start()
