"""The service's pools as contracts on its chains: over web3.py, their views answer what the
engine holds through quotes, lapses, the on-chain flow and evm_revert."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from web3 import Web3

from toolkit.client import chain_provider
from toolkit.codecs import functions
from toolkit.scenario import load_scenario
from toolkit.testing import Harness, embedded_service

USER = "0x" + "11" * 20
ABI = functions.json_abi("pool")
FIGURES = ("balance", "reserved", "outstanding", "available")
_DEFAULT = load_scenario("default")
assert _DEFAULT.credit is not None
# Pool views need no seeded credit book (1,200 accounts, most of a service's start-up time).
NO_BOOK = dataclasses.replace(
    _DEFAULT, credit=dataclasses.replace(_DEFAULT.credit, book_accounts=0)
)


def on_chain(svc: Harness) -> list[tuple[Any, ...]]:
    """Every pool's figures read with eth_call on its chain, as rows of svc.pools()."""
    rows = []
    chains: dict[int, Web3] = {}
    for pool in svc.scenario.pools:
        w3 = chains.setdefault(pool.chain, Web3(chain_provider(svc.embedded, pool.chain)))
        contract = w3.eth.contract(address=Web3.to_checksum_address(pool.address), abi=ABI)
        token = svc.scenario.token(pool.chain, pool.token).address
        rows.append(
            (pool.id, *(getattr(contract.functions, name)(token).call() for name in FIGURES))
        )
    for w3 in chains.values():
        w3.provider.close()  # type: ignore[attr-defined]
    return rows


def engine(svc: Harness) -> list[tuple[Any, ...]]:
    """The engine's own figures now (read after on_chain: the relay has synced)."""
    states = svc.app.state.service.engine.pools(svc.now())  # type: ignore[attr-defined]
    return [(p.id, *(getattr(p, name) for name in FIGURES)) for p in states]


def test_the_views_follow_the_engine_through_the_whole_flow() -> None:
    with embedded_service("default") as svc:
        usdc = svc.scenario.token(8453, "USDC").address
        assert on_chain(svc) == engine(svc)
        quote = svc.client.rfq(
            src_chain=1, dst_chain=8453, amount=10**9, token=usdc, user=USER, type="ExactOutput"
        )
        reserved = on_chain(svc)
        assert reserved == engine(svc)
        assert sum(row[2] for row in reserved) == 10**9  # one quote's reservation
        svc.clock.advance(15)
        assert on_chain(svc) == engine(svc)  # lapsed: nothing reserved
        assert sum(row[2] for row in on_chain(svc)) == 0

        quote = svc.client.rfq(
            src_chain=1, dst_chain=8453, amount=10**9, token=usdc, user=USER, type="ExactOutput"
        )
        assert svc.broadcast(svc.client.transaction(quote))["status"] == "Deposited"
        assert on_chain(svc) == engine(svc)
        svc.advance(svc.scenario.eta(1, 8453))  # the filler fills: reserved → outstanding
        filled = on_chain(svc)
        assert filled == engine(svc)
        assert sum(row[3] for row in filled) == 10**9
        # settled once the fill is proven on Ethereum (settlement_delay_s after its block) and
        # the filler's finalise is mined there: the input, with the fee, lands on Ethereum
        svc.advance(svc.scenario.windows.settlement_delay_s)
        for _ in range(3):
            svc.advance(12)
        settled = on_chain(svc)
        assert settled == engine(svc)
        assert sum(row[3] for row in settled) == 0
        assert sum(row[1] for row in settled) > sum(row[1] for row in filled)


def test_evm_revert_takes_the_views_back_with_the_engine() -> None:
    with embedded_service("single-pool") as svc:
        w3 = Web3(chain_provider(svc.embedded, 8453))
        pool = svc.scenario.pools[0]
        usdc = svc.scenario.token(8453, "USDC").address
        contract = w3.eth.contract(address=Web3.to_checksum_address(pool.address), abi=ABI)
        snapshot = w3.provider.make_request("evm_snapshot", [])["result"]  # type: ignore[arg-type]
        svc.client.rfq(
            src_chain=1, dst_chain=8453, amount=10**9, token=usdc, user=USER, type="ExactOutput"
        )
        assert contract.functions.reserved(usdc).call() == 10**9
        w3.provider.make_request("evm_revert", [snapshot])  # type: ignore[arg-type]
        assert contract.functions.reserved(usdc).call() == 0
        assert contract.functions.available(usdc).call() == pool.balance
        w3.provider.close()  # type: ignore[attr-defined]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(
                st.just("rfq"),
                st.sampled_from([(1, 8453), (8453, 1), (10, 8453), (1, 10)]),
                st.integers(1, 5_000),
            ),
            st.tuples(st.just("wait"), st.integers(0, 20)),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_the_views_agree_with_the_engine_after_any_quotes(steps: list[tuple[Any, ...]]) -> None:
    with embedded_service(NO_BOOK) as svc:
        for step in steps:
            if step[0] == "wait":
                svc.clock.advance(step[1])
                continue
            (src, dst), units = step[1], step[2]
            token = svc.scenario.token(dst, "USDC").address
            try:
                svc.client.rfq(
                    src_chain=src,
                    dst_chain=dst,
                    amount=units * 10**6,
                    token=token,
                    user=USER,
                    type="ExactOutput",
                )
            except Exception as exc:  # no capacity or no route: nothing is reserved
                assert "404" in str(exc) or "400" in str(exc), exc
        assert on_chain(svc) == engine(svc)
