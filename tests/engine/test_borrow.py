import pytest

from toolkit.engine import EXACT_OUTPUT, Engine, NoRoute, UnknownReservation


def test_borrow_quote_uses_the_same_pricing_and_reserves(engine: Engine, usdc: dict[int, str]):
    rfq = Engine(engine.scenario).quote(1, 42161, usdc[42161], 10**10, 0.0)
    bq = engine.borrow_quote(1, 42161, usdc[42161], 10**10, 0.0)
    assert bq.quote_id == "bq_0_1" and bq.quote_duration == 60 and bq.valid_until == 60
    assert (bq.input_amount, bq.output_amount, bq.fee_bps) == (
        rfq.input_amount,
        rfq.output_amount,
        rfq.fee_bps,
    )
    assert engine.pool(bq.pool, 59.9).reserved == bq.output_amount
    assert engine.pool(bq.pool, 60.0).reserved == 0


def test_preferred_pool(engine: Engine, usdc: dict[int, str]):
    aave = engine.scenario.pools_for(42161, "USDC")[1]
    q = engine.borrow_quote(1, 42161, usdc[42161], 10**9, 0.0, pool=aave.address.lower())
    assert q.pool == aave.id
    with pytest.raises(
        NoRoute, match="pool: no USDC pool at 0x0000000000000000000000000000000000000001"
    ):
        engine.borrow_quote(1, 42161, usdc[42161], 10**9, 0.0, pool="0x" + "00" * 19 + "01")


def test_preferred_pool_falls_back_when_it_cannot_serve(engine: Engine, usdc: dict[int, str]):
    aave = engine.scenario.pools_for(42161, "USDC")[1]  # 2M USDC
    million = 1_000_000 * 10**6
    for _ in range(2):
        q = engine.borrow_quote(
            1, 42161, usdc[42161], million, 0.0, kind=EXACT_OUTPUT, pool=aave.address
        )
        assert q.pool == aave.id
    q = engine.borrow_quote(
        1, 42161, usdc[42161], million, 0.0, kind=EXACT_OUTPUT, pool=aave.address
    )
    assert q.pool == "42161:USDC:usdc"


def test_authorize_consumes_into_outstanding_and_settle_repays(
    engine: Engine, usdc: dict[int, str]
):
    q = engine.borrow_quote(8453, 10, usdc[10], 10**10, 0.0, kind=EXACT_OUTPUT)
    loan = engine.authorize(q.quote_id, 30.0)
    assert (loan.amount, loan.cost, loan.symbol, loan.token) == (
        10**10,
        q.borrow_cost,
        "USDC",
        usdc[10],
    )
    state = engine.pool(q.pool, 100.0)  # after the quote window: nothing lapses any more
    assert (state.reserved, state.outstanding) == (0, 10**10)
    with pytest.raises(UnknownReservation, match="quote_id: no live borrow reservation"):
        engine.authorize(q.quote_id, 100.0)
    settlement = engine.settle(q.quote_id, 200.0)
    assert settlement.earned == q.input_amount - q.output_amount - q.fill_cost
    assert engine.pool(q.pool, 200.0).outstanding == 0


def test_authorize_after_lapse_or_with_an_rfq_quote(engine: Engine, usdc: dict[int, str]):
    bq = engine.borrow_quote(1, 10, usdc[10], 10**9, 0.0)
    with pytest.raises(UnknownReservation):
        engine.authorize(bq.quote_id, 60.0)
    rfq = engine.quote(1, 10, usdc[10], 10**9, 61.0)
    with pytest.raises(UnknownReservation, match="no live borrow reservation 'qt_0_2'"):
        engine.authorize(rfq.quote_id, 61.0)
    assert engine.convert(bq.quote_id, "0x1", 61.0) is False  # borrow quotes never convert
