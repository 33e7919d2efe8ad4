"""Real pools: discovery and snapshots from a node, toolkit.amm against the node, and route
search at a real chain's scale.

1. Discovery and snapshot of 50 V3 pools (25 pairs x the 0.05 % and 0.3 % tiers, 100 seeded
   positions each: about 180 initialised ticks) deployed from Uniswap's published bytecode on
   anvil: ``PoolCollector`` (factory logs, then the pools read at the last block), seconds per
   pool, HTTP requests and JSON-RPC calls per pool and per pool per 100 ticks, with Multicall3
   and with plain batched ``eth_call``. Goal: <= 5 calls per pool per 100 ticks.
2. One V3 swap (exact input, crossing initialised ticks) quoted by ``toolkit.amm`` in process
   against the same swap simulated by the node (``eth_call`` of ``SwapRouter.exactInputSingle``):
   microseconds per operation and their ratio.
3. Route search at a real chain's scale, in process: ``best_route`` (3 hops x 4 splits) over
   the snapshots of 100 pools (V2 and V3 at several fee tiers between 5 hub tokens, long-tail
   tokens two and three hops out), for 200 seeded queries; p50/p99/max ms. Goal: p99 <= 50 ms.

Prints figures only. Needs anvil (``make node``). Run:
``PYTHONPATH=$PWD .venv/bin/python bench/bench_pools.py``.
"""

from __future__ import annotations

import itertools
import random
import statistics
import time
from typing import Any

from eth_abi import encode

from toolkit.amm import AmmError
from toolkit.amm.routing import Venue, best_route
from toolkit.amm.snapshot import pool_from_snapshot
from toolkit.amm.v2 import Pair
from toolkit.amm.v3 import MIN_SQRT_RATIO, Pool, get_sqrt_ratio_at_tick
from toolkit.client import chain_web3
from toolkit.collect.pool_state import MULTICALL3, PoolRef, StateReader, read_pool_states
from toolkit.collect.pools import PoolCollector
from toolkit.store import Store
from toolkit.testing.anvil import start_anvil
from toolkit.testing.uniswap import _EXACT_IN, _SWAP_TYPES, deploy_uniswap, spread_positions


def _count(w3: Any) -> dict[str, int]:
    """Count the HTTP requests and JSON-RPC calls ``w3``'s provider sends from now on."""
    counts = {"requests": 0, "calls": 0}
    provider = w3.provider
    single, batch = provider.make_request, provider.make_batch_request

    def one(method: Any, params: Any) -> Any:
        counts["requests"] += 1
        counts["calls"] += 1
        return single(method, params)

    def many(requests: Any) -> Any:
        counts["requests"] += 1
        counts["calls"] += len(requests)
        return batch(requests)

    provider.make_request, provider.make_batch_request = one, many
    return counts


def discovery_and_snapshot() -> None:
    node = start_anvil(chain_id=31337, args=("--gas-limit", "1000000000"))
    w3 = chain_web3(31337, url=node.url)
    try:
        started = time.perf_counter()
        u = deploy_uniswap(w3)
        tokens = [u.token() for _ in range(10)]
        rng = random.Random(50)
        pools = []
        for a, b in list(itertools.combinations(tokens, 2))[:25]:
            for fee, spacing in ((500, 10), (3000, 60)):
                pool = u.v3_pool(a, b, fee, 2**96)
                u.mint(pool, spread_positions(rng, 0, spacing, 100, width=500, amount=10**22))
                pools.append(pool)
        print(f"set-up: {len(pools)} V3 pools deployed in {time.perf_counter() - started:.1f} s")
        for multicall, depth in ((True, 887272), (True, 4000), (False, 4000), (False, 887272)):
            store = Store(":memory:")
            collector = PoolCollector(
                w3, store, tokens=[t.address for t in tokens], v3_factory=u.v3_factory.address,
                v2_factory=u.v2_factory.address, progress=False, depth_ticks=depth,
            )  # fmt: skip
            if not multicall:  # the chain without Multicall3: plain eth_calls in batches
                w3.provider.make_request("anvil_setCode", [MULTICALL3, "0x"])
            counts = _count(w3)
            started = time.perf_counter()
            result = collector.run()
            elapsed = time.perf_counter() - started
            ticks = result.by_table.get("amm_pool_ticks", 0)
            n = result.by_table.get("amm_pool_snapshots", 0)
            per_100 = counts["calls"] / n / (ticks / n / 100)
            print(
                f"{'Multicall3' if multicall else 'batched eth_call'}, depth {depth} ticks: {n} "
                f"pools, {ticks / n:.0f} "
                f"ticks/pool: {elapsed / n * 1000:.1f} ms/pool, {counts['requests'] / n:.2f} HTTP "
                f"requests/pool, {counts['calls'] / n:.2f} JSON-RPC calls/pool "
                f"({per_100:.2f} per pool per 100 ticks)"
            )
            del w3.provider.make_request, w3.provider.make_batch_request  # uncounted again
        swap_latency(u, pools[1])
    finally:
        w3.provider.close()
        node.stop()


