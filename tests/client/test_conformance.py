"""One client contract, several backends: the embedded service in-process, the same app served
by uvicorn on loopback, and the real service when ``TOOLKIT_BASE_URL`` and ``TOOLKIT_API_KEY``
are set (skipped with a reason otherwise), as web3.py runs one suite over many backends.

Tests that need what only the simulation gives (its signing key, pools it is fine to fill to
the brim) skip on the real service and say why."""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from eth_account import Account

from toolkit.chain.borrow import Borrow, recover_borrow_signer
from toolkit.chain.guard import check_transaction
from toolkit.client import (
    AsyncServiceClient,
    BadRequest,
    EmbeddedService,
    NoCapacity,
    RetryPolicy,
    ServiceClient,
    Unauthorized,
)
from toolkit.scenario import load_scenario
from toolkit.server import create_app, serve_in_thread

from .conftest import Sleeps

USDC = {
    1: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
    8453: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    42161: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
}
ME = "0x1111111111111111111111111111111111111111"
SCENARIO = load_scenario("default")

MakeClient = Callable[..., ServiceClient]


REAL_URL, REAL_KEY = os.environ.get("TOOLKIT_BASE_URL"), os.environ.get("TOOLKIT_API_KEY")


@pytest.fixture(
    params=[
        "embedded",
        pytest.param("loopback", marks=pytest.mark.loopback),
        pytest.param(
            "real",
            marks=pytest.mark.skipif(
                not (REAL_URL and REAL_KEY),
                reason="the real service needs TOOLKIT_BASE_URL and TOOLKIT_API_KEY",
            ),
        ),
    ]
)
def make_client(request: pytest.FixtureRequest) -> Iterator[MakeClient]:
    clients: list[ServiceClient] = []
    if request.param == "real":

        def real(**kwargs: object) -> ServiceClient:
            kwargs.setdefault("api_key", REAL_KEY)
            client = ServiceClient(REAL_URL, **kwargs)  # type: ignore[arg-type]
            clients.append(client)
            return client

        real.backend = "real"  # type: ignore[attr-defined]
        yield real
        for client in clients:
            client.close()
        return
    app = create_app(SCENARIO, heartbeat=0.2, tick=0.1)
    if request.param == "embedded":
        service = EmbeddedService(app=app, api_key="demo-key")

        def embedded(**kwargs: object) -> ServiceClient:
            kwargs.setdefault("api_key", "demo-key")
            client = ServiceClient(embedded=service, **kwargs)  # type: ignore[arg-type]
            clients.append(client)
            return client

        yield embedded
        for client in clients:
            client.close()
        service.close()
        return
    with serve_in_thread(app) as url:

        def loopback(**kwargs: object) -> ServiceClient:
            kwargs.setdefault("api_key", "demo-key")
            client = ServiceClient(url, **kwargs)  # type: ignore[arg-type]
            clients.append(client)
            return client

        yield loopback
        for client in clients:
            client.close()


def test_discovery(make_client: MakeClient) -> None:
    client = make_client()
    assert client.health().status == "ok"
    tokens = client.tokens(8453)
    assert tokens["USDC"].address == USDC[8453] and tokens["USDC"].decimals == 6
    pool = client.pool("usdc", 8453, "USDC")
    assert pool.balance_int > 0
    tiers = client.fees(1, 8453, "USDC", "USDC")
    assert tiers and all(t.min_amount <= t.max_amount for t in tiers)
    assert client.solver(1000, 1, 8453, "USDC", "USDC").duration >= 0


def test_quote_then_transaction_passes_the_guard(make_client: MakeClient) -> None:
    client = make_client()
    quote = client.rfq(src_chain=1, dst_chain=8453, amount=10**9, token=USDC[8453], user=ME)
    assert quote.quote_id and quote.provider == "service"
    built = client.transaction(quote)
    assert built.transaction_request is not None
    now = int(time.time())
    assert check_transaction(quote, built.transaction_request, now=now) == []


def simulated_only(make_client: MakeClient, why: str) -> None:
    """Skip on the real service, saying why the test needs the simulation."""
    if getattr(make_client, "backend", None) == "real":
        pytest.skip(f"simulation only: {why}")


