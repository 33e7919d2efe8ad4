"""The engine as a loss system: its 404 rate matches Erlang-B and Kaufman-Roberts.

A pool of C units, Poisson arrivals, exponential holding times (mean 1 s) set as each
reservation's lifetime. Fixed seeds; the standard error comes from batch means, since
successive arrivals' outcomes are correlated.

Reservations here only lapse (nothing is filled or settled), so the scenario's rebalancing
policy plays no part: these are the capacity model alone, which is the instant-free limit.
"""

import dataclasses
import random
import statistics

from toolkit.engine import EXACT_OUTPUT, CapacityExhausted, Engine
from toolkit.scenario import Scenario

UNIT = 1_000 * 10**6
POOL = "8453:USDC:usdc"


def erlang_b(servers: int, load: float) -> float:
    b = 1.0
    for n in range(1, servers + 1):
        b = load * b / (n + load * b)
    return b


def kaufman_roberts(capacity: int, loads: list[float], sizes: list[int]) -> list[float]:
    q = [1.0] + [0.0] * capacity
    for j in range(1, capacity + 1):
        q[j] = sum(a * b * q[j - b] for a, b in zip(loads, sizes, strict=True) if j >= b) / j
    total = sum(q)
    return [sum(q[capacity - b + 1 :]) / total for b in sizes]


def test_reference_values():
    assert abs(erlang_b(15, 8.108) - 0.0100) < 1e-4
    expected = [0.04739477, 0.10138325, 0.30064190]
    got = kaufman_roberts(20, [6.0, 2.0, 1.0], [1, 2, 5])
    assert all(abs(g - e) < 1e-8 for g, e in zip(got, expected, strict=True))


def _batched(outcomes: list[int], batches: int = 20) -> tuple[float, float]:
    size = len(outcomes) // batches
    rates = [sum(outcomes[i * size : (i + 1) * size]) / size for i in range(batches)]
    return statistics.fmean(rates), statistics.stdev(rates) / batches**0.5


def test_single_class_blocking_matches_erlang_b(single_scenario: Scenario):
    engine, rng = Engine(single_scenario, max_events=0), random.Random(20260101)
    now, load, outcomes = 0.0, 8.108, []
    for _ in range(150_000):
        now += rng.expovariate(load)
        key = engine.reserve(POOL, UNIT, now, rng.expovariate(1.0))
        outcomes.append(key is None)
    rate, se = _batched(outcomes)
    assert abs(rate - erlang_b(15, load)) < 4 * se, (rate, se)


def test_quote_path_blocking_matches_erlang_b(single_scenario: Scenario, usdc: dict[int, str]):
    engine, rng = Engine(single_scenario, max_events=0), random.Random(7)
    now, load, outcomes = 0.0, 8.108, []
    for _ in range(80_000):
        now += rng.expovariate(load)
        try:
            engine.quote(1, 8453, usdc[8453], UNIT, now, kind=EXACT_OUTPUT, hold=rng.expovariate(1))
            outcomes.append(0)
        except CapacityExhausted:
            outcomes.append(1)
    rate, se = _batched(outcomes)
    assert abs(rate - erlang_b(15, load)) < 4 * se, (rate, se)


def test_multi_class_blocking_matches_kaufman_roberts(single_scenario: Scenario):
    pool = dataclasses.replace(single_scenario.pools[0], balance=20 * UNIT)
    engine = Engine(dataclasses.replace(single_scenario, pools=(pool,)), max_events=0)
    rng = random.Random(11)
    loads, sizes = [6.0, 2.0, 1.0], [1, 2, 5]
    total = sum(loads)
    now = 0.0
    outcomes: list[list[int]] = [[], [], []]
    for _ in range(150_000):
        now += rng.expovariate(total)
        k = rng.choices(range(3), weights=loads)[0]
        key = engine.reserve(POOL, sizes[k] * UNIT, now, rng.expovariate(1.0))
        outcomes[k].append(key is None)
    for k, expected in enumerate(kaufman_roberts(20, loads, sizes)):
        rate, se = _batched(outcomes[k])
        assert abs(rate - expected) < 4 * se, (k, rate, expected, se)