def swap_latency(u: Any, pool: Any) -> None:
    w3 = u.w3
    code = w3.eth.get_code(MULTICALL3)
    reader = StateReader(w3, w3.eth.block_number, multicall=MULTICALL3 if code else None)
    rows, ticks = read_pool_states(
        reader, [PoolRef(pool.address, "v3", "", "", 0)], depth_ticks=887272
    )
    ours = pool_from_snapshot(rows[0], ticks[pool.address])
    assert isinstance(ours, Pool)
    amount = 3 * 10**23
    limit = MIN_SQRT_RATIO + 1
    before = ours.tick
    quoted = ours.quote(True, amount, limit)
    copy_ = pool_from_snapshot(rows[0], ticks[pool.address])
    copy_.swap(True, amount, limit)
    crossed = sum(1 for t in ours.ticks if copy_.tick < t <= before)
    n = 200
    started = time.perf_counter()
    for _ in range(n):
        ours.quote(True, amount, limit)
    in_process = (time.perf_counter() - started) / n * 1e6
    t0, t1 = pool.functions.token0().call(), pool.functions.token1().call()
    data = (
        "0x"
        + (
            _EXACT_IN + encode([_SWAP_TYPES], [(t0, t1, 3000, u.account, 2**40, amount, 0, 0)])
        ).hex()
    )
    call = {"from": u.account, "to": u.router.address, "data": data}
    answer = w3.provider.make_request("eth_call", [call, "latest"])
    on_node_out = int(answer["result"], 16)
    started = time.perf_counter()
    for _ in range(n // 4):
        w3.provider.make_request("eth_call", [call, "latest"])
    on_node = (time.perf_counter() - started) / (n // 4) * 1e6
    assert on_node_out == -quoted[1], (on_node_out, quoted)
    print(
        f"V3 swap crossing {crossed} initialised ticks (same output on both: {on_node_out}): "
        f"toolkit.amm {in_process:.0f} us, anvil eth_call {on_node:.0f} us "
        f"(in process {on_node / in_process:.1f}x faster)"
    )


def _v3(rng: random.Random, fee: int, spacing: int, tick: int, depth: float) -> Pool:
    pool = Pool(fee, spacing, get_sqrt_ratio_at_tick(tick))
    centre = tick // spacing
    for _ in range(100):
        lo, hi = sorted(rng.sample(range(centre - 300, centre + 301), 2))
        pool.mint(lo * spacing, hi * spacing, int(depth * rng.uniform(0.2, 1.0)))
    return pool


def scale_market(rng: random.Random) -> list[Venue]:
    """100 pools: 5 hubs all joined at 3 V3 tiers and V2; 20 tail tokens, 10 joined to one or
    two hubs, 10 more joined only to a tail token (two and three hops from most hubs)."""
    hubs = ["WETH", "USDC", "USDT", "DAI", "WBTC"]
    tails = [f"TAIL{i}" for i in range(10)]
    far = [f"FAR{i}" for i in range(10)]
    venues: list[Venue] = []

    def add(a: str, b: str, kind: str, fee: int = 3000, spacing: int = 60) -> None:
        depth = 10**24 * rng.uniform(0.1, 2.0)
        if kind == "v2":
            venues.append(Venue.v2(f"{a}/{b} v2", a, b, Pair(int(depth * 1e3), int(depth * 1e3))))
        else:
            venues.append(Venue.v3(f"{a}/{b} {fee}", a, b, _v3(rng, fee, spacing, 0, depth)))

    for a, b in itertools.combinations(hubs, 2):
        for fee, spacing in ((500, 10), (3000, 60), (10000, 200)):
            add(a, b, "v3", fee, spacing)
        add(a, b, "v2")
    for i, tail in enumerate(tails):
        add(tail, hubs[i % 5], "v3")
        add(tail, hubs[(i + 2) % 5], "v2")
        add(tail, hubs[i % 5], "v3", 10000, 200)
        add(far[i], tail, "v3")
        add(far[i], tail, "v2")
        add(far[i], tails[(i + 1) % 10], "v3", 10000, 200)
    return venues


def route_at_scale() -> None:
    rng = random.Random(120)
    started = time.perf_counter()
    venues = scale_market(rng)
    tokens = sorted({v.token0 for v in venues} | {v.token1 for v in venues})
    print(
        f"market: {len(venues)} pools, {len(tokens)} tokens, "
        f"built in {time.perf_counter() - started:.1f} s"
    )
    times, splits, failed = [], [], 0
    for _ in range(200):
        a, b = rng.sample(tokens, 2)
        amount = int(10 ** rng.uniform(18, 24))
        started = time.perf_counter()
        try:
            route = best_route(venues, a, b, amount, max_hops=3, max_paths=4)
        except AmmError:
            failed += 1
            continue
        finally:
            times.append((time.perf_counter() - started) * 1000)
        splits.append(len(route.splits))
    times.sort()
    p99 = times[int(len(times) * 0.99) - 1]
    print(
        f"best_route 3 hops x 4 splits, {len(times)} queries ({failed} with no route): p50 "
        f"{statistics.median(times):.1f} ms, p99 {p99:.1f} ms, max {times[-1]:.1f} ms; "
        f"{sum(s > 1 for s in splits)} routes split"
    )


if __name__ == "__main__":
    route_at_scale()
    discovery_and_snapshot()
