"""``toolkit collect chain`` over anvil's blocks: exactly the logs ``eth_getLogs`` returns, and
the pool events and position-NFT transfers decoded into their own tables."""

from __future__ import annotations

from typing import Any

from web3.types import RPCEndpoint

from tests.amm.onchain.conftest import Market
from toolkit.codecs.events import EVENTS
from toolkit.collect import CHAIN_EVENTS, ChainCollector
from toolkit.store import Store


def _node_logs(market: Market, last: int) -> list[dict[str, Any]]:
    topics = [[EVENTS[key].topic0 for keys in CHAIN_EVENTS.values() for key in keys]]
    query = {"fromBlock": "0x0", "toBlock": hex(last), "topics": topics}
    return market.w3.provider.make_request(RPCEndpoint("eth_getLogs"), [query])["result"]


def test_the_chain_collector_stores_exactly_what_eth_get_logs_returns(fresh: Market) -> None:
    u = fresh.uniswap
    pool = fresh.v3_pools[1]
    u.swap(pool, True, 10**20)
    u.swap(pool, False, -(10**19))
    last = fresh.w3.eth.block_number
    store = Store(":memory:")
    result = ChainCollector(fresh.w3, store, to_block=last, chunk=9, progress=False).run()
    assert result.status == "completed"
    expected = {
        (int(log["blockNumber"], 16), int(log["logIndex"], 16)): (
            log["address"].lower(), tuple(log["topics"]), log["data"], log["transactionHash"]
        )
        for log in _node_logs(fresh, last)
    }  # fmt: skip
    stored = {
        (r["block_number"], r["log_index"]): (
            r["address"],
            tuple(t for t in (r["topic0"], r["topic1"], r["topic2"], r["topic3"]) if t),
            r["data"],
            r["tx_hash"],
        )
        for r in store.query("SELECT * FROM chain_logs").iter_rows(named=True)
    }
    assert stored == expected and len(expected) > 300

    swaps = store.query("SELECT * FROM pool_swaps ORDER BY block_number")
    assert swaps.height == 2 and set(swaps["kind"]) == {"v3"}
    assert swaps["amount0"][0] == 10**20 and swaps["amount0"][1] == -(10**19)
    assert int(swaps["sqrt_price_x96"][1]) == pool.functions.slot0().call()[0]
    mints = store.query(
        "SELECT kind, count(*) AS n FROM pool_liquidity GROUP BY kind ORDER BY kind"
    )
    assert mints.rows() == [("v2", 2), ("v3", 310)]  # 2 pairs; 3 x 100 + 10 positions
    assert store.query("SELECT count(*) AS n FROM pool_syncs")["n"][0] >= 2
    # position NFTs: ERC-721 transfers of the position manager, none among the ERC-20 ones
    nfts = store.query("SELECT token, count(*) AS n FROM nft_transfers GROUP BY token")
    assert nfts.rows() == [(u.positions.address.lower(), 310)]
    erc20 = store.query("SELECT count(*) AS n FROM token_transfers WHERE token = $t",
                        {"t": u.positions.address.lower()})  # fmt: skip
    assert erc20["n"][0] == 0


def test_the_swap_sweep_records_the_nodes_chain_id(market: Market) -> None:
    from toolkit.client import EmbeddedService, SwapClient
    from toolkit.collect.swap import USDC_MAINNET, WETH_MAINNET, SwapPoint, SwapSweep

    service = EmbeddedService("default", env={})
    client = SwapClient(embedded=service, env={})
    store = Store(":memory:")
    try:
        pool = market.v3_pools[0].address
        sweep = SwapSweep(
            client,
            store,
            points=[SwapPoint("mainnet", USDC_MAINNET, WETH_MAINNET, 10**9)],
            web3s={"mainnet": market.w3},  # a node serving chain 31337 under the label
            pools={"mainnet": [pool]},
            progress=False,
        )
        assert sweep.run().status == "completed"
    finally:
        client.close()
        service.close()
    row = store.query("SELECT chain, pool, kind FROM amm_pool_snapshots").row(0)
    assert row == (31337, pool, "v3")
