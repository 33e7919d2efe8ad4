import dataclasses
from typing import Any

import pytest

from toolkit.engine import (
    EXACT_OUTPUT,
    CapacityExhausted,
    Engine,
    InvalidArgument,
    NoRoute,
    exact_input,
    exact_output,
)
from toolkit.scenario import Scenario

UNIT = 1_000 * 10**6  # the single-pool scenario's amount class: 1,000 USDC
SINGLE_POOL = "8453:USDC:usdc"


def test_exact_input_quote(engine: Engine, usdc: dict[int, str]):
    q = engine.quote(1, 8453, usdc[8453], 1_000 * 10**6, now=100.4)
    assert q.quote_id == "qt_0_1"
    assert (q.kind, q.src_chain, q.dst_chain, q.symbol) == ("ExactInput", 1, 8453, "USDC")
    assert (q.src_token, q.dst_token) == (usdc[1], usdc[8453])
    assert q.valid_until == 115 and q.expires_at == 115
    assert q.eta == 36 + 2 and q.quote_duration == 15
    fill_cost = engine.scenario.fill_cost(8453, "USDC")
    assert (q.input_amount, q.output_amount, q.fee) == exact_input(1_000 * 10**6, 5, fill_cost)
    assert q.fee_bps == 5 and q.fill_cost == fill_cost == 50_000
    assert q.borrow_cost == q.fee + q.fill_cost


def test_exact_output_quote(engine: Engine, usdc: dict[int, str]):
    q = engine.quote(8453, 1, usdc[1], 2_000 * 10**6, now=0.0, kind=EXACT_OUTPUT)
    assert q.output_amount == 2_000 * 10**6
    assert (q.input_amount, q.output_amount, q.fee) == exact_output(2_000 * 10**6, 5, 1_500_000)


def test_tier_by_size(engine: Engine, usdc: dict[int, str]):
    small = engine.quote(1, 10, usdc[10], 99_999 * 10**6, now=0.0)
    large = engine.quote(1, 10, usdc[10], 100_000 * 10**6, now=0.0)
    assert (small.fee_bps, large.fee_bps) == (5, 3)


def test_token_case_does_not_matter_and_src_token_is_checked(
    engine: Engine, usdc: dict[int, str], weth: dict[int, str]
):
    q = engine.quote(1, 42161, weth[42161].lower(), 10**18, now=0.0, src_token=weth[1].upper())
    assert q.symbol == "WETH" and q.dst_token == weth[42161]
    with pytest.raises(NoRoute, match=f"src_token: {usdc[1]} is not WETH on chain 1"):
        engine.quote(1, 42161, weth[42161], 10**18, now=0.0, src_token=usdc[1])


def test_no_route_errors_name_the_problem(engine: Engine, usdc: dict[int, str]):
    with pytest.raises(NoRoute, match="no route from chain 1 to chain 1 for USDC"):
        engine.quote(1, 1, usdc[1], 10**9, now=0.0)
    with pytest.raises(NoRoute, match="token: 0x0000000000000000000000000000000000000001 is not"):
        engine.quote(1, 10, "0x" + "00" * 19 + "01", 10**9, now=0.0)
    with pytest.raises(NoRoute, match="no route from chain 137 to chain 10 for USDC"):
        engine.quote(137, 10, usdc[10], 10**9, now=0.0)
    assert NoRoute.status == 400 and CapacityExhausted.status == 404


def test_amounts_outside_every_tier_are_named(engine: Engine, usdc: dict[int, str]):
    with pytest.raises(
        NoRoute, match=r"amount: 9999999 is outside the route's limits \[10000000, "
    ):
        engine.quote(1, 10, usdc[10], 9_999_999, now=0.0)
    with pytest.raises(NoRoute, match="amount: 1000000000001 is outside"):
        engine.quote(1, 10, usdc[10], 10**12 + 1, now=0.0)


def test_amounts_that_do_not_cover_the_fill_cost(engine: Engine, weth: dict[int, str]):
    dust = 5 * 10**15  # 0.005 WETH, the smallest WETH amount: 15 USD at 3000 USD/WETH
    assert engine.quote(10, 1, weth[1], dust, now=0.0).output_amount > 0
    costly = Engine(_with_fill_cost(engine.scenario, "20"))  # Ethereum fills cost 20 USD
    with pytest.raises(NoRoute, match="amount: 5000000000000000 does not cover the fee and the"):
        costly.quote(10, 1, weth[1], dust, now=0.0)


def _with_fill_cost(scenario: Scenario, usd: str) -> Scenario:
    from decimal import Decimal

    chains = tuple(
        dataclasses.replace(c, fill_cost_usd=Decimal(usd)) if c.id == 1 else c
        for c in scenario.chains
    )
    return dataclasses.replace(scenario, chains=chains)


