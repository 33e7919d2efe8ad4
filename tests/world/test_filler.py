import copy
from collections.abc import Callable
from typing import Any

import pytest

from toolkit.engine import EXACT_OUTPUT, Engine, OrderTerms
from toolkit.scenario import Scenario, load_scenario
from toolkit.world import EscrowOrder, OrderStatus, Reverted, World, WorldError

UNIT = 1_000 * 10**6
USER = "0x" + "11" * 20


def _escrow_order(scenario: Scenario, quote, order_id: str, now: int, **fields) -> EscrowOrder:
    terms = OrderTerms(
        quote.src_chain,
        scenario.token(quote.src_chain, quote.symbol).address,
        quote.input_amount,
        quote.dst_chain,
        quote.dst_token,
        quote.output_amount,
    )
    defaults: dict[str, Any] = {
        "fill_deadline": now + 360,
        "expires": now + 360 + 43_200,
        "exclusive_for": scenario.filler,
        "exclusive_until": now + 60,
    }
    defaults.update(fields)
    return EscrowOrder(order_id, USER, terms, USER, **defaults)


@pytest.fixture
def single_world() -> tuple[Scenario, Engine, World]:
    scenario = load_scenario("single-pool")
    engine = Engine(scenario)
    return scenario, engine, World(scenario, engine, retry_s=5.0)


def test_fast_path_deposit_fill_settle(single_world):
    scenario, engine, world = single_world
    q = engine.quote(1, 8453, scenario.token(8453, "USDC").address, UNIT, 0.0, kind=EXACT_OUTPUT)
    engine.convert(q.quote_id, "0x1", 1.0)
    world.deposit(_escrow_order(scenario, q, "0x1", 1), now=3.0)
    assert world.counts()[OrderStatus.DEPOSITED] == 1
    # The quote's eta: 36 s of Ethereum confirmations, then 2 s to fill on Base.
    assert q.eta == 38
    assert world.advance(40.9).filled == ()
    progress = world.advance(41.0)
    assert progress.filled == ("0x1",) and progress.retried == 0
    with pytest.raises(WorldError, match=r"order 0x1: settles at 341\.0, not before"):
        world.settle("0x1", 100.0)
    assert world.settle("0x1", 341.0).amount == UNIT
    counts = world.counts()
    assert counts[OrderStatus.SETTLED] == 1 and counts[OrderStatus.FILLED] == 0


def test_lapsed_reservation_is_filled_from_available_liquidity(single_world):
    scenario, engine, world = single_world
    q = engine.quote(1, 8453, scenario.token(8453, "USDC").address, UNIT, 0.0, kind=EXACT_OUTPUT)
    engine.convert(q.quote_id, "0x1", 1.0)
    world.deposit(_escrow_order(scenario, q, "0x1", 1), now=50.0)
    assert world.advance(88.0).filled == ("0x1",)
    fill = world.order("0x1").fill
    assert fill is not None and not fill.reserved
    assert not world.order("0x1").exclusive_fill  # past the exclusivity window at 61


def test_a_full_pool_delays_the_fill_until_capacity_returns(single_world):
    scenario, engine, world = single_world
    token = scenario.token(8453, "USDC").address
    q = engine.quote(1, 8453, token, UNIT, 0.0, kind=EXACT_OUTPUT)
    world.deposit(_escrow_order(scenario, q, "0x1", 0), now=0.0)  # never converted
    engine.quote(1, 8453, token, 15 * UNIT, 30.0, kind=EXACT_OUTPUT)  # holds the pool to 45
    assert world.advance(38.0).retried == 1  # due at 38, but no capacity
    assert world.advance(43.0).retried == 1
    progress = world.advance(48.0)
    assert progress.filled == ("0x1",) and progress.retried == 0


def test_retries_then_missed_and_reclaimable(single_world):
    scenario, engine, world = single_world
    token = scenario.token(8453, "USDC").address
    q = engine.quote(1, 8453, token, UNIT, 0.0, kind=EXACT_OUTPUT)
    engine.advance(15.0)
    world.deposit(_escrow_order(scenario, q, "0x1", 15, fill_deadline=60, expires=100), now=15.0)
    blocked = OrderTerms(1, scenario.token(1, "USDC").address, 15 * UNIT, 8453, token, 15 * UNIT)
    engine.fill("0xother", 16.0, blocked)  # all 15 units outstanding: no capacity
    first = world.advance(53.0)
    assert first.filled == () and first.retried == 1 and first.missed == ()
    # The next retry would fall after the fillDeadline (60): missed, reclaimable.
    second = world.advance(58.0)
    assert second.retried == 1 and second.missed == ("0x1",)
    assert world.advance(61.0) == ((), (), (), (), 0)
    assert world.order("0x1").status is OrderStatus.DEPOSITED
    with pytest.raises(Reverted, match=r"TimestampNotPassed: expires 100 not before 100\.0"):
        world.refund("0x1", 100.0)
    world.refund("0x1", 101.0)
    assert world.order("0x1").status is OrderStatus.REFUNDED
    with pytest.raises(Reverted, match="InvalidOrderStatus: order 0x1 is Refunded"):
        world.refund("0x1", 102.0)
    with pytest.raises(WorldError, match="order 0x1: is Refunded, not Deposited"):
        world.fill("0x1", 102.0)


