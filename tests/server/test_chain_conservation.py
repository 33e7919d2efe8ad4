"""Value is conserved through the simulated chains (issue 29): random multi-route flows of both
tokens on a served default scenario, opened on chain by users, filled, proven, finalised and
rebalanced by the service's transactions. Per token, at every step, exactly:

    users + the filler + the escrows + the bridges in flight + the bridges' fees  ==  constant,

where what a bridge carries is what the bridges burnt on ``send`` less what they minted on
``deliver`` (fees included), read from the bridge contracts; and the engine's books equal the
chains' (``GET /sim/reconciliation`` is empty). Every figure is read over JSON-RPC, one batch
per chain.

The scenario is the default one at 0.2 % of its capital (a few thousand USDC and a few WETH per
pool, as the world's conservation test uses) and a 20 s attestation delay, so that a handful of
orders moves a chain out of its threshold band and the policy sends transfers. One served
instance runs every example, each from the same ``evm_snapshot`` (``evm_revert`` after it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import cast

import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from toolkit.backtest import apply_overrides
from toolkit.client import NoCapacity, RetryPolicy
from toolkit.codecs import events
from toolkit.codecs.functions import encode_call
from toolkit.scenario import Scenario, load_scenario
from toolkit.server.service import Service
from toolkit.testing import Harness, embedded_service
from toolkit.world.evm.accounts import dev_accounts
from toolkit.world.evm.bridge import BRIDGE, BRIDGE_FEES


def _scenario() -> Scenario:
    base = load_scenario("default")
    assert base.credit is not None  # no seeded credit book: a fast start, and not under test
    base = dataclasses.replace(base, credit=dataclasses.replace(base.credit, book_accounts=0))
    return apply_overrides(base, {"pool_scale": 0.002, "settlement_delay_s": 20})


SCENARIO = _scenario()
ROUTES = [(1, 8453, "USDC"), (10, 8453, "USDC"), (8453, 42161, "USDC"), (8453, 10, "WETH"),
          (1, 42161, "WETH"), (42161, 8453, "WETH")]  # fmt: skip
AMOUNTS = {"USDC": [500 * 10**6, 2_000 * 10**6, 4_000 * 10**6], "WETH": [10**17, 10**18]}
USERS = [1, 2, 3]  # development accounts


def _holders(svc: Harness, chain: int) -> list[str]:
    accounts = dev_accounts(svc.scenario)
    users = [accounts[i].address for i in USERS]
    return [*users, svc.scenario.filler, svc.scenario.chain(chain).escrow, BRIDGE_FEES]


def _totals(svc: Harness) -> dict[str, int]:
    """Per token symbol: the holders' balances plus what the bridges carry, every chain."""
    totals: dict[str, int] = {}
    for chain in svc.scenario.chains:
        calls: list[tuple[str, str, int]] = []  # (symbol, call data, sign)
        asked: list[str] = []
        for token in (t for t in svc.scenario.tokens if t.chain == chain.id):
            for holder in _holders(svc, chain.id):
                calls.append((token.symbol, encode_call("erc20.balanceOf", holder), 1))
                asked.append(token.address)
            calls.append((token.symbol, encode_call("bridge.sentTotal", token.address), 1))
            calls.append((token.symbol, encode_call("bridge.deliveredTotal", token.address), -1))
            asked += [BRIDGE, BRIDGE]
        batch = [
            {"jsonrpc": "2.0", "id": i, "method": "eth_call",
             "params": [{"to": to, "data": data}, "latest"]}
            for i, (to, (_, data, _)) in enumerate(zip(asked, calls, strict=True))
        ]  # fmt: skip
        answers = sorted(
            svc.http.post(f"/rpc/{chain.id}", json=batch).json(), key=lambda a: a["id"]
        )
        for (symbol, _, sign), answer in zip(calls, answers, strict=True):
            totals[symbol] = totals.get(symbol, 0) + sign * int(answer["result"], 16)
    return totals


@dataclasses.dataclass
class _Served:
    svc: Harness
    snapshot: str
    start: dict[str, int]


@pytest.fixture(scope="module")
def served() -> Iterator[_Served]:
    with embedded_service(SCENARIO, retry=RetryPolicy.no_retries()) as svc:
        yield _Served(svc, svc.rpc(1, "evm_snapshot"), _totals(svc))


def _balances(svc: Harness, chain: int) -> int:
    """The filler's USDC on ``chain``."""
    token = svc.scenario.token(chain, "USDC").address
    call = {"to": token, "data": encode_call("erc20.balanceOf", svc.scenario.filler)}
    return int(svc.rpc(chain, "eth_call", call), 16)


def _check(svc: Harness, start: dict[str, int]) -> None:
    assert _totals(svc) == start
    assert svc.sim("GET", "reconciliation")["mismatches"] == []


