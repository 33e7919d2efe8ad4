import pytest

from toolkit.engine import (
    EXACT_OUTPUT,
    LIQUIDITY_KINDS,
    Engine,
    EventsTruncated,
    InvalidArgument,
    NoRoute,
    OrderTerms,
)
from toolkit.scenario import FeeTier, Scenario

UNIT = 1_000 * 10**6


def test_a_full_lifecycle_in_events(single: Engine, usdc: dict[int, str]):
    # single-pool's policy is none: the settlement pays the Base pool's receivable on Ethereum,
    # where the service has no pool, so the input lands in Ethereum's unallocated balance.
    token = usdc[8453]
    a = single.quote(1, 8453, token, UNIT, 0.0, kind=EXACT_OUTPUT)
    b = single.quote(1, 8453, token, 2 * UNIT, 1.0, kind=EXACT_OUTPUT)
    single.convert(a.quote_id, "0xa", 2.0)
    single.fill("0xa", 20.0)  # b lapses at 16, before this call
    single.settle("0xa", 30.0)
    events = single.events_since(0)
    assert [e.id for e in events] == [1, 2, 3, 4, 5, 6, 7]
    assert [(e.kind, e.key, e.time) for e in events] == [
        ("created", a.quote_id, 0.0),
        ("created", b.quote_id, 1.0),
        ("rekeyed", "0xa", 2.0),
        ("released", b.quote_id, 16),
        ("filled", "0xa", 20.0),
        ("settled", "0xa", 30.0),
        ("credited", "0xa", 30.0),
    ]
    assert events[2].detail == a.quote_id
    total = 15 * UNIT
    figures = [(e.reserved, e.outstanding, e.available, e.balance) for e in events[:6]]
    assert figures == [
        (UNIT, 0, total - UNIT, total),
        (3 * UNIT, 0, total - 3 * UNIT, total),
        (3 * UNIT, 0, total - 3 * UNIT, total),
        (UNIT, 0, total - UNIT, total),
        (0, UNIT, total - UNIT, total),
        (0, 0, total - UNIT, total - UNIT),  # the receivable was paid elsewhere
    ]
    assert all(e.pool == "8453:USDC:usdc" for e in events[:6])
    credited = events[6]
    assert (credited.pool, credited.amount, credited.detail) == (None, a.input_amount, (1, "USDC"))
    assert [e.is_liquidity for e in events] == [True, True, False, True, True, True, True]
    assert "rekeyed" not in LIQUIDITY_KINDS


def test_events_since_returns_the_tail(single: Engine):
    for i in range(5):
        single.reserve("8453:USDC:usdc", UNIT, float(i), 100.0)
    assert [e.id for e in single.events_since(3)] == [4, 5]
    assert single.events_since(5) == [] and single.events_since(99) == []
    assert single.last_event_id == 5
    with pytest.raises(InvalidArgument, match="event_id: must be a non-negative integer"):
        single.events_since(-1)


def test_instant_free_repaid_events_carry_the_earned_fee(
    default_scenario: Scenario, usdc: dict[int, str]
):
    # The instant-free baseline repays the lending pool in place: outstanding falls, the fee
    # joins its balance.
    engine = Engine(default_scenario.with_policy("instant-free"))
    q = engine.quote(1, 10, usdc[10], 10**10, 0.0)
    engine.convert(q.quote_id, "0x1", 1.0)
    engine.fill("0x1", 2.0)
    engine.settle("0x1", 3.0)
    repaid = engine.events_since(0)[-1]
    earned = q.input_amount - q.output_amount - q.fill_cost
    assert repaid.kind == "repaid" and repaid.detail == earned
    initial = engine.scenario.pools_for(10, "USDC")[0].balance
    assert repaid.balance == initial + earned
    before = engine.events_since(0)[-2]
    assert before.balance == initial


def test_settled_and_credited_events_move_the_receivable_to_the_origin(
    engine: Engine, usdc: dict[int, str]
):
    q = engine.quote(1, 10, usdc[10], 10**10, 0.0)
    engine.convert(q.quote_id, "0x1", 1.0)
    engine.fill("0x1", 2.0)
    engine.settle("0x1", 3.0)
    settled, credited = engine.events_since(0)[-2:]
    earned = q.input_amount - q.output_amount - q.fill_cost
    initial = {p.id: p.balance for p in engine.scenario.pools}
    assert (settled.kind, settled.pool, settled.amount, settled.detail) == (
        "settled",
        q.pool,
        q.output_amount,
        earned,
    )
    assert (settled.balance, settled.outstanding) == (initial[q.pool] - q.output_amount, 0)
    # Credited to Ethereum's USDC pool with the largest shortfall (none yet: the first listed).
    assert (credited.kind, credited.pool, credited.amount) == (
        "credited",
        "1:USDC:usdc",
        q.input_amount,
    )
    assert credited.balance == initial["1:USDC:usdc"] + q.input_amount