def test_refund_expired_reclaims_automatically():
    scenario = load_scenario("single-pool")
    engine = Engine(scenario)
    world = World(scenario, engine, refund_expired=True)
    token = scenario.token(8453, "USDC").address
    q = engine.quote(1, 8453, token, UNIT, 0.0, kind=EXACT_OUTPUT)
    order = _escrow_order(scenario, q, "0x1", 0, fill_deadline=30, expires=50)
    world.deposit(order, now=0.0)  # due after the 38 s eta: past the fillDeadline
    assert world.advance(38.0).missed == ("0x1",)
    assert world.advance(50.0).refunded == ()
    assert world.advance(50.5).refunded == ("0x1",)
    assert world.order("0x1").refunded_at == 50.5


def test_exclusivity_for_another_filler(single_world):
    scenario, engine, world = single_world
    token = scenario.token(8453, "USDC").address
    q = engine.quote(1, 8453, token, UNIT, 0.0, kind=EXACT_OUTPUT)
    rival = "0x" + "99" * 20
    world.deposit(
        _escrow_order(scenario, q, "0x1", 0, exclusive_for=rival, exclusive_until=45), 0.0
    )
    with pytest.raises(Reverted, match="ExclusiveTo: order 0x1 is exclusive to 0x9999"):
        world.fill("0x1", 40.0)
    assert world.advance(40.0).retried == 1
    assert world.advance(45.0).filled == ("0x1",)  # open to anyone from startTime on


def test_fill_after_deadline_and_unknown_orders(single_world):
    scenario, engine, world = single_world
    q = engine.quote(1, 8453, scenario.token(8453, "USDC").address, UNIT, 0.0)
    world.deposit(_escrow_order(scenario, q, "0x1", 0), 0.0)
    with pytest.raises(WorldError, match="order 0x1: fillDeadline 360 has passed"):
        world.fill("0x1", 361.0)
    with pytest.raises(WorldError, match="order_id: the escrow holds no order '0x2'"):
        world.order("0x2")
    with pytest.raises(WorldError, match="order 0x1: is Deposited, not Filled"):
        world.settle("0x1", 361.0)


def test_deposit_checks(single_world):
    scenario, engine, world = single_world
    q = engine.quote(1, 8453, scenario.token(8453, "USDC").address, UNIT, 0.0)
    with pytest.raises(Reverted, match=r"TimestampPassed: fillDeadline 10 is not after 10\.0"):
        world.deposit(_escrow_order(scenario, q, "0x1", 0, fill_deadline=10), 10.0)
    with pytest.raises(Reverted, match="FillDeadlineAfterExpiry"):
        world.deposit(_escrow_order(scenario, q, "0x1", 0, expires=100), 10.0)
    with pytest.raises(WorldError, match="order: must be an EscrowOrder"):
        world.deposit(("0x1",), 10.0)
    bad = _escrow_order(scenario, q, "0x1", 0)
    bad = bad._replace(terms=bad.terms._replace(src_chain=137))
    with pytest.raises(WorldError, match="order: source chain 137 is not in the scenario"):
        world.deposit(bad, 10.0)


def test_world_shares_the_engine_clock(single_world):
    _, engine, world = single_world
    world.advance(10.0)
    assert engine.clock == 10.0
    with pytest.raises(ValueError, match=r"now: 9\.0 is earlier than the engine's clock 10\.0"):
        world.advance(9.0)


def test_constructor_checks(single_world):
    scenario, engine, _ = single_world
    with pytest.raises(ValueError, match="retry_s: must be a finite number > 0, got 0"):
        World(scenario, engine, retry_s=0)
    with pytest.raises(WorldError, match=r"engine: must be a toolkit\.engine\.Engine"):
        World(scenario, object())  # type: ignore[arg-type]


def test_default_world(world: World, usdc: Callable[[int], str]):
    assert world.engine.scenario.name == "default"
    assert world.counts() == dict.fromkeys(OrderStatus, 0)


