"""Fixtures of the follower tests: anvil with a token whose transfers fill each block (automine
off: each ``mine`` is one block), a store on disk, and the checks every test makes: what the
store holds is exactly the node's canonical chain."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from web3 import Web3

from toolkit.client import chain_web3
from toolkit.collect.chain_follow import ChainFollower
from toolkit.store import Store
from toolkit.testing.anvil import AnvilUnavailable, start_anvil
from toolkit.testing.artifacts import find_artifacts
from toolkit.testing.transfers import TokenActivity, deploy_token

CHAIN = 31337


@pytest.fixture
def token() -> Iterator[TokenActivity]:
    """A fresh anvil with the test token deployed (skips, naming why, without `make node`)."""
    if find_artifacts() is None:
        pytest.skip("npm packages not installed: run `make node`")
    try:
        node = start_anvil(chain_id=CHAIN)
    except AnvilUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield deploy_token(node)
    finally:
        node.stop()


@pytest.fixture
def w3(token: TokenActivity) -> Iterator[Web3]:
    web3 = chain_web3(CHAIN, url=token.node.url)
    yield web3
    web3.provider.close()  # type: ignore[attr-defined]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "toolkit.duckdb"


def catch_up(follower: ChainFollower, *, polls: int = 200) -> None:
    """Poll until the follower has the head (a poll returns not behind)."""
    for _ in range(polls):
        if not follower.poll(time.time()):
            return
    raise AssertionError(f"{follower.name} still behind after {polls} polls")


def node_logs(token: TokenActivity) -> set[tuple[object, ...]]:
    """The node's canonical Transfer logs, as the stored raw-log columns."""
    return {
        (int(log["blockNumber"], 16), int(log["logIndex"], 16), log["transactionHash"],
         log["blockHash"], log["topics"][1], log["topics"][2], log["data"])
        for log in token.logs(0, token.head())
    }  # fmt: skip


def assert_canonical(store: Store, token: TokenActivity) -> None:
    """The store holds exactly the node's canonical logs (none orphaned, none missing, none
    twice), each decoded once, and every stored header is the node's block."""
    stored = store.query(
        "SELECT block_number, log_index, tx_hash, block_hash, topic1, topic2, data "
        "FROM chain_logs ORDER BY ALL"
    ).rows()
    assert len(stored) == len(set(stored))
    expected = node_logs(token)
    orphaned, missing = sorted(set(stored) - expected), sorted(expected - set(stored))
    assert set(stored) == expected, f"orphaned: {orphaned[:3]}, missing: {missing[:3]}"
    decoded = store.query("SELECT block_number, log_index, tx_hash FROM token_transfers").rows()
    assert sorted(decoded) == sorted((b, i, t) for b, i, t, *_ in stored)
    blocks = store.query("SELECT number, hash, parent_hash FROM chain_blocks ORDER BY number")
    for number, hash_, parent in blocks.iter_rows():
        header = token.rpc("eth_getBlockByNumber", [hex(number), False])
        assert (header["hash"], header["parentHash"]) == (hash_, parent), number
