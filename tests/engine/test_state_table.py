"""The spec's reservation state table, row by row, on the single-pool scenario.

The pool holds 15 units; a quote of 15 units fills it, so "an RFQ that would not fit before
fits after" shows when capacity returns.
"""

import pytest

from toolkit.engine import EXACT_OUTPUT, CapacityExhausted, Engine, OrderTerms

UNIT = 1_000 * 10**6
FULL = 15 * UNIT
POOL = "8453:USDC:usdc"


@pytest.fixture
def token(usdc: dict[int, str]) -> str:
    return usdc[8453]


def _fill_pool(single: Engine, token: str, now: float) -> str:
    return single.quote(1, 8453, token, FULL, now, kind=EXACT_OUTPUT).quote_id


def test_quote_lapse_after_15_s_releases_capacity(single: Engine, token: str):
    qid = _fill_pool(single, token, now=100.0)
    assert single.reservation(qid, 114.9) is not None
    with pytest.raises(CapacityExhausted):
        single.quote(1, 8453, token, UNIT, 114.9, kind=EXACT_OUTPUT)
    # validUntil = round(100) + 15 = 115: at 115 the reservation is gone.
    assert single.reservation(qid, 115.0) is None
    assert single.quote(1, 8453, token, UNIT, 115.0, kind=EXACT_OUTPUT).output_amount == UNIT


def test_valid_until_is_the_nearest_whole_second_and_ends_the_reservation(
    single: Engine, token: str
):
    late = single.quote(1, 8453, token, UNIT, 100.9, kind=EXACT_OUTPUT)
    assert late.valid_until == 116  # round(100.9) + 15: held 15.1 s
    assert single.pool(POOL, 115.99).reserved == UNIT
    assert single.pool(POOL, 116.0).reserved == 0
    early = single.quote(1, 8453, token, UNIT, 200.2, kind=EXACT_OUTPUT)
    assert early.valid_until == 215  # round(200.2) + 15: held 14.8 s


def test_convert_before_lapse_holds_for_60_s_from_the_call(single: Engine, token: str):
    qid = _fill_pool(single, token, now=100.0)
    assert single.convert(qid, "0xorder", 110.0) is True
    assert single.reservation(qid, 110.0) is None  # re-keyed: the quote id is gone
    held = single.reservation("0xorder", 169.0)  # +59 s after the convert
    assert held is not None and held.kind == "order" and held.amount == FULL
    with pytest.raises(CapacityExhausted):
        single.quote(1, 8453, token, UNIT, 169.0, kind=EXACT_OUTPUT)
    assert single.reservation("0xorder", 170.0) is None  # +60 s: released
    assert single.quote(1, 8453, token, UNIT, 170.0, kind=EXACT_OUTPUT).output_amount == UNIT


def test_convert_after_lapse_returns_false_and_reserves_nothing(single: Engine, token: str):
    qid = _fill_pool(single, token, now=100.0)
    last = single.last_event_id
    assert single.convert(qid, "0xorder", 115.0) is False
    assert single.reservation("0xorder", 115.0) is None
    assert single.pool(POOL, 115.0).reserved == 0
    # The lazy lapse is logged by this call; nothing is created or re-keyed.
    assert [(e.kind, e.key) for e in single.events_since(last)] == [("released", qid)]


def test_convert_unknown_quote_is_false(single: Engine):
    assert single.convert("qt_0_99", "0xorder", 0.0) is False


def test_convert_twice_refreshes_nothing(single: Engine, token: str):
    qid = _fill_pool(single, token, now=100.0)
    assert single.convert(qid, "0xa", 101.0) is True
    assert single.convert(qid, "0xb", 102.0) is False
    assert single.reservation("0xa", 160.9) is not None
    assert single.reservation("0xa", 161.0) is None


def test_quote_without_convert_cannot_be_filled_by_quote_id(single: Engine, token: str):
    q = single.quote(1, 8453, token, UNIT, 0.0, kind=EXACT_OUTPUT)
    # The quote id is not an order: without terms there is nothing to fill.
    from toolkit.engine import FillRejected

    with pytest.raises(FillRejected, match="holds no live reservation"):
        single.fill(q.quote_id, 1.0)


def test_fill_within_the_order_window_consumes_the_reservation(single: Engine, token: str):
    qid = _fill_pool(single, token, now=100.0)
    single.convert(qid, "0xorder", 105.0)
    fill = single.fill("0xorder", 130.0)
    assert fill.reserved and fill.amount == FULL
    state = single.pool(POOL, 200.0)  # long after the order window: nothing to release
    assert (state.reserved, state.outstanding, state.available) == (0, FULL, 0)


def test_lapsed_order_is_still_fillable_when_capacity_allows(
    single: Engine, token: str, usdc: dict[int, str]
):
    q = single.quote(1, 8453, token, UNIT, 0.0, kind=EXACT_OUTPUT)
    single.convert(q.quote_id, "0xorder", 1.0)
    terms = OrderTerms(1, usdc[1], q.input_amount, 8453, token, UNIT)
    fill = single.fill("0xorder", 61.0, terms)  # the order reservation lapsed at 61
    assert not fill.reserved and fill.amount == UNIT
    assert single.pool(POOL, 61.0).outstanding == UNIT


def test_lapsed_order_without_capacity_raises(single: Engine, token: str, usdc: dict[int, str]):
    q = single.quote(1, 8453, token, UNIT, 0.0, kind=EXACT_OUTPUT)
    single.convert(q.quote_id, "0xorder", 1.0)
    _fill_pool(single, token, now=61.0)  # someone else takes the whole pool after the lapse
    terms = OrderTerms(1, usdc[1], q.input_amount, 8453, token, UNIT)
    with pytest.raises(
        CapacityExhausted, match="order 0xorder: no pool has 1000000000 USDC available"
    ):
        single.fill("0xorder", 62.0, terms)
