"""Pools followed on anvil with Uniswap's bytecode: a snapshot at the head every poll, each naming
its block, and a snapshot read at a block a reorg replaced is read again at that height."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from toolkit.client import chain_web3
from toolkit.collect.followers import PoolFollower
from toolkit.store import Store
from toolkit.testing.anvil import Anvil
from toolkit.testing.uniswap import deploy_uniswap, spread_positions


def test_a_snapshot_at_a_replaced_block_is_read_again(node_starter: Callable[[int], Anvil]) -> None:
    node = node_starter(31337)
    w3 = chain_web3(31337, url=node.url)
    try:
        uniswap = deploy_uniswap(w3, multicall=False)
        a, b = uniswap.token(), uniswap.token()
        pool = uniswap.v3_pool(a, b, 3000, 2**96)
        uniswap.mint(pool, spread_positions(random.Random(3), 0, 60, 8))
        store = Store(":memory:")
        follower = PoolFollower(
            w3, store, chain=31337, tokens=[a.address, b.address], every_s=1.0,
            v3_factory=uniswap.v3_factory.address, v2_factory=uniswap.v2_factory.address,
            from_block=uniswap.deployed_at,
        )  # fmt: skip
        follower.start()
        follower.poll(time.time())
        before_swap = pool.functions.slot0().call()[0]
        uniswap.swap(pool, True, 10**18)  # one block: the price moves
        swapped_at = w3.eth.block_number
        follower.poll(time.time())
        read = store.query(
            "SELECT sqrt_price_x96, block_hash FROM amm_pool_snapshots WHERE block_number = $b",
            {"b": swapped_at},
        ).row(0)
        assert int(read[0]) != before_swap
        w3.provider.make_request("anvil_reorg", [1, []])  # type: ignore[arg-type]  # no swap
        follower.poll(time.time())
        again = store.query(
            "SELECT sqrt_price_x96, block_hash, snapshot_id FROM amm_pool_snapshots "
            "WHERE block_number = $b",
            {"b": swapped_at},
        ).rows()
        assert len(again) == 1  # replaced, not added
        assert int(again[0][0]) == before_swap
        assert again[0][1] == w3.eth.get_block(swapped_at)["hash"].to_0x_hex()
        assert again[0][1] != read[1]
        assert follower.status.reorgs == 1
        snapshots = store.query("SELECT count(DISTINCT snapshot_id) AS n FROM amm_pool_snapshots")
        assert snapshots["n"][0] == 2  # one per head the follower saw
        follower.stop("interrupted")
    finally:
        w3.provider.close()  # type: ignore[attr-defined]
        node.stop()
