"""Pool discovery and snapshots against Uniswap's bytecode on anvil: ``PoolCollector`` finds
exactly the deployed pools, and a snapshot holds exactly what the contracts store."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from eth_abi import encode
from eth_utils import keccak
from web3 import Web3
from web3.types import RPCEndpoint

from tests.amm.onchain.conftest import Market
from toolkit.collect.pool_state import PoolRef, StateReader, read_pool_states
from toolkit.collect.pools import PoolCollector
from toolkit.store import Store


def _collector(market: Market, store: Store, **options: object) -> PoolCollector:
    u = market.uniswap
    return PoolCollector(
        market.w3,
        store,
        tokens=[t.address for t in market.tokens],
        v3_factory=u.v3_factory.address,
        v2_factory=u.v2_factory.address,
        to_block=market.block,
        progress=False,
        **options,  # type: ignore[arg-type]
    )


def test_discovery_finds_exactly_the_deployed_pools(market: Market) -> None:
    store = Store(":memory:")
    result = _collector(market, store, chunk=7).run()
    assert result.status == "completed"
    found = store.query("SELECT pool, kind, fee, tick_spacing, token0, token1 FROM amm_pools")
    expected = {p.address: ("v3", p.functions.fee().call()) for p in market.v3_pools}
    expected |= {p.address: ("v2", 3000) for p in market.v2_pairs}
    assert {r["pool"]: (r["kind"], r["fee"]) for r in found.iter_rows(named=True)} == expected
    for row in found.iter_rows(named=True):
        if row["kind"] == "v3":
            pool = next(p for p in market.v3_pools if p.address == row["pool"])
            assert row["tick_spacing"] == pool.functions.tickSpacing().call()
            assert row["token0"] == pool.functions.token0().call()
    # 7-block chunks: the ranges tile the scan exactly once
    ranges = store.query("SELECT from_block, to_block FROM chain_ranges ORDER BY from_block")
    assert ranges["from_block"][0] == 0 and ranges["to_block"][-1] == market.block
    assert (ranges["from_block"][1:] == ranges["to_block"][:-1] + 1).all()


def test_discovery_among_two_tokens_leaves_the_others_out(market: Market) -> None:
    store = Store(":memory:")
    a, b, _ = market.tokens
    collector = _collector(market, store, snapshot=False)
    collector.tokens = [a.address, b.address]
    collector.run()
    pools = set(store.query("SELECT pool FROM amm_pools")["pool"])
    assert pools == {p.address for p in market.v3_pools[:3]} | {market.v2_pairs[0].address}


def test_an_interrupted_discovery_resumes_to_the_same_pools(market: Market) -> None:
    store = Store(":memory:")
    first = _collector(market, store, chunk=5)
    calls = 0
    original = first._logs

    def stop_midway(first: int, last: int) -> list[Mapping[str, Any]]:  # _logs' signature
        nonlocal calls
        calls += 1
        if calls == 4:
            raise KeyboardInterrupt
        return original(first, last)

    first._logs = stop_midway  # type: ignore[method-assign]
    interrupted = first.run()
    assert interrupted.status == "interrupted"
    again = _collector(market, store, chunk=5)
    assert again.run(resume=interrupted.run_id).status == "completed"
    pools = store.query("SELECT pool, count(*) AS n FROM amm_pools GROUP BY pool")
    assert pools.height == 6 and (pools["n"] == 1).all()
    assert store.query("SELECT count(*) AS n FROM amm_pool_snapshots")["n"][0] == 6


def _slot(key: int, mapping_slot: int) -> int:
    """The storage slot of ``mapping[key]`` for a signed key (Solidity's layout)."""
    return int.from_bytes(keccak(encode(["int256", "uint256"], [key, mapping_slot])), "big")


def _storage(w3: Web3, address: str, slots: list[int]) -> list[int]:
    batch = [(RPCEndpoint("eth_getStorageAt"), [address, hex(slot), "latest"]) for slot in slots]
    return [int(a["result"], 16) for a in w3.provider.make_batch_request(batch)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("multicall", [True, False])
def test_a_snapshot_holds_what_the_contracts_store(
    market: Market, rpc: Web3, multicall: bool
) -> None:
    w3 = rpc
    reader = StateReader.detect(w3, market.block)
    assert reader.multicall is not None  # the node has Multicall3 at its canonical address
    if not multicall:
        reader.multicall = None
    refs = [PoolRef(p.address, "v3", "", "", 0) for p in market.v3_pools]
    refs += [PoolRef(p.address, "v2", "", "", 3000) for p in market.v2_pairs]
    rows, ticks = read_pool_states(reader, refs, depth_ticks=887272)
    # four rounds (reserves, pool state, bitmap words, ticks): with Multicall3 a few eth_calls
    # of up to 500 reads each (here over 1,000 bitmap words and 600 ticks)
    assert reader.calls <= 10 if multicall else reader.calls > 1000
    by_pool = {r["pool"]: r for r in rows}
    for pool in market.v3_pools:
        row = by_pool[pool.address]
        slot0 = pool.functions.slot0().call(block_identifier=market.block)
        assert (int(row["sqrt_price_x96"]), row["tick"]) == (slot0[0], slot0[1])
        assert int(row["liquidity"]) == pool.functions.liquidity().call()
        assert int(row["fee_growth_global0_x128"]) == pool.functions.feeGrowthGlobal0X128().call()
        spacing = pool.functions.tickSpacing().call()
        # every initialised tick, read from the pool's storage itself (tickBitmap is slot 6,
        # ticks slot 5 of UniswapV3Pool's layout) over the words the positions can reach
        centre = slot0[1] // spacing >> 8
        words = list(range(centre - 4, centre + 5))
        bitmaps = _storage(w3, pool.address, [_slot(w, 6) for w in words])
        set_ticks = [
            ((word << 8) + bit) * spacing
            for word, bits in zip(words, bitmaps, strict=True)
            for bit in range(256)
            if bits >> bit & 1
        ]
        stored = {}
        for tick in set_ticks:
            base = _slot(tick, 5)
            packed, outside0, outside1 = _storage(w3, pool.address, [base, base + 1, base + 2])
            net = packed >> 128
            stored[tick] = (net - (1 << 128) if net >> 127 else net, packed & (2**128 - 1),
                            outside0, outside1)  # fmt: skip
        assert {t[0]: tuple(t[1:]) for t in ticks[pool.address]} == stored
        assert row["tick_count"] == len(stored)
    assert len(ticks[market.v3_pools[0].address]) > 150  # spread over many ticks
    for pair in market.v2_pairs:
        reserves = pair.functions.getReserves().call()
        assert (by_pool[pair.address]["reserve0"], by_pool[pair.address]["reserve1"]) == tuple(
            reserves[:2]
        )


def test_the_collector_stores_the_snapshot_with_its_depth(market: Market) -> None:
    store = Store(":memory:")
    result = _collector(market, store, depth_ticks=600).run()
    snaps = store.query("SELECT * FROM amm_pool_snapshots WHERE kind = 'v3' ORDER BY fee")
    assert snaps.height == 4 and set(snaps["snapshot_id"]) == {result.run_id}
    assert (snaps["block_number"] == market.block).all() and (snaps["depth_ticks"] == 600).all()
    for row in snaps.iter_rows(named=True):
        assert row["min_tick"] <= row["tick"] - 600 and row["max_tick"] >= row["tick"] + 600
    ticks = store.query("SELECT s.pool, t.tick, s.min_tick, s.max_tick FROM amm_pool_ticks t "
                        "JOIN amm_pool_snapshots s USING (snapshot_id, chain, pool)")  # fmt: skip
    assert ticks.height > 0
    assert ((ticks["tick"] >= ticks["min_tick"]) & (ticks["tick"] <= ticks["max_tick"])).all()


def test_bad_options_name_the_option(market: Market, rpc: Web3) -> None:
    w3 = rpc
    with pytest.raises(ValueError, match="tokens: must name at least two distinct tokens"):
        PoolCollector(w3, Store(":memory:"), tokens=[market.tokens[0].address])
    with pytest.raises(ValueError, match="v3_factory: must be a 0x-prefixed 20-byte address"):
        PoolCollector(w3, Store(":memory:"), v3_factory="0x12")
    collector = PoolCollector(w3, Store(":memory:"), progress=False)
    with pytest.raises(ValueError, match="chain 31337 has no Uniswap factories in the registry"):
        collector.run()
