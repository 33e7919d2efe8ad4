"""Engine.quoter: the route resolved once, the same quotes, errors and state as Engine.quote."""

import random

import pytest

from toolkit.engine import (
    EXACT_INPUT,
    EXACT_OUTPUT,
    CapacityExhausted,
    Engine,
    InvalidArgument,
    NoRoute,
)
from toolkit.scenario import Scenario


def _requests(usdc: dict[int, str], weth: dict[int, str]) -> list[tuple]:
    """A mixed, seeded stream: three routes (two with two pools), both kinds, sizes up to
    pool-filling, times rising with ties and whole seconds (lapses meet new quotes)."""
    rng = random.Random(5)
    routes = [(1, 8453, usdc[8453], 6), (1, 10, usdc[10], 6), (8453, 42161, weth[42161], 18)]
    out, t = [], 0.0
    for _ in range(3_000):
        t += rng.choice((0.0, 0.5, rng.expovariate(4.0)))
        src, dst, token, decimals = rng.choice(routes)
        amount = int(rng.uniform(1, 400_000 if decimals == 6 else 60) * 10**decimals)
        out.append((src, dst, token, amount, t, rng.choice((EXACT_INPUT, EXACT_OUTPUT))))
    return out


def _outcome(call, *args, **kwargs) -> object:
    try:
        return call(*args, **kwargs)
    except (CapacityExhausted, NoRoute) as exc:
        return (type(exc).__name__, str(exc))


def test_quoter_gives_the_same_quotes_and_state_as_quote(
    default_scenario: Scenario, usdc: dict[int, str], weth: dict[int, str]
):
    direct, batched = Engine(default_scenario, seed=3), Engine(default_scenario, seed=3)
    quoters: dict[tuple, object] = {}
    seen = set()
    for src, dst, token, amount, t, kind in _requests(usdc, weth):
        a = _outcome(direct.quote, src, dst, token, amount, t, kind=kind)
        key = (src, dst, token, kind)
        if key not in quoters:
            quoters[key] = batched.quoter(src, dst, token, kind=kind)
        b = _outcome(quoters[key], amount, t)
        assert a == b
        seen.add(type(a).__name__)
    # The stream reached both answers, and every lapse and event happened alike.
    assert seen == {"ReservedQuote", "tuple"}
    assert direct.events_since(0) == batched.events_since(0)
    assert direct.pools(t) == batched.pools(t)


def test_quoter_reservation_converts_like_a_quote(single_scenario: Scenario, usdc: dict[int, str]):
    engine = Engine(single_scenario)
    q = engine.quoter(1, 8453, usdc[8453])(10**9, 0.0)
    reservation = engine.reservation(q.quote_id, 1.0)
    assert reservation is not None and reservation.kind == "quote"
    assert engine.convert(q.quote_id, "0x01", 1.0)
    assert engine.fill("0x01", 40.0).reserved


def test_quoter_refuses_bad_input_and_changes_nothing(
    default_scenario: Scenario, usdc: dict[int, str]
):
    engine = Engine(default_scenario)
    with pytest.raises(NoRoute, match="no route from chain 1 to chain 1 for USDC"):
        engine.quoter(1, 1, usdc[1])
    with pytest.raises(InvalidArgument, match="kind: must be one of ExactInput, ExactOutput"):
        engine.quoter(1, 10, usdc[10], kind="ExactIn")
    quote = engine.quoter(1, 10, usdc[10])
    with pytest.raises(InvalidArgument, match="amount: must be a positive integer"):
        quote(0, 1.0)
    with pytest.raises(InvalidArgument, match=r"now: 0\.5 is earlier than the engine's clock 1\.0"):
        quote(10**9, 0.5)
    with pytest.raises(NoRoute, match=r"amount: 1 is outside the route's limits"):
        quote(1, 1.0)
    assert engine.last_event_id == 0
    assert {p.reserved for p in engine.pools(1.0)} == {0}
