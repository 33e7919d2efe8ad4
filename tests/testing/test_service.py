"""embedded_service: an in-process service on a virtual clock that repeats run to run."""

from __future__ import annotations

import math
import time
from typing import Any

import polars as pl
import pytest
from eth_utils import keccak

from toolkit.client import NoCapacity, RetryPolicy, ServiceClient
from toolkit.testing import DEFAULT_START, Harness, RpcFailure, VirtualClock, embedded_service
from toolkit.world.evm.accounts import dev_accounts

USER = "0x" + "11" * 20
USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"  # USDC on Base in both scenarios
UNIT = 1_000_000_000  # one 1,000 USDC unit of the single-pool scenario


def rfq(svc: Harness, amount: int = UNIT, **kwargs: Any) -> Any:
    return svc.client.rfq(
        src_chain=1,
        dst_chain=8453,
        amount=amount,
        token=USDC_BASE,
        user=USER,
        type="ExactOutput",
        **kwargs,
    )


def test_yields_a_client_on_the_virtual_clock() -> None:
    with embedded_service("single-pool") as svc:
        assert isinstance(svc.client, ServiceClient)
        assert isinstance(svc.clock, VirtualClock)
        assert svc.scenario.name == "single-pool"
        assert svc.client.embedded is svc.embedded
        quote = rfq(svc)
        assert quote.valid_until == DEFAULT_START + 15


def test_reservations_follow_the_virtual_clock() -> None:
    with embedded_service("single-pool") as svc:
        rfq(svc)
        pools = svc.pools()
        assert pools.columns == [
            "pool",
            "chain",
            "token",
            "pool_type",
            "balance",
            "reserved",
            "outstanding",
            "available",
        ]
        assert pools.schema["balance"] == pl.Int128
        assert pools.row(0) == (
            "8453:USDC:usdc",
            8453,
            "USDC",
            "usdc",
            15 * UNIT,
            UNIT,
            0,
            14 * UNIT,
        )
        svc.clock.advance(14.9)
        assert svc.pools()["reserved"].to_list() == [UNIT]
        svc.clock.advance(0.1)
        assert svc.pools()["reserved"].to_list() == [0]


def test_a_given_clock_is_used() -> None:
    clock = VirtualClock(1_700_000_000.0)
    with embedded_service("single-pool", clock=clock) as svc:
        assert svc.clock is clock
        assert rfq(svc).valid_until == 1_700_000_015


def _session() -> list[Any]:
    with embedded_service("default") as svc:
        first = svc.client.rfq(
            src_chain=1, dst_chain=8453, amount=10**9, token=USDC_BASE, user=USER
        )
        svc.clock.advance(3)
        request = svc.client.transaction(first).transaction_request
        assert request is not None
        return [first.quote_id, first.valid_until, request.model_dump()]


def test_two_sessions_give_the_same_ids_nonces_and_calldata() -> None:
    one, two = _session(), _session()
    assert one == two
    assert one[0] is not None


def test_retry_backoff_takes_virtual_time_not_wall_time() -> None:
    with embedded_service("single-pool", seed=3) as svc:
        for _ in range(15):
            rfq(svc)
        # The pool is full until its reservations lapse at +15 s. From +12 s, capacity retries
        # back off at least 0.5 + 1 + 2 s, all on the virtual clock.
        start = svc.clock.advance(12)
        wall = time.perf_counter()
        quote = rfq(svc)
        assert time.perf_counter() - wall < 5.0
        assert svc.clock() - start >= 3.0
        assert quote.valid_until == math.floor(svc.clock() + 0.5) + 15


def _backoff_wait(seed: int) -> float:
    with embedded_service("single-pool", seed=seed) as svc:
        for _ in range(15):
            rfq(svc)
        start = svc.clock.advance(12)
        rfq(svc)
        return svc.clock() - start


def test_the_seed_makes_the_backoff_repeat() -> None:
    waits = [_backoff_wait(11), _backoff_wait(11), _backoff_wait(12)]
    # The pool is full for 3 more seconds, so the call had to back off at least that long...
    assert waits[0] >= 3.0
    # ...by the same jittered delays for the same seed, and by others for another seed.
    assert waits[0] == waits[1] != waits[2]


def test_a_full_pool_without_retries_is_a_404() -> None:
    with embedded_service("single-pool", retry=RetryPolicy.no_retries()) as svc:
        for _ in range(15):
            rfq(svc)
        with pytest.raises(NoCapacity, match="HTTP 404"):
            rfq(svc)
        assert svc.clock() == DEFAULT_START  # no back-off was taken


def test_sim_reaches_the_simulation_endpoints() -> None:
    with embedded_service("single-pool") as svc:
        key = "0x" + "ab" * 32
        with pytest.raises(AssertionError, match=rf"GET /sim/orders/{key}: HTTP 404"):
            svc.sim("GET", f"orders/{key}")
        with pytest.raises(AssertionError, match=r"GET /sim/orders/0x00: HTTP 400"):
            svc.sim("GET", "orders/0x00")


