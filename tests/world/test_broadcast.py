from collections.abc import Callable

import pytest

from toolkit.codecs.escrow import encode_open
from toolkit.engine import Engine
from toolkit.scenario import Scenario
from toolkit.world import OrderStatus, Reverted, World, WorldError


@pytest.fixture
def quote(engine: Engine, usdc: Callable[[int], str]):
    return engine.quote(8453, 42161, usdc(42161), 5_000 * 10**6, now=1000.0)


def test_the_whole_flow_from_calldata(
    scenario: Scenario, engine: Engine, world: World, quote, open_tx, user: str
):
    oid, data = open_tx(quote, 1002)
    assert engine.convert(quote.quote_id, oid, 1002.0)
    escrow = scenario.chain(8453).escrow
    assert world.broadcast(escrow.lower(), 8453, data, user, 1010.0) == oid
    state = world.order(oid)
    assert state.status is OrderStatus.DEPOSITED and state.depositor == user
    assert state.order.terms.input_amount == quote.input_amount
    assert state.order.terms.output_amount == quote.output_amount
    assert state.order.exclusive_for == scenario.filler and state.order.exclusive_until == 1062
    # The quote's eta: 10 s of Base confirmations, then 1 s to fill on Arbitrum.
    assert quote.eta == 11
    assert world.advance(1020.0).filled == ()
    assert world.advance(1021.0).filled == (oid,)
    filled = world.order(oid)
    assert filled.status is OrderStatus.FILLED and filled.exclusive_fill and filled.fill.reserved
    assert world.advance(1620.0).settled == ()
    assert world.advance(1621.0).settled == (oid,)
    assert world.order(oid).status is OrderStatus.SETTLED
    pool = engine.pool(quote.pool, 1621.0)
    earned = quote.input_amount - quote.output_amount - quote.fill_cost
    assert pool.balance == scenario.pools_for(42161, "USDC")[0].balance + earned


def test_sender_pays_not_user(world: World, scenario: Scenario, quote, open_tx):
    oid, data = open_tx(quote, 1000)
    relayer = "0x" + "42" * 20
    world.broadcast(scenario.chain(8453).escrow, 8453, data, relayer, 1000.0)
    assert world.order(oid).depositor == relayer


def test_wrong_target_or_chain(world: World, scenario: Scenario, quote, open_tx, user: str):
    _, data = open_tx(quote, 1000)
    escrow = scenario.chain(8453).escrow
    with pytest.raises(
        WorldError, match="tx_to: 0x1111111111111111111111111111111111111111 is not"
    ):
        world.broadcast("0x" + "11" * 20, 8453, data, user, 1000.0)
    with pytest.raises(Reverted, match="WrongChain: originChainId 8453 but the chain is 10"):
        world.broadcast(escrow, 10, data, user, 1000.0)
    with pytest.raises(WorldError, match="chain_id: chain 137 is not in the scenario"):
        world.broadcast(escrow, 137, data, user, 1000.0)
    with pytest.raises(WorldError, match="sender: must be a 0x-prefixed 20-byte hex address"):
        world.broadcast(escrow, 8453, data, "me", 1000.0)


def test_undecodable_calldata(world: World, scenario: Scenario, user: str):
    escrow = scenario.chain(8453).escrow
    with pytest.raises(WorldError, match="calldata: selector 0xdeadbeef is not open"):
        world.broadcast(escrow, 8453, "0xdeadbeef" + "00" * 64, user, 1000.0)


def test_timing_checks(world: World, scenario: Scenario, quote, build_order, user: str):
    escrow = scenario.chain(8453).escrow
    inverted = encode_open(build_order(quote, 1000, expires=1300))
    with pytest.raises(Reverted, match="FillDeadlineAfterExpiry: fillDeadline 1360 > 1300"):
        world.broadcast(escrow, 8453, inverted, user, 1000.0)
    late = encode_open(build_order(quote, 1000))
    with pytest.raises(Reverted, match=r"TimestampPassed: fillDeadline 1360 is not after 1360\.0"):
        world.broadcast(escrow, 8453, late, user, 1360.0)


def test_an_order_opens_once(world: World, scenario: Scenario, quote, open_tx, user: str):
    _, data = open_tx(quote, 1000)
    escrow = scenario.chain(8453).escrow
    world.broadcast(escrow, 8453, data, user, 1000.0)
    with pytest.raises(Reverted, match=r"InvalidOrderStatus: order 0x[0-9a-f]{64} was already"):
        world.broadcast(escrow, 8453, data, user, 1001.0)


def test_multi_output_orders_are_out_of_scope(
    world: World, scenario: Scenario, quote, build_order, user: str
):
    order = build_order(quote, 1000)
    double = build_order(quote, 1000, outputs=order.outputs * 2)
    with pytest.raises(WorldError, match="single-input, single-output orders"):
        world.broadcast(scenario.chain(8453).escrow, 8453, encode_open(double), user, 1000.0)
