"""Pool snapshots against the embedded service's simulated chain: the same reader as on a real
node (batched ``eth_call``: the simulated chains have no Multicall3) rebuilds every V3 pool of
the market exactly as the world holds it."""

from __future__ import annotations

from toolkit.amm.snapshot import pool_from_snapshot
from toolkit.amm.v2 import Pair
from toolkit.client import EmbeddedService, chain_web3
from toolkit.clock import VirtualClock
from toolkit.collect.pool_state import PoolRef, StateReader, read_pool_states, word_range
from toolkit.scenario import load_scenario
from toolkit.world.evm.amm import V3PoolContract
from toolkit.world.evm.markets import market_for


def test_snapshots_of_the_simulated_pools_rebuild_them_exactly() -> None:
    # A virtual clock: the simulated chain keeps the latest state only, so on the wall clock a
    # block mined during the read (a slow machine) would refuse the reader's pinned block.
    service = EmbeddedService("default", env={}, clock=VirtualClock())
    w3 = chain_web3(1, embedded=service)
    try:
        market = market_for(load_scenario("default"), 1)
        assert market is not None
        refs = [PoolRef(p.address, p.kind, "", "", 0) for p in market.pools]
        reader = StateReader.detect(w3, w3.eth.block_number)
        assert reader.multicall is None
        rows, ticks = read_pool_states(reader, refs, depth_ticks=887272)
        assert reader.requests < 30  # the rounds in batches of 500 calls
        by_pool = {r["pool"]: r for r in rows}
        for spec in market.pools:
            rebuilt = pool_from_snapshot(by_pool[spec.address], ticks.get(spec.address, ()))
            if spec.kind == "v2":
                assert isinstance(rebuilt, Pair)
                continue
            assert not isinstance(rebuilt, Pair)
            world = V3PoolContract(spec).pool
            assert (rebuilt.sqrt_price_x96, rebuilt.tick, rebuilt.liquidity) == (
                world.sqrt_price_x96,
                world.tick,
                world.liquidity,
            )
            assert rebuilt.tick_bitmap == world.tick_bitmap
            assert {t: (i.liquidity_net, i.liquidity_gross) for t, i in rebuilt.ticks.items()} == {
                t: (i.liquidity_net, i.liquidity_gross) for t, i in world.ticks.items()
            }
    finally:
        w3.provider.close()  # type: ignore[attr-defined]
        service.close()


def test_word_range_covers_the_depth_either_side() -> None:
    low, high = word_range(-887272 + 5, 1, 100)
    assert low == -887272 >> 8 and high == (-887272 + 105) >> 8
    assert word_range(0, 200, 887272) == ((-887272 // 200) >> 8, (887272 // 200) >> 8)
