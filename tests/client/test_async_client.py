"""The async client: the same contract as the sync one, awaitable."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator

import httpx
import pytest

from toolkit.client import (
    AsyncServiceClient,
    Attempt,
    NoCapacity,
    RetryPolicy,
    ServerError,
    Unauthorized,
)
from toolkit.resources import Quote

from .conftest import KEY, USER, Sleeps, quote_wire, respond, rfq_args


def client_for(
    handler: httpx.MockTransport, sleeps: Sleeps, **kwargs: object
) -> AsyncServiceClient:
    return AsyncServiceClient(
        "https://service.example",
        api_key=KEY,
        transport=handler,
        clock=sleeps,
        retry=RetryPolicy(capacity_retries=2, error_retries=2, rng=random.Random(5)),
        **kwargs,  # type: ignore[arg-type]
    )


def test_async_rfq_retries_capacity_then_returns_the_quote() -> None:
    answers = [respond(404, {"error": "busy"}), respond(200, {"quotes": [quote_wire()]})]
    attempts: list[Attempt] = []
    sleeps = Sleeps()

    async def main() -> Quote:
        transport = httpx.MockTransport(lambda request: answers.pop(0))
        async with client_for(transport, sleeps, on_attempt=attempts.append) as client:
            return await client.rfq(**rfq_args())

    assert asyncio.run(main()).quote_id == "qt_1"
    assert [a.status for a in attempts] == [404, 200]
    assert sleeps.delays == [attempts[0].retry_in]


def test_async_errors_are_typed_and_budgets_hold() -> None:
    sleeps = Sleeps()

    async def main() -> None:
        capacity = httpx.MockTransport(lambda r: respond(404, {"error": "no capacity"}))
        async with client_for(capacity, sleeps) as client:
            with pytest.raises(NoCapacity):
                await client.rfq(**rfq_args())
        bad_key = httpx.MockTransport(lambda r: respond(401, {"error": "unknown key"}))
        async with client_for(bad_key, sleeps) as client:
            with pytest.raises(Unauthorized):
                await client.health()
        failing = httpx.MockTransport(lambda r: respond(500, {"error": "x"}))
        async with client_for(failing, sleeps) as client:
            with pytest.raises(ServerError):
                await client.tokens(1)
            with pytest.raises(ServerError):
                await client.transaction(Quote.model_validate(quote_wire()))

    asyncio.run(main())
    # rfq: 2 capacity waits; health: none; tokens: 2 error waits; transaction: none.
    assert len(sleeps.delays) == 4


def test_async_liquidity_events_reconnect() -> None:
    data = {
        "chain": "eip155:8453",
        "token": "USDC",
        "poolType": "usdc",
        "address": USER,
        "balance": "5",
        "reserved": "0",
        "outstanding": "0",
        "reason": "reservation_created",
    }
    connects: list[str | None] = []

    class Drop(httpx.AsyncByteStream):
        def __init__(self, first: int) -> None:
            self.first = first

        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield f"id: {self.first}\nevent: liquidity\ndata: {json.dumps(data)}\n\n".encode()
            raise httpx.RemoteProtocolError("peer closed connection")

    def handler(request: httpx.Request) -> httpx.Response:
        last = request.headers.get("Last-Event-ID")
        connects.append(last)
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            stream=Drop(1 if last is None else int(last) + 1),
        )

    async def main() -> list[int]:
        client = client_for(httpx.MockTransport(handler), Sleeps())
        ids = []
        async for event in client.liquidity_events():
            ids.append(event.id)
            if len(ids) == 4:
                break
        await client.aclose()
        return ids

    assert asyncio.run(main()) == [1, 2, 3, 4]
    assert connects == [None, "1", "2", "3"]
