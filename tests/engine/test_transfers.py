"""Inventory, transfers and the policies that send them, in the engine alone.

The bridge model's latency is a log-normal by its median and 95th percentile: its draws are
held to those two quantiles. Debits take the unallocated balance first, then the pool with the
most available; credits go to the pool furthest below its opening balance. Transfers are
numbered, logged as liquidity events (the pool figures the log rebuilds match the pools), land
lazily on the engine's own heap, and are read back through cursors.
"""

from __future__ import annotations

import dataclasses
import statistics
from decimal import Decimal
from typing import TypedDict, Unpack

import pytest

from toolkit.engine import EXACT_OUTPUT, Engine, InvalidArgument, OrderTerms
from toolkit.engine.bridges import Bridges
from toolkit.engine.rebalancing import plan_moves
from toolkit.scenario import Bridge, Scenario, load_scenario
from toolkit.scenario.rebalancing import BridgeLatency, Rebalancing

UNIT = 1_000 * 10**6


class _RebalancingChanges(TypedDict, total=False):
    """The [rebalancing] settings a test changes besides the policy."""

    period_s: int | None
    min_transfer_usd: Decimal


def _small(policy: str, **rebalancing: Unpack[_RebalancingChanges]) -> Scenario:
    """The default scenario's USDC pools at 0.1 % (a few thousand USDC each)."""
    base = load_scenario("default")
    pools = tuple(
        dataclasses.replace(p, balance=p.balance // 1000) if p.token == "USDC" else p
        for p in base.pools
    )
    settings = dataclasses.replace(base.rebalancing, policy=policy, **rebalancing)
    return dataclasses.replace(base, pools=pools, rebalancing=settings)


def _fill(engine: Engine, src: int, dst: int, amount: int, now: float, key: str) -> None:
    token = engine.scenario.token(dst, "USDC").address
    q = engine.quote(src, dst, token, amount, now, kind=EXACT_OUTPUT)
    engine.convert(q.quote_id, key, now)
    engine.fill(key, now)


def test_latency_draws_hold_the_median_and_the_95th_percentile() -> None:
    bridges = Bridges(load_scenario("default"), seed=4)
    draws = sorted(bridges.latency("WETH", 10, 1) for _ in range(20_000))
    # The default's Across entry: median 90 s, p95 240 s. With 20,000 draws the sample
    # quantiles sit within about 2 % of the true ones.
    assert statistics.median(draws) == pytest.approx(90.0, rel=0.03)
    assert draws[int(0.95 * len(draws))] == pytest.approx(240.0, rel=0.04)
    same = Bridges(load_scenario("default"), seed=4)
    again = Bridges(load_scenario("default"), seed=4)
    other = Bridges(load_scenario("default"), seed=5)
    replayed = [same.latency("WETH", 10, 1) for _ in range(5)]
    assert replayed == [again.latency("WETH", 10, 1) for _ in range(5)]  # seeded: the same
    assert replayed != [other.latency("WETH", 10, 1) for _ in range(5)]


def test_fees_round_up_and_gross_delivers_at_least_what_is_asked() -> None:
    bridges = Bridges(load_scenario("default"), seed=0)
    assert bridges.fee("USDC", 1, 10, 10_001) == 2  # 1 bps of 10,001, rounded up
    for arriving in (1, 9_999, 10_000, 123_456_789):
        sent = bridges.gross("USDC", 1, 10, arriving)
        assert sent - bridges.fee("USDC", 1, 10, sent) >= arriving
        assert sent - 1 - bridges.fee("USDC", 1, 10, sent - 1) < arriving
    assert bridges.fee("WETH", 1, 10, 10**18) == 0  # the canonical deposit: gas only
    assert bridges.route("WETH", 1, 10).gas_usd == 1.5  # Ethereum's fill_cost_usd
    with pytest.raises(KeyError, match="no bridge for USDC from chain 1 to chain 1"):
        bridges.route("USDC", 1, 1)


def test_a_fixed_latency_is_exact() -> None:
    fixed = Bridge("USDC", "fixed", BridgeLatency(Decimal(30), Decimal(30)), Decimal(0), "t")
    scenario = dataclasses.replace(
        load_scenario("default"), bridges=(fixed,), rebalancing=Rebalancing()
    )
    assert Bridges(scenario, seed=1).latency("USDC", 1, 10) == 30.0


def test_plan_moves_serves_the_largest_shortfall_from_the_largest_excess() -> None:
    free = lambda s, d, x: x  # noqa: E731
    nothing = lambda s, d, x: 0  # noqa: E731
    # Chains 1 and 2 are under their trigger (30); 0 and 3 hold more than their floor (50).
    # Chain 1, the furthest from its goal (60), takes from 0, the richest; then 2 from 3.
    moves = plan_moves(
        [120, 10, 25, 90], [120, 10, 25, 90], [120, 10, 25, 90],
        [30] * 4, [60] * 4, [50] * 4, 5, free, nothing,
    )  # fmt: skip
    assert moves == [(0, 1, 50), (3, 2, 35)]
    # A move below the minimum is not made.
    assert plan_moves([100, 25], [100, 25], [100, 25], [30, 30], [60, 60], [50, 50], 40,
                      free, nothing) == []  # fmt: skip


def test_threshold_sends_from_the_origin_once_its_settlements_arrive() -> None:
    engine = Engine(_small("threshold", min_transfer_usd=Decimal(0)), seed=2)
    for i in range(4):  # 4 x 1,000 USDC from Ethereum into Base's 6,500
        _fill(engine, 1, 8453, UNIT, float(i), f"0x{i}")
    # Base's share fell under half its opening share, but nothing is held above a target
    # anywhere yet: the inputs are owed to Ethereum, not there.
    assert engine.transfers(10.0) == []
    for i in range(4):
        engine.settle(f"0x{i}", 700.0 + i)
    (transfer,) = engine.transfers(703.0)
    assert (transfer.src_chain, transfer.dst_chain, transfer.token) == (1, 8453, "USDC")
    assert (transfer.bridge, transfer.arrived) == ("CCTP v2 fast transfer", False)
    assert transfer.fee == -(-transfer.amount // 10_000)
    held = {h.chain: h for h in engine.inventory(703.0) if h.symbol == "USDC"}
    assert held[1].in_flight_out == held[8453].in_flight_in == transfer.amount - transfer.fee
    assert engine.transfers_since(0) == [transfer] and engine.arrivals_since(0) == []
    engine.advance(transfer.arrives_at)
    assert engine.arrivals_since(0)[0].arrived and engine.transfers_since(1) == []
    landed = {h.chain: h for h in engine.inventory(transfer.arrives_at) if h.symbol == "USDC"}
    assert landed[8453].in_flight_in == 0
    assert landed[8453].on_chain == held[8453].on_chain + transfer.amount - transfer.fee


def test_transfer_events_debit_and_credit_pools_as_the_log_says() -> None:
    engine = Engine(_small("threshold", min_transfer_usd=Decimal(0)), seed=2)
    for i in range(4):
        _fill(engine, 1, 8453, UNIT, float(i), f"0x{i}")
    for i in range(4):
        engine.settle(f"0x{i}", 700.0 + i)
    engine.advance(800.0)
    events = engine.events_since(0)
    out = [e for e in events if e.kind == "transfer_out"]
    into = [e for e in events if e.kind == "transfer_in"]
    assert out and into and all(e.key == "tr_1" and e.detail == 1 for e in out + into)
    # The debit took the Ethereum pool with the most available (usdc: 5,000 of 7,000 opening,
    # plus the credited inputs) and the credit went to the Base pool furthest below its
    # opening balance.
    assert out[0].pool == "1:USDC:usdc" and into[0].pool == "8453:USDC:usdc"
    by_id = {p.id: p for p in engine.pools(800.0)}
    last = {e.pool: e for e in events if e.pool is not None}
    for pool_id, event in last.items():
        assert (event.balance, event.reserved, event.outstanding) == (
            by_id[pool_id].balance,
            by_id[pool_id].reserved,
            by_id[pool_id].outstanding,
        )
    assert all(e.is_liquidity for e in out + into)


def test_periodic_brings_every_chain_back_to_target_on_its_ticks_only() -> None:
    engine = Engine(_small("periodic", period_s=600, min_transfer_usd=Decimal(10)), seed=1)
    for i in range(3):
        _fill(engine, 1, 8453, UNIT, float(i), f"0x{i}")
    for i in range(3):
        engine.settle(f"0x{i}", 10.0 + i)
    assert engine.transfers(599.0) == []  # nothing between ticks
    sent = engine.transfers(600.0)
    assert sent and all(t.sent_at == 600.0 for t in sent)
    usdc = [t for t in sent if t.token == "USDC"]
    # Ethereum holds the inputs above its target; Base is the chain most below it.
    assert {t.src_chain for t in usdc} == {1} and max(
        usdc, key=lambda t: t.amount
    ).dst_chain == 8453
    engine.advance(1_200.0)
    assert [t for t in engine.transfers(1_200.0) if t.sent_at == 1_200.0] == []  # on target


def test_a_chain_without_a_pool_holds_its_credits_unallocated_and_sends_from_them() -> None:
    # single-pool (one pool, on Base) with a bridge and the threshold policy: settlements credit
    # Ethereum, which has no USDC pool, so the inputs wait there unallocated until Base falls
    # under half its opening share; then they are sent back from the unallocated balance.
    bridge = Bridge("USDC", "b", BridgeLatency(Decimal(10), Decimal(10)), Decimal(0), "test")
    base = load_scenario("single-pool")
    scenario = dataclasses.replace(
        base, bridges=(bridge,), rebalancing=Rebalancing(policy="threshold")
    )
    engine = Engine(scenario, seed=0)
    token = scenario.token(8453, "USDC").address
    terms = OrderTerms(1, scenario.token(1, "USDC").address, UNIT, 8453, token, UNIT)
    for i in range(8):
        engine.fill(f"0x{i}", float(i), terms)
        settled = engine.settle(f"0x{i}", float(i) + 0.5)
        assert (settled.credited_chain, settled.credited_pool, settled.credited) == (1, None, UNIT)
    # The eighth fill took Base to 7 of 15 units: the seven inputs settled so far went back.
    (transfer,) = engine.transfers(8.0)
    assert (transfer.src_chain, transfer.amount, transfer.fee) == (1, 7 * UNIT, 0)
    debit = [e for e in engine.events_since(0) if e.kind == "transfer_out"]
    assert [(e.pool, e.amount) for e in debit] == [(None, 7 * UNIT)]
    held = {h.chain: h for h in engine.inventory(8.0)}
    assert held[1].unallocated == UNIT and held[8453].in_flight_in == 7 * UNIT
    engine.advance(transfer.arrives_at)
    assert engine.pools(transfer.arrives_at)[0].balance == 14 * UNIT


def test_cursors_refuse_bad_arguments() -> None:
    engine = Engine(load_scenario("default"))
    with pytest.raises(InvalidArgument, match="transfer_id: must be a non-negative integer"):
        engine.transfers_since(-1)
    with pytest.raises(InvalidArgument, match="position: must be a non-negative integer"):
        engine.arrivals_since("0")  # type: ignore[arg-type]


def test_no_table_means_no_policy_and_instant_free_needs_no_bridge() -> None:
    scenario = dataclasses.replace(load_scenario("default"), rebalancing=Rebalancing(), bridges=())
    assert Engine(scenario).policy == "none"
    assert Engine(scenario.with_policy("instant-free")).policy == "instant-free"
