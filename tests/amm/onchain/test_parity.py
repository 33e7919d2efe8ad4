"""Differential parity: ``toolkit.amm`` pools rebuilt from a snapshot against Uniswap's own
bytecode on anvil, operation by operation, to the wei.

Seeded random swaps (exact input with and without a price limit, exact output, both
directions, many crossing dozens of initialised ticks) and mints go to the node through the
published ``SwapRouter`` and ``NonfungiblePositionManager``, and the same operations to the
pool rebuilt from the snapshot taken before them. After every operation the amounts, price,
tick, in-range liquidity and fee growth must be equal; every 20 operations and at the end the
whole tick table (liquidity and fee growth outside of every initialised tick) is read again
and compared. V2: the pair accepts exactly ``get_amount_out`` and reverts ``UniswapV2: K``
one wei above it.
"""

from __future__ import annotations

import random

import pytest
from eth_abi import encode
from eth_utils import function_signature_to_4byte_selector
from web3.contract import Contract
from web3.types import RPCEndpoint

from tests.amm.onchain.conftest import Market
from toolkit.amm.snapshot import pool_from_snapshot
from toolkit.amm.v2 import Pair
from toolkit.amm.v3 import MAX_SQRT_RATIO, MAX_TICK, MIN_SQRT_RATIO, Pool
from toolkit.amm.v3 import get_sqrt_ratio_at_tick as sqrt_at
from toolkit.collect.pool_state import MULTICALL3, PoolRef, StateReader, read_pool_states
from toolkit.models.real_routes import GasModel
from toolkit.testing.uniswap import MINT_TOPIC, Uniswap

OPERATIONS = 90  # per pool, three pools
FULL_CHECK_EVERY = 20


def _read(market: Market, pool: Contract) -> tuple[dict, list]:
    reader = StateReader(market.w3, market.w3.eth.block_number, multicall=MULTICALL3)
    rows, ticks = read_pool_states(
        reader, [PoolRef(pool.address, "v3", "", "", 0)], depth_ticks=2 * MAX_TICK
    )
    return rows[0], ticks[pool.address]


def _state(pool: Pool) -> tuple[int, ...]:
    return (
        pool.sqrt_price_x96,
        pool.tick,
        pool.liquidity,
        pool.fee_growth_global0_x128,
        pool.fee_growth_global1_x128,
    )


def _chain_state(row: dict) -> tuple[int, ...]:
    return tuple(
        int(row[k])
        for k in (
            "sqrt_price_x96",
            "tick",
            "liquidity",
            "fee_growth_global0_x128",
            "fee_growth_global1_x128",
        )
    )


def _table(pool: Pool) -> list[tuple[int, ...]]:
    return sorted(
        (
            t,
            i.liquidity_net,
            i.liquidity_gross,
            i.fee_growth_outside0_x128,
            i.fee_growth_outside1_x128,
        )
        for t, i in pool.ticks.items()
    )


def _crossed(pool: Pool, before: int, after: int) -> int:
    low, high = sorted((before, after))
    return sum(1 for t in pool.ticks if low < t <= high)


def _swap(u: Uniswap, pool: Contract, ours: Pool, rng: random.Random, home: int) -> int:
    """One random swap on both, sized to move the price up to 200 tick spacings and no further
    than 400 from ``home`` (where the positions are); the initialised ticks it crossed (-1:
    both refused)."""
    spacing = ours.tick_spacing
    low, high = home - 400 * spacing, home + 400 * spacing  # where the positions are
    zero_for_one = rng.random() < 0.5
    tick_before = ours.tick
    step = rng.randint(1, 200) * spacing
    edge = max(low, ours.tick - step) if zero_for_one else min(high, ours.tick + step)
    if (edge >= ours.tick) if zero_for_one else (edge <= ours.tick):
        zero_for_one = not zero_for_one  # at the edge: back in
        edge = ours.tick - step if zero_for_one else ours.tick + step
    target = sqrt_at(edge)
    to_target = ours.quote(zero_for_one, 2**200, target)
    needed_in, available_out = (
        (to_target[0], -to_target[1]) if zero_for_one else (to_target[1], -to_target[0])
    )
    limit = 0
    if rng.random() < 0.6 or available_out < 2:  # exact input, half of them up to the target
        amount = max(1, int(needed_in * rng.uniform(0.2, 1.0)))
        if rng.random() < 0.5:
            limit = target
    else:  # exact output: the whole amount or a revert
        amount = -max(1, int(available_out * rng.uniform(0.2, 1.0)))
    ours_limit = limit or (MIN_SQRT_RATIO + 1 if zero_for_one else MAX_SQRT_RATIO - 1)
    expected = ours.quote(zero_for_one, amount, ours_limit)
    try:
        event = u.swap(pool, zero_for_one, amount, limit)
    except RuntimeError:  # the router refused: an exact output the pool cannot pay
        paid_out = -(expected[1] if zero_for_one else expected[0])
        assert amount < 0 and paid_out < -amount
        return -1
    assert ours.swap(zero_for_one, amount, ours_limit) == expected
    assert expected == (event.amount0, event.amount1)
    assert (ours.sqrt_price_x96, ours.tick, ours.liquidity) == (
        event.sqrt_price_x96,
        event.tick,
        event.liquidity,
    )
    return _crossed(ours, tick_before, ours.tick)


