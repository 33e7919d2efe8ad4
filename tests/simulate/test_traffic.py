"""Background traffic: other users' order flow, swaps and credit activity replayed on a live
embedded service, on chain."""

from __future__ import annotations

import time
from collections.abc import Iterator
from decimal import Decimal

import polars as pl
import pytest
from web3 import Web3

from toolkit.client import EmbeddedService, ServiceClient, chain_web3
from toolkit.client.credit import CreditClient
from toolkit.clock import ScaledClock
from toolkit.codecs.events import EVENTS
from toolkit.scenario import load_scenario
from toolkit.server import create_app
from toolkit.server.loopback import serve_in_thread
from toolkit.simulate import Traffic
from toolkit.world.evm.markets import market_for

FLOW = pl.DataFrame(
    {
        "t": [0.0, 2.0, 4.0, 6.0],
        "src_chain": [8453, 42161, 8453, 42161],
        "dst_chain": [42161, 8453, 42161, 8453],
        "token": ["USDC"] * 4,
        "amount": [1_000 * 10**6] * 4,
        "type": ["ExactOutput", "ExactInput", "ExactOutput", "ExactInput"],
        "converts": [True, True, False, True],
        "convert_delay": [1.0, 3.0, 0.0, 1.0],
    }
)


@pytest.mark.wallclock  # plays out on a 100x wall clock
def test_converting_quotes_are_opened_on_chain_then_filled_and_settled() -> None:
    clock = ScaledClock(100.0)
    with ServiceClient(embedded=True, clock=clock) as client:
        assert client.embedded is not None
        with Traffic(client.embedded, FLOW) as traffic:
            traffic.join(timeout=30)
        counts = {k: n for k, n in traffic.counts.items() if k != "late"}
        assert counts == {"rfq": 4, "quoted": 4, "opened": 3}
        world = client.embedded.app.state.service.world  # type: ignore[attr-defined]
        base = chain_web3(8453, embedded=client.embedded)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            base.eth.block_number  # noqa: B018 - any JSON-RPC call brings the world up to time
            counts = {status.value: n for status, n in world.counts().items() if n}
            if counts.get("Settled", 0) == 3:
                break
            clock.sleep(5.0)
        assert counts == {"Settled": 3}


def test_bad_input_is_refused_naming_the_field() -> None:
    service = EmbeddedService("default", env={})
    try:
        with pytest.raises(ValueError, match="embedded: traffic is only driven into the embedded"):
            Traffic(object(), FLOW)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="flow: must be a polars DataFrame"):
            Traffic(service, FLOW.to_dicts())  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"flow: missing column\(s\) converts, convert_delay"):
            Traffic(service, FLOW.drop("converts", "convert_delay"))
        ready_made = EmbeddedService(app=service.app)
        with pytest.raises(ValueError, match="scenario: give the Scenario"):
            Traffic(ready_made, FLOW)
        assert Traffic(ready_made, FLOW, scenario=load_scenario("default")).counts == {}
    finally:
        service.close()


@pytest.fixture(scope="module")
def service() -> Iterator[EmbeddedService]:
    with EmbeddedService("default", env={}) as embedded:
        yield embedded


SWAPS = pl.DataFrame(
    {
        "t": [0.0, 5.0, 10.0],
        "chain": [8453, 8453, 1],
        "token_in": ["USDC", "WETH", "USDT"],
        "token_out": ["WETH", "USDC", "WBTC"],
        "amount_in": [20_000 * 10**6, 10**18, 5_000 * 10**6],
    }
)
CREDIT = pl.DataFrame(
    {
        "t": [0.0, 20.0, 30.0, 40.0, 60.0],
        "borrower": [2, 2, 2, 2, 2],
        "action": ["lock", "draw", "draw", "draw", "repay"],
        "amount": [1_000 * 10**6, 100 * 10**6, 50 * 10**6, 5_000 * 10**6, 100 * 10**6],
    }
)


def _pool_state(w3: Web3, pools: list[str]) -> list[bytes]:
    """Every pool's slot0 (V3) or reserves (V2), raw."""
    out = []
    for pool in pools:
        selector = "0x3850c7bd" if "v3" in pool else "0x0902f1ac"  # slot0() / getReserves()
        address = pool.split(" ", 1)[0]
        out.append(bytes(w3.eth.call({"to": address, "data": selector})))  # type: ignore[typeddict-item]
    return out


def test_swaps_and_credit_actions_move_pools_and_accounts_on_chain() -> None:
    with ServiceClient(embedded=True, clock=ScaledClock(100.0)) as client:
        embedded = client.embedded
        assert embedded is not None and embedded.scenario is not None
        market = market_for(embedded.scenario, 8453)
        assert market is not None
        pools = [f"{p.address} {p.kind}" for p in market.pools if "USDC/WETH" in p.label]
        base = chain_web3(8453, embedded=embedded)
        borrower = base.eth.accounts[2]  # type: ignore[misc]  # web3 types accounts as a 1-tuple
        before = _pool_state(base, pools)
        with Traffic(embedded, swaps=SWAPS, credit=CREDIT) as traffic:
            traffic.join(timeout=30)
        counts = {k: n for k, n in traffic.counts.items() if k != "late"}
        assert counts == {
            "swap_quoted": 3,
            "swap_sent": 3,
            "credit_lock": 1,
            "credit_draw": 2,
            "credit_repay": 1,
            "credit_calls": 6,  # approve + lock, two draws, approve + repay
            "credit draw 400": 1,  # 5,000 against 1,000 of collateral: refused by the endpoint
        }
        assert _pool_state(base, pools) != before
        swap = EVENTS["v3pool.Swap"].topic0, EVENTS["v2pair.Swap"].topic0
        logs = base.eth.get_logs({"fromBlock": 0, "topics": [list(swap)]})
        assert len(logs) >= 2  # each base swap through at least one pool
        debt = CreditClient(client).info(borrower)["USDC"].debt
        assert Decimal(debt) == 50  # 100 + 50 drawn, 100 repaid


