"""Reservations lapse in order of expiry, and those ending at the same instant in creation order.

Quotes made with the default window are scheduled by whole second, every other reservation
(holds, orders, quotes with ``hold=``) on its own: the order of the ``released`` events must not
show the difference.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.engine import EXACT_OUTPUT, CapacityExhausted, Engine
from toolkit.scenario import Scenario

POOL = "8453:USDC:usdc"
UNIT = 1_000 * 10**6


def _released(engine: Engine) -> list[tuple[float, str]]:
    return [(e.time, e.key) for e in engine.events_since(0) if e.kind == "released"]


def test_ties_at_a_whole_second_lapse_in_creation_order(single: Engine, usdc: dict[int, str]):
    token = usdc[8453]
    first = single.reserve(POOL, UNIT, 0.0, 15.0)  # ends at 15.0, on its own
    a = single.quote(1, 8453, token, UNIT, 0.1, kind=EXACT_OUTPUT)  # validUntil 15, grouped
    second = single.reserve(POOL, UNIT, 0.25, 14.75)  # ends at 15.0 too
    b = single.quote(1, 8453, token, UNIT, 0.3, kind=EXACT_OUTPUT)
    c = single.quote(1, 8453, token, UNIT, 0.4, kind=EXACT_OUTPUT, hold=14.6)  # 15.0, on its own
    assert (a.valid_until, b.valid_until, c.expires_at) == (15, 15, 15.0)
    single.advance(15.0)
    assert _released(single) == [
        (15.0, f"rs_0_{first}"),
        (15, a.quote_id),
        (15.0, f"rs_0_{second}"),
        (15, b.quote_id),
        (15.0, c.quote_id),
    ]


def test_an_order_and_a_later_quote_ending_together(single: Engine, usdc: dict[int, str]):
    token = usdc[8453]
    q = single.quote(1, 8453, token, UNIT, 9.0, kind=EXACT_OUTPUT)
    assert single.convert(q.quote_id, "0xa", 10.0)  # the order reservation ends at 70.0
    later = single.quote(1, 8453, token, UNIT, 55.0, kind=EXACT_OUTPUT)  # validUntil 70
    single.advance(80.0)
    assert _released(single) == [(70.0, "0xa"), (70, later.quote_id)]


STEP = st.tuples(
    st.sampled_from(["quote", "hold", "quote_hold", "convert"]),
    st.sampled_from([0.0, 0.25, 0.5, 1.0]),  # time step
    # Lifetimes of holds: most end on the whole second a quote made then would end on.
    st.sampled_from([14.5, 14.75, 15.0, 15.25, 60.0]),
)


@settings(max_examples=100, deadline=None)
@given(steps=st.lists(STEP, min_size=1, max_size=40))
def test_release_order_is_expiry_then_creation(single_scenario: Scenario, steps):
    engine = Engine(single_scenario)
    token = single_scenario.token(8453, "USDC").address
    now, quotes = 0.0, []
    for i, (action, dt, lifetime) in enumerate(steps):
        now += dt
        try:
            if action == "quote":
                quotes.append(engine.quote(1, 8453, token, 10**6, now).quote_id)
            elif action == "quote_hold":
                engine.quote(1, 8453, token, 10**6, now, hold=lifetime)
            elif action == "hold":
                engine.reserve(POOL, 10**6, now, lifetime)
            elif quotes:
                engine.convert(quotes.pop(0), f"0x{i:x}", now)
        except CapacityExhausted:
            pass
    engine.advance(now + 100.0)
    events = engine.events_since(0)
    made = {}  # key -> position of the event that (re)made its reservation
    for position, event in enumerate(events):
        if event.kind in ("created", "rekeyed"):
            made[event.key] = position
    released = [(e.time, made[e.key]) for e in events if e.kind == "released"]
    assert released == sorted(released)
    assert len(released) == len(made) - sum(1 for e in events if e.kind == "rekeyed")