def test_invalid_arguments_name_the_field(engine: Engine, usdc: dict[int, str]):
    cases: list[tuple[tuple[Any, ...], dict[str, Any], str]] = [
        ((1, 10, usdc[10], "100", 0.0), {}, "amount: must be a positive integer"),
        ((1, 10, usdc[10], 0, 0.0), {}, "amount: must be a positive integer"),
        ((1, 10, usdc[10], True, 0.0), {}, "amount: must be a positive integer"),
        ((1, 10, usdc[10], 10**9, 0.0), {"kind": "Exact"}, "kind: must be one of"),
        ((1, 10, None, 10**9, 0.0), {}, "token: must be a token address"),
        (("1", 10, usdc[10], 10**9, 0.0), {}, "src_chain: must be an integer chain id"),
        ((1, "10", usdc[10], 10**9, 0.0), {}, "dst_chain: must be an integer chain id"),
        ((1, 10, usdc[10], 10**9, "now"), {}, "now: must be a number of seconds"),
        ((1, 10, usdc[10], 10**9, float("nan")), {}, "now: must be a finite number"),
        ((1, 10, usdc[10], 10**9, 0.0), {"hold": 0}, "hold: must be a positive finite"),
    ]
    for args, kwargs, message in cases:
        with pytest.raises(InvalidArgument, match=message):
            engine.quote(*args, **kwargs)
    assert engine.last_event_id == 0
    assert all(p.reserved == 0 for p in engine.pools(0.0))


def test_time_never_goes_backwards(engine: Engine, usdc: dict[int, str]):
    engine.advance(10.0)
    with pytest.raises(
        InvalidArgument, match=r"now: 9\.0 is earlier than the engine.s clock 10\.0"
    ):
        engine.quote(1, 10, usdc[10], 10**9, now=9.0)
    assert engine.clock == 10.0


def test_the_pool_with_most_available_liquidity_serves(engine: Engine, usdc: dict[int, str]):
    # Base USDC: usdc pool 4M, aave pool 2.5M.
    first = engine.quote(1, 8453, usdc[8453], 1_000_000 * 10**6, now=0.0, kind=EXACT_OUTPUT)
    assert first.pool == "8453:USDC:usdc"
    second = engine.quote(1, 8453, usdc[8453], 1_000_000 * 10**6, now=0.0, kind=EXACT_OUTPUT)
    assert second.pool == "8453:USDC:usdc"  # 3M left there against 2.5M
    third = engine.quote(1, 8453, usdc[8453], 1_000_000 * 10**6, now=0.0, kind=EXACT_OUTPUT)
    assert (
        third.pool == "8453:USDC:aave"
        and third.pool_address == engine.pool(third.pool, 0.0).address
    )


def test_no_capacity_when_no_single_pool_can_serve(engine: Engine, usdc: dict[int, str]):
    big = 1_000_000 * 10**6
    for _ in range(5):
        engine.quote(10, 42161, usdc[42161], big, now=0.0, kind=EXACT_OUTPUT)
    # Arbitrum: 3M + 2M = 5M reserved in full; 1 USDC more fails as capacity, not validity.
    with pytest.raises(
        CapacityExhausted, match="no pool can serve 10000000 USDC on chain 42161 now"
    ):
        engine.quote(10, 42161, usdc[42161], 10 * 10**6, now=1.0, kind=EXACT_OUTPUT)


def test_utilization_premium_applies_after_the_kink(
    single_scenario: Scenario, usdc: dict[int, str]
):
    pricing = dataclasses.replace(
        single_scenario.pricing, utilization_kink_bps=5_000, premium_max_bps=100
    )
    engine = Engine(dataclasses.replace(single_scenario, pricing=pricing))
    fees = []
    for i in range(15):
        q = engine.quote(1, 8453, usdc[8453], UNIT, now=float(i), kind=EXACT_OUTPUT)
        fees.append(q.fee_bps)
    # Utilization after the quote is (i+1)/15; the premium is ceil(100 * (u - .5) / .5).
    expected = [
        max(0, -(-100 * ((i + 1) * 10_000 - 5_000 * 15) // (5_000 * 15))) for i in range(15)
    ]
    assert fees == expected
    assert fees[0] == 0 and fees[-1] == 100


def test_ids_are_deterministic_and_seeded(single_scenario: Scenario, usdc: dict[int, str]):
    a, b = Engine(single_scenario), Engine(single_scenario)
    ids_a = [a.quote(1, 8453, usdc[8453], UNIT, float(i)).quote_id for i in range(3)]
    ids_b = [b.quote(1, 8453, usdc[8453], UNIT, float(i)).quote_id for i in range(3)]
    assert ids_a == ids_b == ["qt_0_1", "qt_0_2", "qt_0_3"]
    seeded = Engine(single_scenario, seed=7).quote(1, 8453, usdc[8453], UNIT, 0.0)
    assert seeded.quote_id == "qt_7_1"


def test_hold_sets_the_lifetime(single: Engine, usdc: dict[int, str]):
    q = single.quote(1, 8453, usdc[8453], UNIT, now=10.25, hold=2.5)
    assert q.expires_at == 12.75 and q.valid_until == 12
    assert single.pool(SINGLE_POOL, 12.7).reserved == UNIT
    assert single.pool(SINGLE_POOL, 12.75).reserved == 0


def test_constructor_checks():
    with pytest.raises(InvalidArgument, match=r"scenario: must be a toolkit\.scenario\.Scenario"):
        Engine("default")  # type: ignore[arg-type]


def test_constructor_checks_numbers(single_scenario: Scenario):
    with pytest.raises(InvalidArgument, match="seed: must be a non-negative integer"):
        Engine(single_scenario, seed=-1)
    with pytest.raises(InvalidArgument, match="max_events: must be None or a non-negative integer"):
        Engine(single_scenario, max_events=-1)
