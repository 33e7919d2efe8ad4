"""Credit-account discovery from the chain, and stored prices by chain.

- discovery: ``toolkit.collect.accounts.discover_accounts`` over the embedded service's seeded
  1,200-account book (its locks, draws and operators are the accounts' own transactions,
  mined ten accounts a block into the Base blocks before the start), read with
  ``eth_getLogs`` in-process and over loopback HTTP (``toolkit serve``'s JSON-RPC), in
  chunks of 1 block; the figure is events (logs) per second and the accounts found;
- prices: a simulated run's scenario prices stored (``record_scenario``) and then looked up with
  ``toolkit.store.price_at`` per chain (one lookup at a time), and with ``prices_at`` over a
  frame of 100,000 observations (one as-of join, the way the report prices), lookups per second.

Each figure is the best of three runs; the header prints the load average (two cores shared).
Run: ``.venv/bin/python bench/bench_discovery.py``.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta

import polars as pl

from toolkit.client import EmbeddedService, chain_web3
from toolkit.client.credit import CreditClient
from toolkit.client.sync import ServiceClient
from toolkit.collect.accounts import discover_accounts
from toolkit.collect.prices import record_scenario
from toolkit.scenario import load_scenario
from toolkit.server import create_app, serve_in_thread
from toolkit.store import Store, price_at, price_table, prices_at

RUNS = 3


def _hub_addresses(client: ServiceClient) -> tuple[list[str], list[str]]:
    base = CreditClient(client).protocol().chains["eip155:8453"]
    hubs = [hub.credit_hub_address for hub in base.credit_hubs.values()]
    return hubs, sorted({c.escrow_address for c in base.collateral.values()})


def _discover(w3: object, hubs: list[str], escrows: list[str]) -> tuple[float, int, int]:
    best = float("inf")
    for _ in range(RUNS):
        started = time.perf_counter()
        found = discover_accounts(w3, hubs, escrows, chunk=1)
        best = min(best, time.perf_counter() - started)
    return best, found.logs, len(found.accounts)


def discovery() -> None:
    service = EmbeddedService("default", env={})
    with ServiceClient(embedded=service) as client:
        hubs, escrows = _hub_addresses(client)
    seconds, logs, accounts = _discover(chain_web3(8453, embedded=service), hubs, escrows)
    print(
        f"discovery in-process:      {logs:,} events, {accounts:,} accounts in "
        f"{seconds:.2f} s = {logs / seconds:,.0f} events/s"
    )
    service.close()
    with serve_in_thread(create_app(load_scenario("default"))) as url:
        w3 = chain_web3(8453, url=f"{url}/rpc/8453")
        seconds, logs, accounts = _discover(w3, hubs, escrows)
    print(
        f"discovery over loopback:   {logs:,} events, {accounts:,} accounts in "
        f"{seconds:.2f} s = {logs / seconds:,.0f} events/s"
    )


def prices() -> None:
    scenario = load_scenario("default")
    at = datetime(2026, 1, 1, tzinfo=UTC)
    with Store(":memory:") as store:
        started = time.perf_counter()
        record_scenario(store, scenario, at)
        stored = time.perf_counter() - started
        table = price_table(store)
    print(f"scenario prices stored:    {table.height} prices in {stored * 1000:.1f} ms")
    for chain in sorted(set(table["chain"].to_list())):
        symbols = sorted(set(table.filter(table["chain"] == chain)["symbol"].to_list()))
        best = float("inf")
        for _ in range(RUNS):
            started = time.perf_counter()
            for symbol in symbols * 50:
                price_at(table, symbol, chain, at)
            best = min(best, time.perf_counter() - started)
        rate = len(symbols) * 50 / best
        print(
            f"  chain {chain:>6}: {len(symbols)} tokens, {rate:,.0f} price lookups/s (one by one)"
        )
    # The report's way: every observation of a frame priced at its own time in one as-of join.
    n = 100_000
    symbols = table["symbol"].to_list()
    chains = table["chain"].to_list()
    wanted = pl.DataFrame(
        {
            "symbol": [symbols[i % len(symbols)] for i in range(n)],
            "chain": [chains[i % len(chains)] for i in range(n)],
            "at": [at + timedelta(seconds=i) for i in range(n)],
        }
    )
    best = float("inf")
    for _ in range(RUNS):
        started = time.perf_counter()
        priced = prices_at(table, wanted)
        best = min(best, time.perf_counter() - started)
    assert priced.null_count() == 0
    print(f"  as-of join over {n:,} observations: {n / best:,.0f} price lookups/s")


if __name__ == "__main__":
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    discovery()
    prices()