@pytest.mark.parametrize("path", ["", "/pools", "https://x/sim/pools"])
def test_sim_refuses_paths_outside_sim(path: str) -> None:
    with embedded_service("single-pool") as svc, pytest.raises(ValueError, match="path: must"):
        svc.sim("GET", path)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"seed": -1}, ValueError, "seed: must be an integer >= 0, got -1"),
        ({"seed": 1.5}, ValueError, "seed: must be an integer >= 0, got 1.5"),
        ({"clock": time.time}, TypeError, "clock: must be a VirtualClock or None"),
        ({"scenario": 3}, TypeError, "scenario: must be a scenario name, a path or a Scenario"),
        ({"retry": 3}, TypeError, "retry: must be a RetryPolicy or None, got int"),
    ],
)
def test_bad_arguments_are_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message), embedded_service(**kwargs):
        pass


def test_the_environment_does_not_change_the_harness(monkeypatch: pytest.MonkeyPatch) -> None:
    with embedded_service("single-pool") as svc:
        plain = rfq(svc)
    monkeypatch.setenv("TOOLKIT_API_KEY", "some-other-key")
    monkeypatch.setenv("TOOLKIT_BASE_URL", "https://service.example")
    with embedded_service("single-pool") as svc:
        # Still the embedded service, still the scenario's key (a wrong key would be a 401),
        # and the same answer as without the variables.
        assert svc.client.embedded is svc.embedded
        assert "service.example" not in svc.client.base_url
        assert rfq(svc) == plain


def test_order_id_and_broadcast_follow_a_built_quote() -> None:
    with embedded_service("single-pool") as svc:
        quote = rfq(svc)
        svc.clock.advance(5)
        built = svc.client.transaction(quote)
        key = svc.order_id(built)
        held = svc.order(key)
        assert held == svc.sim("GET", f"orders/{key}")
        assert held["status"] == "Built"
        assert held["reservation"]["kind"] == "order"
        assert held["reservation"]["expiresAt"] == svc.clock() + 60
        order = svc.broadcast(built)
        assert order["orderId"] == key
        assert order["status"] == "Deposited"
        sender = dev_accounts(svc.scenario)[0].address.lower()
        assert order["depositor"] == sender and order["user"] == USER
        receipt = svc.rpc(1, "eth_getTransactionReceipt", order["txHash"])
        assert receipt["status"] == "0x1" and receipt["from"] == sender
        # approve, then open(): each mined in Ethereum's next block (12 s slots from the start)
        assert svc.now() == DEFAULT_START + 24 == order["depositedAt"]
        # the same order again: the escrow refuses it, and nothing is sent
        with pytest.raises(RpcFailure, match="execution reverted") as refused:
            svc.broadcast(built)
        assert refused.value.code == 3
        assert refused.value.data == "0x" + keccak(text="InvalidOrderStatus()")[:4].hex()


def test_advance_and_mine_drive_the_filler_over_json_rpc() -> None:
    with embedded_service("single-pool") as svc:
        built = svc.client.transaction(rfq(svc))
        order = svc.broadcast(built)
        start = svc.now()
        assert svc.advance(svc.scenario.eta(1, 8453)) == start + svc.scenario.eta(1, 8453)
        assert svc.clock() == DEFAULT_START  # the harness clock did not move: the offset did
        filled = svc.order(order["orderId"])
        assert filled["status"] == "Filled" and filled["filledAt"] == svc.now()
        assert svc.pools()["outstanding"].to_list() == [UNIT]
        # the filler's fill waits in Base's pool for the next block
        assert svc.rpc(8453, "eth_getBlockByNumber", "pending", False)["transactions"]
        block = svc.mine(8453)
        assert block >= filled["filledAt"] and block == svc.now()
        assert not svc.rpc(8453, "eth_getBlockByNumber", "pending", False)["transactions"]
        # settlement_delay_s after the fill's block its proof is due: the messenger's
        # attestation waits in Ethereum's pool; once mined, the filler sends finalise
        svc.advance(svc.scenario.windows.settlement_delay_s)
        assert svc.rpc(1, "eth_getBlockByNumber", "pending", False)["transactions"]
        svc.mine(1)
        assert svc.order(order["orderId"])["status"] == "Filled"
        svc.mine(1)  # finalise is mined: the escrow paid the filler, the order is settled
        assert svc.order(order["orderId"])["status"] == "Settled"
        assert svc.pools()["outstanding"].to_list() == [0]


def test_rpc_answers_results_and_raises_errors() -> None:
    with embedded_service("single-pool") as svc:
        assert svc.rpc(8453, "eth_blockNumber") == "0x0"
        with pytest.raises(RpcFailure, match="eth_nope on chain 8453: -32601") as failed:
            svc.rpc(8453, "eth_nope")
        assert failed.value.code == -32601 and isinstance(failed.value, AssertionError)
        with pytest.raises(AssertionError, match="POST /rpc/999: HTTP 404"):
            svc.rpc(999, "eth_chainId")
        with pytest.raises(ValueError, match="method: must be a JSON-RPC method name"):
            svc.rpc(8453, "")
        with pytest.raises(ValueError, match="seconds: must be an integer >= 0"):
            svc.advance(-1)


def test_order_id_and_broadcast_need_a_built_quote() -> None:
    with embedded_service("single-pool") as svc:
        quote = rfq(svc)
        with pytest.raises(ValueError, match=r"built: must be a quote returned by client"):
            svc.order_id(quote)
        with pytest.raises(ValueError, match=r"built: must be a quote returned by client"):
            svc.broadcast(quote)
        built = svc.client.transaction(quote)
        with pytest.raises(ValueError, match=r"account: must be below 10, got 10"):
            svc.broadcast(built, account=10)
