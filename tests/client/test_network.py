"""The async client over a real socket: aiohttp's pool behind the httpx API (NetworkTransport).

Every test here talks to 127.0.0.1 only: the embedded service served by uvicorn, or a tiny raw
asyncio server that misbehaves on purpose (drops the connection, truncates a body, stays
silent) to check that each failure reaches the caller as httpx's own exception.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx
import pytest

from toolkit.client import (
    AsyncServiceClient,
    Attempt,
    BadRequest,
    NoCapacity,
    RetryPolicy,
    TransportError,
    Unauthorized,
)
from toolkit.client.network import NetworkTransport
from toolkit.scenario import load_scenario
from toolkit.server import create_app, serve_in_thread

from .conftest import Sleeps

pytestmark = pytest.mark.loopback

SCENARIO = load_scenario("default")
ME = "0x1111111111111111111111111111111111111111"
USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def raw_server(handler: Handler) -> AsyncIterator[str]:
    """A raw HTTP/1.1 server on a free loopback port running ``handler`` per connection."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            await handler(reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()


def test_the_async_client_uses_aiohttp_for_a_url_and_keeps_its_contract() -> None:
    app = create_app(SCENARIO, heartbeat=0.2, tick=0.1)
    attempts: list[Attempt] = []

    async def main(url: str) -> None:
        sleeps = Sleeps()
        async with AsyncServiceClient(
            url,
            api_key="demo-key",
            clock=sleeps,
            on_attempt=attempts.append,
            retry=RetryPolicy(capacity_retries=1, rng=random.Random(3)),
        ) as client:
            assert isinstance(client._http._transport, NetworkTransport)
            assert (await client.health()).status == "ok"
            assert (await client.tokens(8453))["USDC"].decimals == 6
            quote = await client.rfq(
                src_chain=1, dst_chain=8453, amount=10**9, token=USDC_BASE, user=ME
            )
            assert quote.quote_id
            built = await client.transaction(quote)
            assert built.transaction_request is not None
            # 64 requests at once share the pool.
            health = await asyncio.gather(*(client.health() for _ in range(64)))
            assert {h.status for h in health} == {"ok"}
            with pytest.raises(BadRequest) as bad:
                await client.rfq(src_chain=1, dst_chain=8453, amount=10**9, token=ME, user=ME)
            assert bad.value.status == 400
            big = {"src_chain": 1, "dst_chain": 8453, "amount": 10**12, "token": USDC_BASE}
            with pytest.raises(NoCapacity):
                for _ in range(20):
                    await client.rfq(**big, user=ME)  # type: ignore[arg-type]
            assert len(sleeps.delays) == 1  # one capacity retry, then NoCapacity
            # The borrow authorization is read from an event stream.
            borrow = await client.borrow_quote(
                src_chain=1, dst_chain=8453, amount=10**8, token=USDC_BASE
            )
            assert borrow.id is not None
            auth = await client.authorize(
                dst_chain=8453, caller=ME, input="0x", quote_id=borrow.id, tx_hash="0x" + "ab" * 32
            )
            assert auth.signature.startswith("0x")
            # The liquidity event stream: snapshot, then a live change.
            stream = client.liquidity_events(duration_s=5)
            snapshot = [await anext(stream) for _ in range(len(SCENARIO.pools))]
            assert all(e.snapshot for e in snapshot)
            await client.rfq(src_chain=1, dst_chain=8453, amount=10**8, token=USDC_BASE, user=ME)
            change = await anext(stream)
            while change.snapshot:
                change = await anext(stream)
            await stream.aclose()
            assert change.event == "liquidity"
        async with AsyncServiceClient(url, api_key="not-a-key") as stranger:
            with pytest.raises(Unauthorized, match="HTTP 401"):
                await stranger.tokens(8453)

    with serve_in_thread(app) as url:
        asyncio.run(main(url))
    assert attempts and all(a.status for a in attempts)


def test_a_quiet_stream_ends_at_its_duration_over_the_network() -> None:
    app = create_app(SCENARIO, heartbeat=30, tick=0.1)

    async def main(url: str) -> list[int]:
        async with AsyncServiceClient(url, api_key="demo-key") as client:
            return [e.id async for e in client.liquidity_events(duration_s=0.5)]

    with serve_in_thread(app) as url:
        ids = asyncio.run(main(url))
    # The snapshot arrives, then nothing: the read timeout at the deadline ends the stream.
    assert ids and len(set(ids)) == 1


def test_a_refused_connection_is_a_transport_error_retried_by_the_policy() -> None:
    async def main() -> tuple[list[float], str]:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()  # the port is free again: connecting is refused
        sleeps = Sleeps()
        retry = RetryPolicy(error_retries=2, rng=random.Random(1))
        async with AsyncServiceClient(
            f"http://127.0.0.1:{port}", api_key="k", clock=sleeps, retry=retry
        ) as client:
            with pytest.raises(TransportError) as error:
                await client.tokens(8453)
        return sleeps.delays, str(error.value)

    delays, message = asyncio.run(main())
    assert len(delays) == 2
    assert "ConnectError" in message


async def _drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    pass  # close without answering


async def _truncate(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{")
    await writer.drain()


async def _silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await asyncio.sleep(2)


async def _slow_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{")
    await writer.drain()
    await asyncio.sleep(2)


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (_drop, httpx.RemoteProtocolError),
        (_truncate, httpx.RemoteProtocolError),
        (_silent, httpx.ReadTimeout),
        (_slow_body, httpx.ReadTimeout),
    ],
)
def test_failures_are_httpx_exceptions(handler: Handler, expected: type[Exception]) -> None:
    async def main() -> None:
        async with (
            raw_server(handler) as url,
            httpx.AsyncClient(transport=NetworkTransport(), timeout=0.3) as client,
        ):
            with pytest.raises(expected):
                (await client.get(url + "/health")).raise_for_status()

    asyncio.run(main())


def test_a_refused_connection_is_connect_error() -> None:
    async def main() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        async with httpx.AsyncClient(transport=NetworkTransport()) as client:
            with pytest.raises(httpx.ConnectError):
                await client.get(f"http://127.0.0.1:{port}/")

    asyncio.run(main())
