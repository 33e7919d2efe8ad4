"""Pool mid prices read from a node: ``PoolCollector`` on a USDC/WETH/WBTC market deployed
from Uniswap's bytecode on anvil (at the registry's addresses) stores each token's USD price
with source ``pool``, at the prices the market was built at."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from toolkit.client import chain_web3
from toolkit.collect.pools import PoolCollector
from toolkit.store import Store, price_at, price_table
from toolkit.testing.anvil import Anvil
from toolkit.testing.uniswap import deploy_uniswap
from toolkit.testing.uniswap_market import deploy_market


def test_pool_prices_come_from_the_pools_read_on_chain(
    node_starter: Callable[[int], Anvil],
) -> None:
    node = node_starter(1)
    try:
        w3 = chain_web3(1, url=node.url)
        uniswap = deploy_uniswap(w3)
        market = deploy_market(uniswap, eth_usd=2_500.0, btc_usd=80_000.0)
        store = Store(":memory:")
        result = PoolCollector(
            w3,
            store,
            tokens=[t.address for t in market.tokens.values()],
            v3_factory=uniswap.v3_factory.address,
            v2_factory=uniswap.v2_factory.address,
            progress=False,
        ).run()
        assert result.status == "completed"
        table = price_table(store)
        w3.provider.close()  # type: ignore[attr-defined]
    finally:
        node.stop()
    assert set(table["source"].to_list()) == {"pool"}
    # WETH: the median of four USDC/WETH pools (three V3 tiers, the V2 pair); WBTC: its USDC
    # pool (its WETH pool is not against a stablecoin).
    assert sorted(table["symbol"].to_list()) == ["WBTC", "WETH"]
    at = table["observed_at"][0]
    assert price_at(table, "WETH", 1, at) == pytest.approx(2_500.0, rel=1e-4)
    assert price_at(table, "WBTC", 1, at) == pytest.approx(80_000.0, rel=1e-4)