def test_fee_changes_are_events(engine: Engine):
    tiers = (FeeTier(7, 1, 10**6), FeeTier(4, 10**6, 10**12))
    engine.set_fee_tiers(1, 10, "USDC", tiers, now=5.0)
    assert engine.fee_tiers(1, 10, "USDC") == tiers
    event = engine.events_since(0)[-1]
    assert (event.kind, event.key, event.pool, event.detail) == ("fee", "1:10:USDC", None, tiers)
    assert not event.is_liquidity


def test_fee_changes_are_validated(engine: Engine):
    with pytest.raises(InvalidArgument, match="fee_tiers: tiers must be contiguous"):
        engine.set_fee_tiers(1, 10, "USDC", (FeeTier(7, 1, 5), FeeTier(4, 6, 10)), now=0.0)
    with pytest.raises(InvalidArgument, match="fee plus maximum premium must be below 10000"):
        engine.set_fee_tiers(1, 10, "USDC", (FeeTier(9_990, 1, 5),), now=0.0)
    with pytest.raises(NoRoute, match="no route from chain 1 to chain 1 for USDC"):
        engine.set_fee_tiers(1, 1, "USDC", (FeeTier(7, 1, 5),), now=0.0)
    with pytest.raises(NoRoute):
        engine.fee_tiers(1, 1, "USDC")
    assert engine.last_event_id == 0


def test_new_tiers_price_new_quotes(engine: Engine, usdc: dict[int, str]):
    engine.set_fee_tiers(1, 10, "USDC", (FeeTier(40, 1, 10**12),), now=0.0)
    assert engine.quote(1, 10, usdc[10], 10**9, 1.0).fee_bps == 40


def test_retention_drops_old_events(single_scenario: Scenario):
    engine = Engine(single_scenario, max_events=10)
    for i in range(6000):
        engine.reserve("8453:USDC:usdc", 1, float(i), 0.5)
    assert engine.last_event_id == 12_000 - 1  # the last release is still due
    kept = engine.events_since(engine.last_event_id - 10)
    assert [e.id for e in kept] == list(range(engine.last_event_id - 9, engine.last_event_id + 1))
    with pytest.raises(EventsTruncated, match="event_id: events up to"):
        engine.events_since(0)


def test_direct_fills_are_their_own_kind(single: Engine, usdc: dict[int, str]):
    terms = OrderTerms(1, usdc[1], UNIT, 8453, usdc[8453], UNIT)
    single.fill("0x1", 0.0, terms)
    event = single.events_since(0)[-1]
    assert (event.kind, event.reserved, event.outstanding) == ("filled_direct", 0, UNIT)


def test_holds_are_numbered_with_quotes_and_logged_under_their_id(
    single: Engine, usdc: dict[int, str]
):
    first = single.reserve("8453:USDC:usdc", UNIT, 0.0, 2.0)
    q = single.quote(1, 8453, usdc[8453], UNIT, 0.5, kind=EXACT_OUTPUT)
    second = single.reserve("8453:USDC:usdc", UNIT, 1.0, 2.0)
    assert (first, q.quote_id, second) == (1, "qt_0_2", 3)
    held = single.reservation("rs_0_3", 1.5)
    assert held is not None and (held.key, held.kind, held.expires_at) == ("rs_0_3", "hold", 3.0)
    for unknown in ("rs_0_03", "rs_0_", "rs_0_x", "rs_1_3", "rs_0_\u0663", "rs_0_" + "9" * 5000):
        assert single.reservation(unknown, 1.5) is None
    single.advance(5.0)
    assert single.reservation("rs_0_3", 5.0) is None
    assert [(e.kind, e.key) for e in single.events_since(0) if e.key.startswith("rs_")] == [
        ("created", "rs_0_1"),
        ("created", "rs_0_3"),
        ("released", "rs_0_1"),
        ("released", "rs_0_3"),
    ]


def test_max_events_zero_keeps_no_event_but_counts_them(single_scenario: Scenario):
    engine = Engine(single_scenario, max_events=0)
    for i in range(10):
        engine.reserve("8453:USDC:usdc", UNIT, float(i), 0.5)
    engine.advance(20.0)
    assert engine.last_event_id == 20
    assert engine.events_since(20) == []
    with pytest.raises(EventsTruncated, match=r"events up to 20 were dropped \(max_events=0\)"):
        engine.events_since(19)


def test_reserve_rejects_bad_arguments_and_changes_nothing(single: Engine):
    single.advance(5.0)
    for now, lifetime, message in [
        ("soon", 1.0, "now: must be a number of seconds"),
        (4.0, 1.0, r"now: 4\.0 is earlier than the engine's clock 5\.0"),
        (6.0, 0.0, "lifetime: must be a positive finite number of seconds"),
        (6.0, "1", "lifetime: must be a positive finite number of seconds"),
    ]:
        with pytest.raises(InvalidArgument, match=message):
            single.reserve("8453:USDC:usdc", UNIT, now, lifetime)  # type: ignore[arg-type]
    assert single.clock == 5.0 and single.last_event_id == 0
