"""Rebalancing policies through the engine and the world's fast path: where the money goes.

The integrator's directional run of issue 29: 22 orders Ethereum -> Base of 1,000 USDC each
(ExactOutput), each opened, filled and settled before the next, against single-pool's one Base
pool of 15,000 USDC.
"""

from __future__ import annotations

import pytest

from toolkit.engine import EXACT_OUTPUT, CapacityExhausted, Engine
from toolkit.scenario import Scenario, load_scenario
from toolkit.world import EscrowOrder, OrderStatus, World

UNIT = 1_000 * 10**6
USER = "0x" + "11" * 20


def _directional_run(scenario: Scenario, orders: int) -> tuple[Engine, World, list[str]]:
    """Each order quoted, converted, escrowed, filled once its eta passed and settled once its
    delay passed, before the next; what each request got (``filled`` or ``404``)."""
    engine = Engine(scenario)
    world = World(scenario, engine)
    token = scenario.token(8453, "USDC").address
    delay = scenario.windows.settlement_delay_s
    now, outcomes = 0.0, []
    for i in range(orders):
        try:
            quote = engine.quote(1, 8453, token, UNIT, now, kind=EXACT_OUTPUT)
        except CapacityExhausted:
            outcomes.append("404")
            now += 1.0
            continue
        key = f"0x{i + 1:02x}"
        engine.convert(quote.quote_id, key, now)
        world.deposit(EscrowOrder.from_quote(key, quote, now, scenario, USER), now)
        now += quote.eta
        assert world.advance(now).filled == (key,)
        now += delay
        assert world.advance(now).settled == (key,)
        assert world.order(key).status is OrderStatus.SETTLED
        outcomes.append("filled")
        now += 1.0
    return engine, world, outcomes


def test_none_refuses_once_the_destination_is_spent_and_the_origin_holds_the_inputs() -> None:
    scenario = load_scenario("single-pool")
    assert scenario.rebalancing.policy == "none"
    engine, _, outcomes = _directional_run(scenario, 22)
    assert outcomes == ["filled"] * 15 + ["404"] * 7  # orders 16 to 22 are refused
    held = {h.chain: h for h in engine.inventory(engine.clock)}
    assert held[8453].on_chain == 0 and held[8453].outstanding == 0
    # Ethereum has no pool: the 15 settlements' inputs (no fee on this scenario) are there,
    # unallocated, and nothing moved them.
    assert (held[1].on_chain, held[1].unallocated) == (15 * UNIT, 15 * UNIT)
    assert engine.transfers(engine.clock) == []
    (pool,) = engine.pools(engine.clock)
    assert (pool.balance, pool.available) == (0, 0)


def test_instant_free_fills_all_22_as_the_toolkit_did_before() -> None:
    # The named baseline: every settlement repays the Base pool in place, so it never runs out
    # (and the inputs on Ethereum are nowhere in the books).
    engine, _, outcomes = _directional_run(
        load_scenario("single-pool").with_policy("instant-free"), 22
    )
    assert outcomes == ["filled"] * 22
    held = {h.chain: h for h in engine.inventory(engine.clock)}
    assert held[8453].on_chain == 15 * UNIT and held[1].on_chain == 0


def test_threshold_refills_the_destination_from_the_origin_through_a_bridge() -> None:
    # single-pool with a pool on Ethereum too (empty at first) and a bridge: Base starts with
    # all of the USDC, targets all of it, and is topped up once under half of it.
    scenario = _two_pools()
    engine, _, outcomes = _directional_run(scenario, 22)
    assert outcomes == ["filled"] * 22
    transfers = engine.transfers(engine.clock)
    assert transfers and all(t.src_chain == 1 and t.dst_chain == 8453 for t in transfers)
    assert all(t.arrives_at - t.sent_at == 30.0 and t.fee == t.amount // 10_000 for t in transfers)
    fees = sum(t.fee for t in transfers)
    held = {h.chain: h for h in engine.inventory(engine.clock)}
    # Inputs equal outputs on this scenario (no fee, no fill cost): the service holds what it
    # opened with, less what the bridge kept.
    opening = sum(p.balance for p in scenario.pools)
    assert held[1].on_chain + held[8453].on_chain == opening - fees
    assert held[8453].on_chain >= opening // 2 - UNIT


def _two_pools() -> Scenario:
    import dataclasses
    from decimal import Decimal

    from toolkit.scenario import Bridge, Pool
    from toolkit.scenario.rebalancing import BridgeLatency, Rebalancing

    base = load_scenario("single-pool")
    eth = Pool(1, "USDC", "usdc", base.pools[0].address, 1)
    bridge = Bridge(
        "USDC", "test bridge", BridgeLatency(Decimal(30), Decimal(30)), Decimal(1), "test"
    )
    return dataclasses.replace(
        base,
        pools=(*base.pools, eth),
        bridges=(bridge,),
        rebalancing=Rebalancing(policy="threshold"),
    )


@pytest.mark.parametrize("policy", ["none", "instant-free", "threshold"])
def test_every_policy_keeps_the_escrows_and_the_books_apart(policy: str) -> None:
    scenario = _two_pools().with_policy(policy)
    _, world, _ = _directional_run(scenario, 3)
    assert world.escrowed() == {}  # every input was released at settlement