def test_errors_are_typed(make_client: MakeClient) -> None:
    simulated_only(make_client, "it fills the destination pools to the brim")
    sleeps = Sleeps()
    client = make_client(clock=sleeps, retry=RetryPolicy(capacity_retries=2, rng=random.Random(1)))
    with pytest.raises(BadRequest) as bad:
        client.rfq(src_chain=1, dst_chain=8453, amount=10**9, token=ME, user=ME)
    assert bad.value.body is not None and bad.value.status == 400
    # Reserve the destination pools to the brim (each quote holds its amount for 15 s) ...
    greedy = make_client(retry=RetryPolicy.no_retries())
    big: dict[str, Any] = {
        "src_chain": 1,
        "dst_chain": 8453,
        "amount": 10**12,
        "token": USDC[8453],
        "user": ME,
    }
    with pytest.raises(NoCapacity):
        for _ in range(20):
            greedy.rfq(**big)
    # ... then a capacity 404 is retried within the budget before it is raised.
    with pytest.raises(NoCapacity, match="rfq: HTTP 404"):
        client.rfq(**big)
    assert len(sleeps.delays) == 2
    with pytest.raises(Unauthorized, match="HTTP 401"):
        make_client(api_key="not-a-key").tokens(8453)


def test_borrow_quote_then_authorization_is_signed_by_the_service(
    make_client: MakeClient,
) -> None:
    simulated_only(make_client, "it checks the signature against the scenario's signing key")
    client = make_client()
    quote = client.borrow_quote(src_chain=1, dst_chain=8453, amount=10**8, token=USDC[8453])
    assert quote.id is not None
    auth = client.authorize(
        dst_chain=8453,
        caller=ME,
        input="0x",
        quote_id=quote.id,
        tx_hash="0x" + "ab" * 32,
        metadata={"srcChain": "eip155:1"},
    )
    assert auth.liquidity_pool == quote.liquidity_pool
    borrow = Borrow(
        chain_id=8453,
        pool=auth.liquidity_pool,
        caller=ME,
        borrow_token=auth.borrow_token,
        amount=auth.borrow_amount_int,
        target=SCENARIO.chain(8453).output_settler,
        target_call_data=b"",
        nonce=int(auth.nonce),
        deadline=int(auth.deadline or 0),
    )
    signer = Account.from_key(SCENARIO.auth.signer_key.reveal()).address
    assert recover_borrow_signer(auth.signature, borrow) == signer
    with pytest.raises(BadRequest, match="quoteId"):
        client.authorize(
            dst_chain=8453, caller=ME, input="0x", quote_id=quote.id, tx_hash="0x" + "ab" * 32
        )


def test_event_stream_snapshot_then_live_changes(make_client: MakeClient) -> None:
    simulated_only(make_client, "it counts the scenario's pools and routes in the snapshot")
    client = make_client()
    events = client.liquidity_events(duration_s=5)
    snapshot = [next(events) for _ in range(len(SCENARIO.pools) + len(SCENARIO.routes))]
    assert all(e.snapshot for e in snapshot)
    assert len({e.id for e in snapshot}) == 1
    client.rfq(src_chain=1, dst_chain=8453, amount=10**9, token=USDC[8453], user=ME)
    change = next(events)
    events.close()
    assert not change.snapshot and change.id > snapshot[0].id
    assert change.event == "liquidity" and change.data.reason == "reservation_created"  # type: ignore[union-attr]


def test_async_client_in_process() -> None:
    service = EmbeddedService(app=create_app(SCENARIO, heartbeat=0.2), api_key="demo-key")

    async def main() -> tuple[str, str]:
        async with AsyncServiceClient(embedded=service) as client:
            quote = await client.rfq(
                src_chain=1, dst_chain=8453, amount=10**9, token=USDC[8453], user=ME
            )
            stream = client.liquidity_events(last_event_id=0, duration_s=2)
            first = await stream.__anext__()
            await stream.aclose()
            return quote.quote_id or "", first.event

    quote_id, first = asyncio.run(main())
    assert quote_id and first == "liquidity"