def test_intents_only_traffic_keeps_its_counters() -> None:
    with ServiceClient(embedded=True, clock=ScaledClock(100.0)) as client:
        assert client.embedded is not None
        with Traffic(client.embedded, FLOW.head(1)) as traffic:
            traffic.join(timeout=30)
        assert {k: n for k, n in traffic.counts.items() if k != "late"} == {
            "rfq": 1,
            "quoted": 1,
            "opened": 1,
        }


@pytest.mark.parametrize(
    ("swaps", "credit", "message"),
    [
        (SWAPS.drop("amount_in"), None, r"swaps: missing column\(s\) amount_in"),
        (SWAPS.to_dicts(), None, "swaps: must be a polars DataFrame"),
        (SWAPS.with_columns(chain=pl.lit(10)), None, "swaps.chain: must be a chain with an AMM"),
        (SWAPS.with_columns(token_out=pl.lit("DOGE")), None, "swaps.token_out: must be a token"),
        (SWAPS.with_columns(token_in=pl.lit("USDC"), token_out=pl.lit("USDC")), None,
         "swaps.token_out: must be another token than token_in"),
        (SWAPS.with_columns(amount_in=pl.lit(0)), None, "swaps.amount_in: must be an integer >="),
        (SWAPS.with_columns(amount_in=pl.lit(1.5)), None, "swaps.amount_in: must be an integer"),
        (SWAPS.with_columns(t=pl.lit(-1.0)), None, "swaps.t: must be finite seconds >= 0"),
        (None, CREDIT.drop("borrower"), r"credit: missing column\(s\) borrower"),
        (None, CREDIT.with_columns(action=pl.lit("borrow")), "credit.action: must be one of lock"),
        (None, CREDIT.with_columns(borrower=pl.lit(10)), "credit.borrower: must be the index"),
        (None, CREDIT.with_columns(amount=pl.lit(-5)), "credit.amount: must be an integer >= 1"),
    ],
)  # fmt: skip
def test_bad_swap_and_credit_flows_are_refused_naming_the_column(
    service: EmbeddedService, swaps: object, credit: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Traffic(service, swaps=swaps, credit=credit)  # type: ignore[arg-type]


@pytest.mark.loopback
def test_traffic_drives_a_service_served_over_http() -> None:
    # Slower than in-process: each step's requests cross a socket to a server in this process.
    clock = ScaledClock(20.0)
    scenario = load_scenario("default")
    with serve_in_thread(create_app(scenario, clock=clock)) as url:
        flow = FLOW.head(2)
        credit = CREDIT.head(2).with_columns(t=pl.Series([0.0, 40.0]))  # lock, then draw
        traffic = Traffic(
            base_url=url, flow=flow, swaps=SWAPS.head(1), credit=credit,
            scenario=scenario, clock=clock,
        )  # fmt: skip
        assert traffic.base_url == url and traffic.embedded is None
        assert "demo-key" not in repr(traffic)
        with traffic:
            traffic.join(timeout=30)
        counts = {k: n for k, n in traffic.counts.items() if k != "late"}
        assert counts == {
            "rfq": 2,
            "quoted": 2,
            "opened": 2,
            "swap_quoted": 1,
            "swap_sent": 1,
            "credit_lock": 1,
            "credit_draw": 1,
            "credit_calls": 3,  # approve + lock, draw
        }
        base = chain_web3(8453, url=f"{url}/rpc/8453")
        swap = EVENTS["v3pool.Swap"].topic0, EVENTS["v2pair.Swap"].topic0
        try:
            assert base.eth.get_logs({"fromBlock": 0, "topics": [list(swap)]})
        finally:
            base.provider.close()  # type: ignore[attr-defined]


@pytest.mark.loopback
def test_traffic_ends_quietly_when_the_served_service_goes_away() -> None:
    clock = ScaledClock(100.0)
    scenario = load_scenario("single-pool")
    with serve_in_thread(create_app(scenario, clock=clock)) as url:
        pass
    flow = FLOW.head(1).with_columns(src_chain=pl.lit(8453), dst_chain=pl.lit(8453))
    with Traffic(base_url=url, flow=flow, scenario=scenario, clock=clock) as traffic:
        traffic.join(timeout=10)
    assert traffic.counts == {"unreachable": 1}


def test_the_target_is_one_service_given_once() -> None:
    service = EmbeddedService("single-pool", env={})
    try:
        with pytest.raises(ValueError, match="base_url: give an embedded service or the base"):
            Traffic(service, FLOW, base_url="http://127.0.0.1:8700")
        with pytest.raises(ValueError, match=r"scenario: give the Scenario \(or its name\)"):
            Traffic(base_url="http://127.0.0.1:8700", flow=FLOW)
        with pytest.raises(ValueError, match="base_url: not a valid URL"):
            Traffic(base_url="http://127.0.0.1:99999", flow=FLOW, scenario="default")
        with pytest.raises(ValueError, match="embedded: traffic is only driven into the embedded"):
            Traffic(flow=FLOW)
    finally:
        service.close()