def test_forgetting_finished_orders(single_world):
    scenario, engine, _ = single_world
    world = World(scenario, engine, keep_finished=False)
    token = scenario.token(8453, "USDC").address
    for i, now in enumerate((0.0, 1.0)):
        q = engine.quote(1, 8453, token, UNIT, now, kind=EXACT_OUTPUT)
        engine.convert(q.quote_id, f"0x{i}", now)
        world.deposit(_escrow_order(scenario, q, f"0x{i}", int(now)), now)
    assert world.advance(39.0).filled == ("0x0", "0x1")
    world.settle("0x0", 339.0)  # explicitly, before the filler's own settlement runs
    with pytest.raises(WorldError, match="order_id: the escrow holds no order '0x0'"):
        world.order("0x0")
    assert world.advance(400.0).settled == ("0x1",)
    assert world.counts()[OrderStatus.SETTLED] == 2


def test_the_filler_fills_when_the_quote_eta_has_passed_on_every_route():
    scenario = load_scenario("default")
    engine = Engine(scenario)
    world = World(scenario, engine)
    due: dict[float, list[str]] = {}
    for i, route in enumerate(scenario.routes):
        token = scenario.token(route.dst, route.token).address
        amount = route.fee_tiers[0].min_amount * 2
        q = engine.quote(route.src, route.dst, token, amount, 0.0, kind=EXACT_OUTPUT)
        key = f"0x{i:x}"
        engine.convert(q.quote_id, key, 0.0)
        world.deposit(_escrow_order(scenario, q, key, 0), now=0.0)
        due.setdefault(float(q.eta), []).append(key)
    filled: list[str] = []
    for eta in sorted(due):
        assert world.advance(eta - 0.5).filled == ()
        filled += world.advance(eta).filled
        assert sorted(filled[-len(due[eta]) :]) == sorted(due[eta])
    assert len(filled) == len(scenario.routes)


def test_a_driven_world_keeps_no_schedule(single_world):
    scenario, engine, _ = single_world
    world = World(scenario, engine, driven=True, keep_finished=False)
    token = scenario.token(8453, "USDC").address
    q = engine.quote(1, 8453, token, UNIT, 0.0, kind=EXACT_OUTPUT)
    engine.convert(q.quote_id, "0x1", 1.0)
    world.deposit(_escrow_order(scenario, q, "0x1", 1), now=1.0)
    with pytest.raises(WorldError, match=r"advance: this world is driven by its caller"):
        world.advance(100.0)
    assert world.fill("0x1", 2.0).reserved  # whenever the caller decides
    assert world.order("0x1").exclusive_fill
    with pytest.raises(WorldError, match=r"order 0x1: settles at 302\.0, not before"):
        world.settle("0x1", 301.0)
    assert world.settle("0x1", 302.0).amount == UNIT
    assert world.counts()[OrderStatus.SETTLED] == 1
    with pytest.raises(WorldError, match="order_id: the escrow holds no order '0x1'"):
        world.order("0x1")
    with pytest.raises(WorldError, match=r"refund_expired: needs the world's own filler"):
        World(scenario, engine, driven=True, refund_expired=True)


def test_a_deep_copy_keeps_its_own_filler_calendar(single_world):
    # The embedded service snapshots its world with deepcopy: the copy's due fills must run
    # on the copy, and leave the original's calendar as it was.
    scenario, engine, world = single_world
    q = engine.quote(1, 8453, scenario.token(8453, "USDC").address, UNIT, 0.0, kind=EXACT_OUTPUT)
    engine.convert(q.quote_id, "0x1", 1.0)
    world.deposit(_escrow_order(scenario, q, "0x1", 1), now=3.0)
    twin = copy.deepcopy(world)
    assert twin.advance(41.0).filled == ("0x1",)
    assert twin.order("0x1").status is OrderStatus.FILLED
    assert world.order("0x1").status is OrderStatus.DEPOSITED
    assert world.advance(41.0).filled == ("0x1",)


def test_one_advance_settles_what_is_due_before_it_fills():
    # Settlements run first at each advance, whatever their due times: an order due to fill
    # just before another's settlement still finds that settlement's capacity back. Only the
    # instant-free baseline gives a settlement's capacity back to the destination pool, so the
    # order of the two shows under it.
    scenario = load_scenario("single-pool").with_policy("instant-free")
    engine = Engine(scenario)
    world = World(scenario, engine, retry_s=5.0)
    token = scenario.token(8453, "USDC").address
    q2 = engine.quote(1, 8453, token, UNIT, 0.0, kind=EXACT_OUTPUT)  # lapses: fills from free
    q1 = engine.quote(1, 8453, token, 15 * UNIT, 20.0, kind=EXACT_OUTPUT)  # the whole pool
    engine.convert(q1.quote_id, "0x1", 21.0)
    world.deposit(_escrow_order(scenario, q1, "0x1", 21), now=21.0)
    assert world.advance(59.0).filled == ("0x1",)  # settles at 359
    world.deposit(_escrow_order(scenario, q2, "0x2", 320, fill_deadline=800), now=320.5)
    progress = world.advance(400.0)  # 0x2 due at 358.5, 0x1's settlement at 359
    assert progress.settled == ("0x1",) and progress.filled == ("0x2",)
    assert progress.retried == 0
