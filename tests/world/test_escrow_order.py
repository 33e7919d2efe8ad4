"""Orders opened on a chain's escrow, as the world holds them (the relay's path)."""

from collections.abc import Callable

import pytest

from toolkit.engine import Engine
from toolkit.scenario import Scenario
from toolkit.world import OrderStatus, World, WorldError
from toolkit.world.escrow import escrow_order


@pytest.fixture
def quote(engine: Engine, usdc: Callable[[int], str]):
    return engine.quote(8453, 42161, usdc(42161), 5_000 * 10**6, now=1000.0)


def test_an_opened_order_is_held_with_its_terms_and_depositor(
    scenario: Scenario, engine: Engine, world: World, quote, build_order, open_tx
) -> None:
    oid, _ = open_tx(quote, 1000)
    order = escrow_order(scenario, 8453, build_order(quote, 1000))
    assert order.order_id == oid
    assert order.terms.input_amount == quote.input_amount
    assert order.terms.output_amount == quote.output_amount
    assert order.exclusive_for == scenario.filler and order.exclusive_until == 1060
    relayer = "0x" + "42" * 20
    assert world.deposit(order, 1000.0, sender=relayer) == oid
    state = world.order(oid)
    assert state.status is OrderStatus.DEPOSITED and state.depositor == relayer


def test_multi_output_orders_are_out_of_scope(scenario: Scenario, quote, build_order) -> None:
    order = build_order(quote, 1000)
    double = build_order(quote, 1000, outputs=order.outputs * 2)
    with pytest.raises(WorldError, match="single-input, single-output orders"):
        escrow_order(scenario, 8453, double)
