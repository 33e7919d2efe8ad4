"""The pool contracts on chains alone: placement, views through a connected read, reverts."""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import eth_abi

from toolkit.clock import OffsetClock, VirtualClock
from toolkit.codecs.functions import encode_call
from toolkit.scenario import Pool, load_scenario
from toolkit.world.evm import Chains, LiquidityPool, Rpc

from .test_rpc import T0, USDC, call, ok

SCENARIO = load_scenario("default")


class Figures(NamedTuple):
    balance: int
    reserved: int
    outstanding: int
    available: int


def _rpc(scenario: Any = SCENARIO) -> Rpc:
    clock = OffsetClock(VirtualClock(T0))
    return Rpc(Chains(scenario, genesis=clock.now()), clock)


def _view(rpc: Rpc, pool: str, name: str, token: str, chain: int = 8453) -> Any:
    data = encode_call(f"pool.{name}", token)
    return call(rpc, "eth_call", {"to": pool, "data": data}, "latest", chain=chain)


def test_every_scenario_pool_address_holds_a_pool_contract() -> None:
    rpc = _rpc()
    for pool in SCENARIO.pools:
        code = ok(rpc, "eth_getCode", pool.address.lower(), "latest", chain=pool.chain)
        assert code != "0x"
        contract = rpc.chains.ledger(pool.chain).contract(pool.address.lower())
        assert isinstance(contract, LiquidityPool)
        token = SCENARIO.token(pool.chain, pool.token).address.lower()
        assert pool.id in contract.pools[token]


def test_without_an_engine_the_views_revert_and_with_one_they_read_it() -> None:
    rpc = _rpc()
    pool = next(p for p in SCENARIO.pools if p.chain == 8453 and p.token == "USDC")
    answer = _view(rpc, pool.address, "balance", USDC)["error"]
    assert (
        answer["code"] == 3 and answer["message"] == "execution reverted: pool: no engine connected"
    )
    reads: list[str] = []

    def read(pool_id: str) -> Figures:
        reads.append(pool_id)
        return Figures(100, 30, 20, 50)

    rpc.chains.connect_pools(read)
    for name, expected in (
        ("balance", 100),
        ("reserved", 30),
        ("outstanding", 20),
        ("available", 50),
    ):
        result = ok(
            rpc, "eth_call", {"to": pool.address, "data": encode_call(f"pool.{name}", USDC)}
        )
        assert eth_abi.decode(["uint256"], bytes.fromhex(result[2:])) == (expected,)
    assert reads == [pool.id] * 4
    other = "0x" + "ab" * 20
    answer = _view(rpc, pool.address, "balance", other)["error"]
    assert answer["message"] == f"execution reverted: pool: no pool for token {other}"
    # a snapshot and a revert keep the connection (the link is shared, not copied)
    snapshot = ok(rpc, "evm_snapshot")
    assert ok(rpc, "evm_revert", snapshot) is True
    assert "result" in _view(rpc, pool.address, "available", USDC)


def test_pools_of_one_token_at_one_address_answer_their_sum() -> None:
    base = next(p for p in SCENARIO.pools if p.chain == 8453 and p.token == "USDC")
    twin = dataclasses.replace(base, type="usdc_v2")
    scenario = dataclasses.replace(SCENARIO, pools=(*SCENARIO.pools, twin))
    (contract,) = [
        c
        for c in LiquidityPool.build(scenario, 8453)
        if isinstance(c, LiquidityPool) and c.address == base.address.lower()
    ]
    assert contract.pools[USDC] == (base.id, twin.id)
    rpc = _rpc(scenario)
    rpc.chains.connect_pools(lambda pool_id: Figures(7, 0, 0, 7))
    result = ok(rpc, "eth_call", {"to": base.address, "data": encode_call("pool.balance", USDC)})
    assert int(result, 16) == 14


def test_an_address_the_scenario_uses_for_a_token_gets_no_pool() -> None:
    clash = Pool(8453, "USDC", "usdc_v2", SCENARIO.chain(8453).escrow, 1)
    scenario = dataclasses.replace(SCENARIO, pools=(*SCENARIO.pools, clash))
    built = LiquidityPool.build(scenario, 8453)
    assert clash.address.lower() not in {c.address for c in built}
