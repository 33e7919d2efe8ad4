"""Prices and token names into the store: a simulated run stores its scenario's prices under
source ``scenario``; a token the registry lacks is named from its contract and cached."""

from __future__ import annotations

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
    scenario = load_scenario("default", env={})
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