def _mint(u: Uniswap, pool: Contract, ours: Pool, rng: random.Random) -> None:
    spacing = ours.tick_spacing
    centre = ours.tick // spacing
    lo, hi = sorted(rng.sample(range(centre - 300, centre + 301), 2))
    (tx,) = u.mint(pool, [(lo * spacing, hi * spacing, int(10 ** rng.uniform(17, 21)))])
    (receipt,) = u.receipts([tx])
    log = next(
        entry
        for entry in receipt["logs"]
        if entry["address"].lower() == pool.address.lower() and entry["topics"][0] == MINT_TOPIC
    )
    data = bytes.fromhex(log["data"][2:])
    liquidity, amount0, amount1 = (int.from_bytes(data[i : i + 32], "big") for i in (32, 64, 96))
    assert ours.mint(lo * spacing, hi * spacing, liquidity) == (amount0, amount1)


@pytest.mark.parametrize("index", [0, 1, 2], ids=["0.05%", "0.3%", "1%"])
def test_v3_pool_from_snapshot_matches_the_contract_op_by_op(fresh: Market, index: int) -> None:
    pool = fresh.v3_pools[index]
    row, ticks = _read(fresh, pool)
    ours = pool_from_snapshot(row, ticks)
    assert isinstance(ours, Pool) and _state(ours) == _chain_state(row)
    rng = random.Random(2200 + index)
    home = ours.tick
    crossed, refused, mints = [], 0, 0
    for step in range(1, OPERATIONS + 1):
        if rng.random() < 0.2:
            _mint(fresh.uniswap, pool, ours, rng)
            mints += 1
        else:
            count = _swap(fresh.uniswap, pool, ours, rng, home)
            refused += count < 0
            crossed.append(count)
        if step % FULL_CHECK_EVERY == 0 or step == OPERATIONS:
            row, ticks = _read(fresh, pool)
            assert _state(ours) == _chain_state(row), f"after operation {step}"
            assert _table(ours) == [tuple(t) for t in ticks], f"after operation {step}"
    assert mints >= 10 and max(crossed) >= 25  # the run did cross many initialised ticks
    assert refused < OPERATIONS // 4


def test_a_swap_beyond_the_snapshot_depth_is_refused_not_misquoted(market: Market) -> None:
    pool = market.v3_pools[1]
    reader = StateReader(market.w3, market.block, multicall=MULTICALL3)
    rows, ticks = read_pool_states(reader, [PoolRef(pool.address, "v3", "", "", 0)], depth_ticks=60)
    shallow = pool_from_snapshot(rows[0], ticks[pool.address])
    assert isinstance(shallow, Pool)
    assert shallow.bounds is not None and len(shallow.ticks) < len(_read(market, pool)[1])
    shallow.quote(True, 10**15, MIN_SQRT_RATIO + 1)  # a small trade stays inside
    with pytest.raises(Exception, match="beyond the snapshot's depth"):
        shallow.quote(True, 10**24, MIN_SQRT_RATIO + 1)


_SWAP = function_signature_to_4byte_selector("swap(uint256,uint256,address,bytes)")
_TRANSFER = function_signature_to_4byte_selector("transfer(address,uint256)")


def _pair_swap_data(out0: int, out1: int, to: str) -> str:
    return (
        "0x"
        + (_SWAP + encode(["uint256", "uint256", "address", "bytes"], [out0, out1, to, b""])).hex()
    )


def test_v2_pair_takes_exactly_get_amount_out_and_not_one_wei_more(fresh: Market) -> None:
    u = fresh.uniswap
    rng = random.Random(2201)
    for pair_contract in fresh.v2_pairs:
        r0, r1, _ = pair_contract.functions.getReserves().call()
        ours = Pair(r0, r1)
        tokens = (pair_contract.functions.token0().call(), pair_contract.functions.token1().call())
        for _ in range(40):
            zero_for_one = rng.random() < 0.5
            amount_in = int(10 ** rng.uniform(12, 23.5))
            out = ours.get_amount_out(amount_in, zero_for_one)
            token_in = tokens[0] if zero_for_one else tokens[1]
            transfer = (
                "0x"
                + (
                    _TRANSFER + encode(["address", "uint256"], [pair_contract.address, amount_in])
                ).hex()
            )
            u.send(token_in, transfer)
            outs = (0, out) if zero_for_one else (out, 0)
            greedy = (0, out + 1) if zero_for_one else (out + 1, 0)
            answer = fresh.w3.provider.make_request(
                RPCEndpoint("eth_call"),
                [
                    {
                        "from": u.account,
                        "to": pair_contract.address,
                        "data": _pair_swap_data(*greedy, u.account),
                    },
                    "latest",
                ],
            )
            assert "UniswapV2: K" in str(answer.get("error"))
            u.send(pair_contract.address, _pair_swap_data(*outs, u.account))
            ours.swap(amount_in, zero_for_one)
            assert tuple(pair_contract.functions.getReserves().call()[:2]) == (
                ours.reserve0,
                ours.reserve1,
            )


def test_the_gas_model_holds_to_the_nodes_gas_used(fresh: Market) -> None:
    """:class:`GasModel`'s defaults against ``gasUsed`` of one-pool swaps through
    ``SwapRouter`` (the reference: Uniswap's bytecode)."""
    pool = fresh.v3_pools[1]
    row, ticks = _read(fresh, pool)
    ours = pool_from_snapshot(row, ticks)
    assert isinstance(ours, Pool)
    model = GasModel()
    rng = random.Random(7)
    errors = []
    for _ in range(30):
        before = ours.tick
        count = _swap(fresh.uniswap, pool, ours, rng, before)
        if count < 0:
            continue
        used = int(fresh.uniswap.last_receipt["gasUsed"], 16)
        estimate = model.transaction + model.v3_hop + count * model.v3_tick
        errors.append(abs(estimate - used) / used)
    errors.sort()
    assert errors[len(errors) // 2] <= 0.1  # the median swap within 10 %
    assert errors[-1] <= 0.75  # swaps that write cold slots cost up to twice as much
