"""Prices and token names into the store: a simulated run stores its scenario's prices under
source ``scenario``; a token the registry lacks is named from its contract and cached."""

from __future__ import annotations

import pytest

from toolkit.client import EmbeddedService, ServiceClient, chain_web3
from toolkit.clock import VirtualClock
from toolkit.collect import Snapshot
from toolkit.collect.prices import token_name
from toolkit.scenario import load_scenario
from toolkit.store import Store, latest_prices


def test_a_simulated_run_stores_its_scenarios_prices() -> None:
    with (
        ServiceClient(embedded=True, clock=VirtualClock(), env={}) as client,
        Store(":memory:") as store,
    ):
        Snapshot(client, store, progress=False).run()
        sources = store.query("SELECT DISTINCT source FROM prices")["source"].to_list()
        assert sources == ["scenario"]
        assert float(latest_prices(store)["WETH"]) == 3000.0  # the default scenario's [pricing]


def test_a_token_the_registry_lacks_is_named_from_its_contract_and_cached() -> None:
    scenario = load_scenario("default")
    tail = next(t for t in scenario.amm.tokens if t.symbol == "TAILA")
    service = EmbeddedService(scenario, env={})
    try:
        w3 = chain_web3(tail.chain, embedded=service)
        with Store(":memory:") as store:
            assert token_name(store, w3, tail.chain, tail.address) == ("TAILA", tail.decimals)
            cached = store.query("SELECT symbol, source FROM tokens").rows()
            assert cached == [("TAILA", "contract")]
            # The second time the store answers: no node needed.
            assert token_name(store, None, tail.chain, tail.address) == ("TAILA", tail.decimals)
            usdc = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
            assert token_name(store, None, 1, usdc) == ("USDC", 6)  # the registry's
            assert token_name(store, None, 1, "0x" + "77" * 20) is None
    finally:
        service.close()


def test_pool_mid_prices_against_a_stablecoin_are_stored_with_source_pool() -> None:
    import math
    from datetime import UTC, datetime

    import polars as pl

    from toolkit.collect.prices import record_pool_prices
    from toolkit.store import polars_schema, price_at, price_table

    usdc = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"  # token0: the lower address
    weth = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2"
    wbtc = "0x2260fac5e5542a773aa44fbcfedf7c193bc2c599"
    at = datetime(2026, 1, 1, tzinfo=UTC)
    # The Uniswap V3 whitepaper's price, sqrtPriceX96 = sqrt(token1/token0 in smallest units)
    # * 2**96, for WETH at $2,500: 10**18 wei per 2,500 * 10**6 USDC units.
    sqrt_price = int(math.sqrt(10**18 / (2_500 * 10**6)) * 2**96)
    rows = [
        {"snapshot_id": "s1", "chain": 1, "pool": "0x" + "01" * 20, "observed_at": at,
         "kind": "v3", "token0": usdc, "token1": weth, "sqrt_price_x96": str(sqrt_price)},
        # A V2 pair WBTC/USDC: 2 WBTC against 180,000 USDC = $90,000 per WBTC.
        {"snapshot_id": "s1", "chain": 1, "pool": "0x" + "02" * 20, "observed_at": at,
         "kind": "v2", "token0": wbtc, "token1": usdc, "reserve0": 2 * 10**8,
         "reserve1": 180_000 * 10**6},
        # Neither side a stablecoin: no USD price.
        {"snapshot_id": "s1", "chain": 1, "pool": "0x" + "03" * 20, "observed_at": at,
         "kind": "v2", "token0": wbtc, "token1": weth, "reserve0": 10**8, "reserve1": 10**18},
    ]  # fmt: skip
    with Store(":memory:") as store:
        schema = polars_schema("amm_pool_snapshots")
        frame = pl.DataFrame([{name: r.get(name) for name in schema} for r in rows], schema=schema)
        store.append("amm_pool_snapshots", frame)
        assert record_pool_prices(store, "s1") == 2
        table = price_table(store)
        assert set(table["source"].to_list()) == {"pool"}
        assert price_at(table, "WETH", 1, at) == pytest.approx(2_500, rel=1e-9)
        assert price_at(table, "WBTC", 1, at) == pytest.approx(90_000, rel=1e-12)