def _order(svc: Harness, route: int, size: int, user: int) -> bool:
    src, dst, symbol = ROUTES[route]
    amounts = AMOUNTS[symbol]
    account = dev_accounts(svc.scenario)[USERS[user]].address
    try:
        quote = svc.client.rfq(
            src_chain=src, dst_chain=dst, amount=amounts[size % len(amounts)],
            token=svc.scenario.token(dst, symbol).address, user=account, type="ExactOutput",
        )  # fmt: skip
    except NoCapacity:
        return False
    svc.broadcast(svc.client.transaction(quote), account=USERS[user])
    return True


#: Orders into Base of both tokens, then elsewhere (route, size, user, seconds to the next).
HEAVY = [(0, 2, 0, 12), (0, 2, 1, 12), (1, 2, 2, 30), (3, 1, 0, 12), (4, 1, 1, 2),
         (0, 2, 2, 120), (2, 2, 0, 30), (5, 1, 1, 12)]  # fmt: skip
FLOWS = st.lists(
    st.tuples(
        st.integers(0, len(ROUTES) - 1),
        st.integers(0, 2),  # size
        st.integers(0, len(USERS) - 1),
        st.sampled_from([2, 12, 30, 120]),  # seconds to the next order
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(flows=FLOWS)
@example(flows=HEAVY)  # drains Base of both tokens: the threshold policy sends three transfers
def test_value_is_conserved_through_the_chains(
    served: _Served, flows: list[tuple[int, int, int, int]]
) -> None:
    svc, start = served.svc, served.start
    service: Service = cast(FastAPI, svc.app).state.service
    try:
        for route, size, user, wait in flows:
            _order(svc, route, size, user)
            _check(svc, start)
            svc.advance(wait)
            _check(svc, start)
        for _ in range(12):  # settlements, attestations and transfers land
            svc.advance(120)
            _check(svc, start)
        kinds = {s.kind for s in service.relay.steps}
        assert "fill_reverted" not in kinds and "transfer_failed" not in kinds
    finally:
        assert svc.rpc(1, "evm_revert", served.snapshot) is True
        served.snapshot = svc.rpc(1, "evm_snapshot")  # a revert drops the snapshot it used


def _filler_moves(svc: Harness, chain: int) -> list[tuple[str, int]]:
    """The filler's USDC moves on ``chain`` in chain order: ("minted", amount) for a bridge's
    delivery, ("paid", amount) for a fill or a send, ("received", amount) otherwise."""
    token = svc.scenario.token(chain, "USDC").address
    filler = "0x" + "00" * 12 + svc.scenario.filler[2:].lower()
    topic = events.EVENTS["erc20.Transfer"].topic0
    logs = [
        *svc.rpc(chain, "eth_getLogs", {"fromBlock": "0x0", "address": token,
                                        "topics": [topic, filler]}),
        *svc.rpc(chain, "eth_getLogs", {"fromBlock": "0x0", "address": token,
                                        "topics": [topic, None, filler]}),
    ]  # fmt: skip
    logs.sort(key=lambda entry: (int(entry["blockNumber"], 16), int(entry["logIndex"], 16)))
    moves = []
    for entry in logs:
        amount = int(entry["data"], 16)
        if entry["topics"][1] == filler:
            moves.append(("paid", amount))
        elif int(entry["topics"][1], 16) == 0:
            moves.append(("minted", amount))
        else:
            moves.append(("received", amount))
    return moves


def test_fills_paid_by_a_transfer_come_after_its_delivery_on_chain(served: _Served) -> None:
    # 4,000 USDC orders from Optimism onto Base, one every 6 s for three minutes: Base's pools
    # (13,000 USDC here) run dry unless the threshold policy's transfers refill them
    svc = served.svc
    service: Service = cast(FastAPI, svc.app).state.service
    start = _balances(svc, 8453)
    try:
        for n in range(30):
            _order(svc, 1, 2, n % 3)
            svc.advance(6)
        for _ in range(6):
            svc.advance(30)
        _check(svc, served.start)
        kinds = [s.kind for s in service.relay.steps]
        assert "fill_reverted" not in kinds and kinds.count("transfer_delivered") >= 1
        # Walk the filler's Base USDC in chain order: a fill whose output exceeds what the
        # filler held from anything but deliveries was paid by a delivery mined before it.
        held, minted, paid_by_transfers = start, 0, 0
        for kind, amount in _filler_moves(svc, 8453):
            if kind == "paid":
                assert held >= amount  # the tokens were on chain before the fill
                paid_by_transfers += held - minted < amount
                held -= amount
            else:
                held += amount
                minted += amount if kind == "minted" else 0
        assert paid_by_transfers >= 1
    finally:
        assert svc.rpc(1, "evm_revert", served.snapshot) is True
        served.snapshot = svc.rpc(1, "evm_snapshot")
