import pytest

from toolkit.engine import (
    EXACT_OUTPUT,
    CapacityExhausted,
    Engine,
    FillRejected,
    InvalidArgument,
    OrderTerms,
    UnknownReservation,
)
from toolkit.scenario import Scenario


def _order(engine: Engine, usdc: dict[int, str], amount: int, now: float, order_id: str):
    q = engine.quote(1, 8453, usdc[8453], amount, now, kind=EXACT_OUTPUT)
    assert engine.convert(q.quote_id, order_id, now + 1)
    terms = OrderTerms(1, usdc[1], q.input_amount, 8453, usdc[8453], q.output_amount)
    return q, terms


def test_fill_then_settle_credits_the_origin_chain(engine: Engine, usdc: dict[int, str]):
    # The Base pool lends the output; the escrow releases the input on Ethereum, so the
    # settlement pays the Base pool's receivable there and credits Ethereum's inventory.
    q, terms = _order(engine, usdc, 50_000 * 10**6, 0.0, "0x1")
    before = {p.id: p for p in engine.pools(2.0)}
    fill = engine.fill("0x1", 10.0, terms)
    earned = q.input_amount - q.output_amount - q.fill_cost
    assert fill.earned == earned > 0
    assert engine.outstanding("0x1") == (q.pool, q.output_amount, earned)
    base = {h.chain: h for h in engine.inventory(10.0) if h.symbol == "USDC"}
    assert base[1].receivable_in == q.input_amount and base[8453].outstanding == q.output_amount
    settlement = engine.settle("0x1", 700.0)
    assert settlement == (
        "0x1",
        q.pool,
        q.output_amount,
        earned,
        1,
        1,
        "1:USDC:usdc",
        q.input_amount,
    )
    after = {p.id: p for p in engine.pools(700.0)}
    assert after[q.pool].balance == before[q.pool].balance - q.output_amount
    assert (after[q.pool].reserved, after[q.pool].outstanding) == (0, 0)
    assert after["1:USDC:usdc"].balance == before["1:USDC:usdc"].balance + q.input_amount
    assert engine.outstanding("0x1") is None
    held = {h.chain: h for h in engine.inventory(700.0) if h.symbol == "USDC"}
    assert held[1].receivable_in == 0
    assert held[1].on_chain - base[1].on_chain == q.input_amount


def test_instant_free_settle_repays_the_pool_with_the_fee(
    default_scenario: Scenario, usdc: dict[int, str]
):
    # The named baseline: the lending pool is repaid in place, at once, for free.
    engine = Engine(default_scenario.with_policy("instant-free"))
    q, terms = _order(engine, usdc, 50_000 * 10**6, 0.0, "0x1")
    before = engine.pool(q.pool, 2.0)
    engine.fill("0x1", 10.0, terms)
    earned = q.input_amount - q.output_amount - q.fill_cost
    settlement = engine.settle("0x1", 700.0)
    assert (settlement.amount, settlement.earned) == (q.output_amount, earned)
    assert (settlement.credited_pool, settlement.credited) == (q.pool, q.output_amount + earned)
    after = engine.pool(q.pool, 700.0)
    assert after.balance == before.balance + earned
    assert (after.reserved, after.outstanding) == (0, 0)


def test_unfill_drops_the_fill_and_a_retry_fills_from_available(
    engine: Engine, usdc: dict[int, str]
):
    q, terms = _order(engine, usdc, 10**9, 0.0, "0x1")
    engine.fill("0x1", 5.0, terms)
    undone = engine.unfill("0x1", 6.0)
    assert (undone.pool, undone.amount, undone.reserved) == (q.pool, q.output_amount, False)
    assert engine.outstanding("0x1") is None
    assert engine.pool(q.pool, 6.0).outstanding == 0
    assert sum(h.receivable_in for h in engine.inventory(6.0)) == 0
    assert engine.events_since(0)[-1][2:6] == ("unfilled", "0x1", q.pool, q.output_amount)
    with pytest.raises(UnknownReservation, match="order_id: no fill outstanding under '0x1'"):
        engine.unfill("0x1", 7.0)
    with pytest.raises(FillRejected, match="0x1 holds no live reservation"):
        engine.fill("0x1", 8.0)  # the reservation was consumed: only the direct path is left
    again = engine.fill("0x1", 8.0, terms)
    assert not again.reserved and engine.outstanding("0x1") is not None


def test_unfill_refuses_a_loan(engine: Engine, usdc: dict[int, str]):
    q = engine.borrow_quote(1, 8453, usdc[8453], 10**9, 0.0)
    engine.authorize(q.quote_id, 1.0)
    with pytest.raises(UnknownReservation, match="no fill outstanding"):
        engine.unfill(q.quote_id, 2.0)
    assert engine.outstanding(q.quote_id) is not None


