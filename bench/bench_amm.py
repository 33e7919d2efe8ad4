"""Microseconds per call of the wei-exact AMM ports (``toolkit.amm``), and V3 swaps per second.

Figures: ``v2.get_amount_out``, ``v3.compute_swap_step`` (exact in, capped at the target),
``v3.get_sqrt_ratio_at_tick``, and ``Pool.swap`` crossing 0, 10 and 100 initialized ticks
(positions of 60-tick spacing stacked below the price, swapped zero for one down to a price
limit just past the N-th tick, on a fresh copy of the pool each time; the copy is timed
separately and subtracted). Each line is the best of a few runs. No assertions.
Run: ``PYTHONPATH=$PWD .venv/bin/python bench/bench_amm.py``.
"""

from __future__ import annotations

import copy
import os
import time
import timeit
from collections.abc import Callable

from toolkit.amm import v2, v3


def best_us(call: Callable[[], object], number: int, repeat: int = 5) -> float:
    return min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e6


def pool_with_ticks(count: int) -> v3.Pool:
    pool = v3.Pool(3000, 60, v3.get_sqrt_ratio_at_tick(0))
    pool.mint(-887220, 887220, 10**18)
    for index in range(1, count + 1):
        pool.mint(-60 * index, -60 * (index - 1) if index > 1 else 60, 10**16)
    return pool


def main() -> None:
    print(f"load average: {os.getloadavg()[0]:.2f}")
    sqrt_p = v3.get_sqrt_ratio_at_tick(0)
    target = v3.get_sqrt_ratio_at_tick(60)
    figures = {
        "v2.get_amount_out": best_us(
            lambda: v2.get_amount_out(10**18, 5 * 10**18, 10 * 10**18), 50_000
        ),
        "v3.compute_swap_step": best_us(
            lambda: v3.compute_swap_step(sqrt_p, target, 2 * 10**18, 10**18, 3000), 20_000
        ),
        "v3.get_sqrt_ratio_at_tick": best_us(lambda: v3.get_sqrt_ratio_at_tick(-123456), 20_000),
    }
    for name, us in figures.items():
        print(f"{name:32s} {us:8.2f} us/call")
    for count in (0, 10, 100):
        pool = pool_with_ticks(count)
        limit = v3.get_sqrt_ratio_at_tick(-60 * count - 30)
        number = max(10, 2000 // max(count, 1))
        copying = best_us(lambda pool=pool: copy.deepcopy(pool), number)
        swapping = best_us(
            lambda pool=pool, limit=limit: copy.deepcopy(pool).swap(True, 2**255 - 1, limit), number
        )
        us = swapping - copying
        print(
            f"Pool.swap crossing {count:3d} ticks      {us:8.1f} us/swap  {1e6 / us:9.0f} swaps/s"
        )
    routing_figures()


def routing_figures() -> None:
    """best_route over two V3 pools (with 40 positions each), a V2 pair and a two-hop path."""
    from toolkit.amm.routing import Venue, best_route

    def deep_pool(liquidity: int) -> v3.Pool:
        pool = v3.Pool(3000, 60, v3.get_sqrt_ratio_at_tick(0))
        pool.mint(-887220, 887220, liquidity)
        for k in range(1, 40):
            pool.mint(-300 * k, 300 * k, liquidity // 50)
        return pool

    venues = [
        Venue.v3("v3a", "USDC", "WETH", deep_pool(10**24)),
        Venue.v3("v3b", "USDC", "WETH", deep_pool(10**23)),
        Venue.v2("v2", "USDC", "WETH", v2.Pair(10**24, 10**24)),
        Venue.v2("u", "USDC", "USDT", v2.Pair(10**24, 10**24)),
        Venue.v2("w", "USDT", "WETH", v2.Pair(10**24, 10**24)),
    ]
    from toolkit.models.splits import grid_split

    amount = 10**23
    samples = []
    for _ in range(30):
        started = time.perf_counter()
        route = best_route(venues, "USDC", "WETH", amount)
        samples.append(time.perf_counter() - started)
    samples.sort()
    p50, p99 = samples[len(samples) // 2], samples[-1]
    # the 5 %-grid baseline (toolkit.models.grid_split) over the same paths
    started = time.perf_counter()
    grid = grid_split(venues, "USDC", "WETH", amount).amount_out
    grid_ms = (time.perf_counter() - started) * 1000
    print(f"best_route, 4 paths (3 hops max)  p50 {p50 * 1000:6.2f} ms  p99 {p99 * 1000:6.2f} ms")
    print(
        f"5 %-grid baseline over the same paths: {grid_ms:7.1f} ms; best_route gains "
        f"{(route.amount_out - grid) / grid * 1e4:+.3f} bps on it"
    )


if __name__ == "__main__":
    main()
