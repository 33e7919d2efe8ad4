"""The AMM pool contracts and the Universal Router on a simulated ledger, called by calldata."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import eth_abi
import pytest
from eth_utils import function_signature_to_4byte_selector
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.amm.v2 import get_amount_out
from toolkit.chain.guard import check_swap_route
from toolkit.codecs import universal_router as ur
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.events import EVENTS
from toolkit.codecs.functions import decode_result, encode_call
from toolkit.scenario import load_scenario
from toolkit.world.evm import Chains, Execution, Ledger, Revert
from toolkit.world.evm.amm import V2PairContract, V3PoolContract
from toolkit.world.evm.gas import EXECUTION, intrinsic
from toolkit.world.evm.markets import market_for
from toolkit.world.evm.router import GAS_PER_COMMAND
from toolkit.world.evm.tokens import ERC20
from toolkit.world.swap import NATIVE, NoSwapRoute, SwapRoute, find_route

T0 = 1_760_000_000.0
DEV = "0x" + "d0" * 20


@pytest.fixture(scope="module")
def chains() -> Chains:
    return Chains(load_scenario("default"), genesis=T0)


@pytest.fixture
def ledger(chains: Chains) -> Ledger:
    return copy.deepcopy(chains.ledger(1))


def _call(ledger: Ledger, to: str, key: str, *args: object) -> tuple[Any, ...]:
    data = encode_call(key, *args)
    result = ledger.call(DEV, to, bytes.fromhex(data[2:]), 0, T0)
    return decode_result(key, result.output)


def _pools(ledger: Ledger) -> tuple[list[V2PairContract], list[V3PoolContract]]:
    contracts = ledger.state.contracts.values()
    return (
        [c for c in contracts if isinstance(c, V2PairContract)],
        [c for c in contracts if isinstance(c, V3PoolContract)],
    )


def _token(ledger: Ledger, address: str) -> ERC20:
    token = ledger.state.contracts[address.lower()]
    assert isinstance(token, ERC20)
    return token


def test_every_market_pool_is_deployed_and_funded(ledger: Ledger) -> None:
    market = market_for(load_scenario("default"), 1)
    assert market is not None
    pairs, pools = _pools(ledger)
    assert len(pairs) + len(pools) == len(market.pools) == 8
    for pair in pairs:
        r0, r1, _ = _call(ledger, pair.address, "v2pair.getReserves")
        assert _token(ledger, pair.token0_address).balances[pair.address] == r0 > 0
        assert _token(ledger, pair.token1_address).balances[pair.address] == r1 > 0
    for pool in pools:
        sqrt_price, tick, *_ = _call(ledger, pool.address, "v3pool.slot0")
        assert (sqrt_price, tick) == (pool.pool.sqrt_price_x96, pool.pool.tick)
        assert _call(ledger, pool.address, "v3pool.fee") == (pool.pool.fee,)
        assert _call(ledger, pool.address, "v3pool.liquidity") == (pool.pool.liquidity,)
        token0 = _call(ledger, pool.address, "amm.token0")[0]
        assert str(token0).lower() == pool.token0_address
        lowest = min(pool.pool.ticks)
        gross, net, *_, initialised = _call(ledger, pool.address, "v3pool.ticks", lowest)
        assert initialised and gross > 0 and net == gross  # a lower tick adds its liquidity
        assert _call(ledger, pool.address, "v3pool.ticks", lowest + 1)[-1] is False


def _fund(ledger: Ledger, token: str, amount: int, approve: bool = True) -> None:
    run = ledger.direct(T0)
    contract = _token(ledger, token)
    contract.mint(run, DEV, amount)
    if approve:
        contract.allowances[(DEV, ur.UNIVERSAL_ROUTER.lower())] = amount


def _execute(ledger: Ledger, commands: list[ur.Command], deadline: int = 2**40) -> Execution:
    data = bytes.fromhex(ur.encode_execute(commands, deadline=deadline)[2:])
    run = Execution(ledger.state, timestamp=int(T0), number=1)
    run.call(DEV, ur.UNIVERSAL_ROUTER.lower(), data)
    return run


def test_v2_exact_in_pays_get_amount_out_and_emits_sync_and_swap(ledger: Ledger) -> None:
    pairs, _ = _pools(ledger)
    pair = next(p for p in pairs if p.spec.label == "USDC/WETH v2")
    usdc, weth = pair.spec.token0.address, pair.spec.token1.address  # USDC sorts first
    _fund(ledger, usdc, 10**9)
    r0, r1 = pair.reserves["0"], pair.reserves["1"]
    expected = get_amount_out(10**9, r0, r1)
    before = _token(ledger, weth).balances.get(DEV, 0)
    run = _execute(ledger, [ur.V2SwapExactIn(ur.MSG_SENDER, 10**9, expected, (usdc, weth), True)])
    assert _token(ledger, weth).balances[DEV] - before == expected
    assert (pair.reserves["0"], pair.reserves["1"]) == (r0 + 10**9, r1 - expected)
    names = [log.topics[0] for log in run.logs]
    assert EVENTS["v2pair.Sync"].topic0 in names and EVENTS["v2pair.Swap"].topic0 in names


def test_v3_swap_below_its_minimum_reverts_and_changes_nothing(ledger: Ledger) -> None:
    _, pools = _pools(ledger)
    pool = next(p for p in pools if p.spec.label == "USDC/WETH v3 5bps")
    usdc, weth = pool.spec.token0.address, pool.spec.token1.address
    _fund(ledger, usdc, 10**10)
    price, held = pool.pool.sqrt_price_x96, _token(ledger, usdc).balances[DEV]
    quote = -pool.pool.quote(True, 10**10, 4295128740)[1]
    data = ur.encode_execute(
        [ur.V3SwapExactIn(ur.MSG_SENDER, 10**10, quote + 1, (usdc, 500, weth), True)],
        deadline=2**40,
    )
    with pytest.raises(Revert) as caught:
        ledger.call(DEV, ur.UNIVERSAL_ROUTER.lower(), bytes.fromhex(data[2:]), 0, T0)
    assert caught.value.data == function_signature_to_4byte_selector("V3TooLittleReceived()")
    assert pool.pool.sqrt_price_x96 == price
    assert _token(ledger, usdc).balances[DEV] == held

    before = _token(ledger, weth).balances.get(DEV, 0)
    _execute(ledger, [ur.V3SwapExactIn(ur.MSG_SENDER, 10**10, quote, (usdc, 500, weth), True)])
    assert _token(ledger, weth).balances[DEV] - before == quote
    assert pool.pool.sqrt_price_x96 < price
    assert _token(ledger, usdc).balances[DEV] == held - 10**10


def test_deadline_allowance_and_unknown_pool_revert(ledger: Ledger) -> None:
    _, pools = _pools(ledger)
    pool = pools[0]
    usdc, weth = pool.spec.token0.address, pool.spec.token1.address
    swap = ur.V3SwapExactIn(ur.MSG_SENDER, 10**6, 0, (usdc, 500, weth), True)
    with pytest.raises(Revert) as late:
        _execute(ledger, [swap], deadline=int(T0) - 1)
    assert late.value.reason == "TransactionDeadlinePassed"
    _fund(ledger, usdc, 10**6, approve=False)
    with pytest.raises(Revert, match="insufficient allowance"):
        _execute(ledger, [swap])
    _fund(ledger, usdc, 10**6)
    with pytest.raises(Revert, match="no pool"):
        _execute(ledger, [ur.V3SwapExactIn(ur.MSG_SENDER, 10**6, 0, (usdc, 77, weth), True)])


def test_sweep_and_unwrap_check_their_minimum(ledger: Ledger) -> None:
    usdc = market_for(load_scenario("default"), 1).tokens["USDC"].address  # type: ignore[union-attr]
    with pytest.raises(Revert) as short:
        _execute(ledger, [ur.Sweep(usdc, ur.MSG_SENDER, 1)])
    assert short.value.reason == "InsufficientToken"
    with pytest.raises(Revert) as short:
        _execute(ledger, [ur.UnwrapWeth(ur.MSG_SENDER, 1)])
    assert short.value.reason == "InsufficientETH"


def test_router_gas_is_intrinsic_plus_fixed_plus_per_hop(ledger: Ledger) -> None:
    a, b, c = "0x" + "0a" * 20, "0x" + "0b" * 20, "0x" + "0c" * 20
    commands: list[ur.Command] = [
        ur.V3SwapExactIn(ur.ADDRESS_THIS, 5, 0, (a, 500, b, 3000, c), True),
        ur.V2SwapExactIn(ur.ADDRESS_THIS, ur.CONTRACT_BALANCE, 0, (c, a), False),
        ur.Sweep(a, ur.MSG_SENDER, 1),
    ]
    data = bytes.fromhex(ur.encode_execute(commands, deadline=5)[2:])
    expected = (
        intrinsic(data)
        + EXECUTION["universalRouter.execute"]
        + 2 * GAS_PER_COMMAND["v3_hop"]
        + GAS_PER_COMMAND["v2_hop"]
        + GAS_PER_COMMAND["sweep"]
    )
    assert ledger.gas_of(ur.UNIVERSAL_ROUTER.lower(), data) == expected


def test_codec_round_trips_and_refuses_what_it_does_not_run() -> None:
    a, b = "0x" + "0A" * 20, "0x" + "0B" * 20
    commands = (
        ur.WrapEth(ur.ADDRESS_THIS, ur.CONTRACT_BALANCE),
        ur.V2SwapExactIn(ur.ADDRESS_THIS, 7, 0, (a.lower(), b.lower()), False),
        ur.UnwrapWeth(ur.MSG_SENDER, 3),
    )
    decoded, deadline = ur.decode_execute(ur.encode_execute(commands, deadline=9))
    assert deadline == 9 and len(decoded) == 3
    assert isinstance(decoded[1], ur.V2SwapExactIn) and decoded[1].amount_in == 7
    with pytest.raises(InvalidValue, match="unsupported command 0x10"):
        ur.decode_commands(b"\x10", [b""])
    with pytest.raises(InvalidValue, match="flags"):
        ur.decode_commands(b"\x80", [b""])
    with pytest.raises(InvalidValue, match="one input per command"):
        ur.decode_commands(b"\x00\x04", [b""])
    with pytest.raises(InvalidValue, match="malformed"):
        ur.decode_commands(b"\x04", [eth_abi.encode(["uint8"], [1])])
    with pytest.raises(InvalidValue, match="token, fee, token"):
        ur.encode_v3_path((a, 500))


# --- the calldata guard on real routes --------------------------------------------------------


def _route_case(ledger: Ledger, a: str, b: str, amount: int) -> tuple[SwapRoute, dict[str, Any]]:
    market = market_for(load_scenario("default"), 1)
    assert market is not None
    address = {s: t.address.lower() for s, t in market.tokens.items()} | {"ETH": NATIVE}
    route = find_route(ledger, address[a], address[b], amount, slippage_bps=40, now=T0)
    quote: dict[str, Any] = {
        "token_in": address[a],
        "token_out": address[b],
        "weth": address["WETH"],
        "amount_in": amount,
        "amount_out": route.amount_out,
        "min_amount_out": route.min_amount_out,
        "value": route.value,
        "slippage_bps": 40,
        "now": int(T0),
    }
    return route, quote


@pytest.mark.parametrize(
    ("a", "b", "amount"),
    [
        ("USDC", "WETH", 30_000_000 * 10**6),
        ("USDC", "TAILB", 2_000 * 10**6),
        ("ETH", "USDT", 10**18),
        ("USDC", "ETH", 5_000 * 10**6),
        ("USDT", "USDC", 10**6),
    ],
)
def test_the_guard_accepts_every_route_the_service_builds(
    ledger: Ledger, a: str, b: str, amount: int
) -> None:
    route, quote = _route_case(ledger, a, b, amount)
    assert check_swap_route(route.target, route.call_data, **quote) == []


def _retarget(data: str, change: Callable[[ur.Command], ur.Command]) -> str:
    commands, deadline = ur.decode_execute(data)
    return ur.encode_execute([change(c) for c in commands], deadline=deadline)


THIEF = "0x" + "ee" * 20


@pytest.mark.parametrize(
    ("tamper", "mentions"),
    [
        (lambda c: replace(c, recipient=THIEF) if isinstance(c, ur.Sweep) else c, "third party"),
        (lambda c: replace(c, amount_min=1) if isinstance(c, ur.Sweep) else c, "guarantees 1"),
        (
            lambda c: (
                replace(c, amount_in=c.amount_in * 2)
                if isinstance(c, ur.V3SwapExactIn | ur.V2SwapExactIn) and c.payer_is_user
                else c
            ),
            "takes",
        ),
    ],
)
def test_the_guard_catches_tampered_calldata(
    ledger: Ledger, tamper: Callable[[Any], ur.Command], mentions: str
) -> None:
    route, quote = _route_case(ledger, "USDC", "WETH", 30_000_000 * 10**6)
    assert len(route.route.splits) > 1  # a split route ends with a sweep
    findings = check_swap_route(route.target, _retarget(route.call_data, tamper), **quote)
    assert any(mentions in str(f) for f in findings), findings


def test_the_guard_checks_target_value_minimum_and_deadline(ledger: Ledger) -> None:
    route, quote = _route_case(ledger, "ETH", "USDT", 10**18)
    bad = {**quote, "value": 0, "now": 2**40, "min_amount_out": quote["amount_out"] + 1}
    findings = [str(f) for f in check_swap_route(THIEF, route.call_data, **bad)]
    for mentions in ("target", "value", "deadline", "more than amountOut", "not amountOut less"):
        assert any(mentions in f for f in findings), (mentions, findings)
    assert check_swap_route(route.target, "0x1234", **quote)[0].field == "callData"


_SYMBOLS = ("ETH", "USDC", "WETH", "USDT", "WBTC", "TAILA", "TAILB")


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pair=st.lists(st.sampled_from(_SYMBOLS), min_size=2, max_size=2, unique=True),
    usd=st.floats(min_value=1.0, max_value=10_000_000.0),
    slippage=st.integers(min_value=0, max_value=10_000),
)
def test_every_route_is_exact_guarded_and_priced_as_the_spec_says(
    ledger: Ledger, pair: list[str], usd: float, slippage: int
) -> None:
    a, b = pair
    if {a, b} == {"ETH", "WETH"}:
        return  # the native coin trades as WETH: the same token
    market = market_for(load_scenario("default"), 1)
    assert market is not None
    token = market.tokens["WETH" if a == "ETH" else a]
    amount = max(1, int(usd / float(token.price_usd) * 10**token.decimals))
    address = {s: t.address.lower() for s, t in market.tokens.items()} | {"ETH": NATIVE}
    try:
        route = find_route(ledger, address[a], address[b], amount, slippage_bps=slippage, now=T0)
    except NoSwapRoute:
        return
    # find_route already ran the calldata on the unchanged state and compared the output to
    # amountOut to the wei (a mismatch raises RuntimeError, failing this test).
    assert route.min_amount_out == route.amount_out * (10_000 - slippage) // 10_000
    assert route.gas_limit == route.gas_used * 13 // 10
    assert route.amount_out == sum(split.amount_out for split in route.route.splits)
    assert sum(split.amount_in for split in route.route.splits) == amount
    assert len(route.route.splits) <= 4
    assert all(len(split.path) <= 3 for split in route.route.splits)
    quote: dict[str, Any] = {
        "token_in": address[a],
        "token_out": address[b],
        "weth": address["WETH"],
        "amount_in": amount,
        "amount_out": route.amount_out,
        "min_amount_out": route.min_amount_out,
        "value": route.value,
        "slippage_bps": slippage,
    }
    assert check_swap_route(route.target, route.call_data, **quote) == []