def test_settle_twice_or_unknown(engine: Engine, usdc: dict[int, str]):
    _, terms = _order(engine, usdc, 10**9, 0.0, "0x1")
    engine.fill("0x1", 5.0, terms)
    engine.settle("0x1", 6.0)
    with pytest.raises(UnknownReservation, match="key: nothing outstanding under '0x1'"):
        engine.settle("0x1", 7.0)


def test_fill_twice_is_rejected(engine: Engine, usdc: dict[int, str]):
    _, terms = _order(engine, usdc, 10**9, 0.0, "0x1")
    engine.fill("0x1", 5.0, terms)
    with pytest.raises(FillRejected, match="order_id: 0x1 is already filled"):
        engine.fill("0x1", 6.0, terms)


def test_terms_must_match_the_reservation(engine: Engine, usdc: dict[int, str]):
    q, terms = _order(engine, usdc, 10**9, 0.0, "0x1")
    with pytest.raises(FillRejected, match="output amount 1000000001 differs from the reserved"):
        engine.fill("0x1", 5.0, terms._replace(output_amount=q.output_amount + 1))
    with pytest.raises(FillRejected, match=r"input amount \d+ is below the quoted"):
        engine.fill("0x1", 5.0, terms._replace(input_amount=q.input_amount - 1))
    with pytest.raises(FillRejected, match="output token differs from the reservation"):
        engine.fill("0x1", 5.0, terms._replace(output_token=usdc[10], dst_chain=10))
    assert engine.reservation("0x1", 5.0) is not None  # rejected fills change nothing


def test_direct_fill_reprices_the_order(engine: Engine, usdc: dict[int, str]):
    # An order built without a quote id: nothing reserved, filled if its input still pays.
    q = engine.quote(1, 8453, usdc[8453], 10**9, 0.0, kind=EXACT_OUTPUT)
    terms = OrderTerms(1, usdc[1], q.input_amount, 8453, usdc[8453], q.output_amount)
    engine.advance(20.0)  # the quote lapsed
    with pytest.raises(FillRejected, match=r"is below the \d+ the service charges now"):
        engine.fill("0xcheap", 20.0, terms._replace(input_amount=q.input_amount - 1))
    fill = engine.fill("0xfair", 20.0, terms)
    assert not fill.reserved and fill.earned == q.input_amount - q.output_amount - q.fill_cost


def test_direct_fill_on_unknown_routes_is_rejected(engine: Engine, usdc: dict[int, str]):
    terms = OrderTerms(1, usdc[1], 10**9, 1, usdc[1], 10**8)
    with pytest.raises(FillRejected, match="order 0x9: no route from chain 1 to chain 1"):
        engine.fill("0x9", 0.0, terms)
    terms = OrderTerms(1, usdc[1], 10**9, 10, usdc[10], 10**13)
    with pytest.raises(FillRejected, match="order 0x9: amount: 10000000000000 is outside"):
        engine.fill("0x9", 0.0, terms)
    with pytest.raises(InvalidArgument, match=r"terms\.input_amount: must be a positive integer"):
        engine.fill("0x9", 0.0, terms._replace(input_amount=-1))
    with pytest.raises(InvalidArgument, match="terms: must be an OrderTerms"):
        engine.fill("0x9", 0.0, (1, 2))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="order_id: must be a non-empty string"):
        engine.fill("", 0.0)


def test_direct_fill_needs_capacity(single: Engine, usdc: dict[int, str]):
    unit = 1_000 * 10**6
    terms = OrderTerms(1, usdc[1], unit, 8453, usdc[8453], unit)
    for i in range(15):
        single.fill(f"0x{i}", 0.0, terms)
    with pytest.raises(CapacityExhausted, match="order 0xf: no pool has"):
        single.fill("0xf", 0.0, terms)


def test_convert_rejects_an_order_id_in_use(engine: Engine, usdc: dict[int, str]):
    _order(engine, usdc, 10**9, 0.0, "0x1")
    q = engine.quote(1, 8453, usdc[8453], 10**9, 2.0)
    with pytest.raises(
        InvalidArgument, match="order_id: 0x1 already holds a reservation or a fill"
    ):
        engine.convert(q.quote_id, "0x1", 3.0)
    assert engine.reservation(q.quote_id, 3.0) is not None
    with pytest.raises(InvalidArgument, match="order_id: must be a non-empty string"):
        engine.convert(q.quote_id, "", 3.0)
