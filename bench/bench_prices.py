"""Price collection per chain: ``toolkit collect prices`` (``PriceCollector``) against the
embedded default scenario served over loopback HTTP (``toolkit serve``'s JSON-RPC, what a user
pointing ``TOOLKIT_RPC_URL_<chainId>`` at a served instance gets) and in-process.

Per chain: the registry's price feeds (``latestRoundData`` and ``decimals`` each) and the
simulated markets' pools (``token0``, ``token1``, ``slot0``, ``getReserves`` each), as
``eth_call`` batches at one block, then the prices stored. The figures: ``eth_call`` reads, the
seconds per chain (the latest block, the reads, naming the pools' tokens from the registry or
the store, the rows), reads per second, and the prices stored. The service is warmed first (its
first request builds the chains); each figure is the best of three runs into a fresh database.
The header prints the load average (two cores shared by every job on this machine).
Run: ``.venv/bin/python bench/bench_prices.py``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from web3 import Web3

from toolkit.client import EmbeddedService, chain_web3
from toolkit.collect.price_collector import PriceCollector
from toolkit.scenario import load_scenario
from toolkit.server import create_app, serve_in_thread
from toolkit.store import Store
from toolkit.world.evm.markets import market_for

RUNS = 3
CHAINS = (1, 8453, 42161)


def _pools() -> dict[int, list[str]]:
    scenario = load_scenario("default", env={})
    found = {}
    for chain in CHAINS:
        market = market_for(scenario, chain)
        found[chain] = [] if market is None else [p.address for p in market.pools]
    return found


def _measure(label: str, web3s: Mapping[int, Web3]) -> None:
    pools = _pools()
    for chain, w3 in web3s.items():
        w3.eth.get_block("latest")  # warm: the first request builds the chains
        best: tuple[float, int, int] | None = None
        for _ in range(RUNS):
            with Store(":memory:") as store:
                collector = PriceCollector(
                    {chain: w3}, store, pools={chain: pools[chain]}, progress=False
                )
                result = collector.run()
                figure = (collector.seconds[chain], collector.reads, result.rows_written)
            best = figure if best is None or figure[0] < best[0] else best
        assert best is not None
        seconds, reads, rows = best
        print(
            f"{label:<10} chain {chain:>5}: {reads:>3} reads ({len(pools[chain])} pools), "
            f"{seconds:.3f} s = {reads / seconds:,.0f} reads/s, {rows} prices stored"
        )


def main() -> None:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"price collection per chain (best of {RUNS}; load average {load})")
    with serve_in_thread(create_app(load_scenario("default", env={}))) as url:
        _measure("loopback", {c: chain_web3(c, url=f"{url}/rpc/{c}") for c in CHAINS})
    service = EmbeddedService("default", env={})
    try:
        _measure("in-process", {c: chain_web3(c, embedded=service) for c in CHAINS})
    finally:
        service.close()


if __name__ == "__main__":
    main()
