"""The in-process streaming transports: live streams, disconnects, timeouts, crashes, lifespan."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from fastapi import FastAPI
from sse_starlette import EventSourceResponse
from starlette.requests import Request

from toolkit.client import StreamingASGITransport, SyncASGITransport


def make_app() -> FastAPI:
    log: list[str] = []

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        log.append("startup")
        yield
        log.append("shutdown")

    app = FastAPI(lifespan=lifespan)
    app.state.log = log

    @app.get("/echo")
    async def echo(request: Request) -> dict[str, object]:
        return {"q": request.url.query, "auth": request.headers.get("x-auth-token")}

    @app.post("/body")
    async def body(request: Request) -> dict[str, object]:
        return {"len": len(await request.body())}

    @app.get("/ticks")
    async def ticks(request: Request) -> EventSourceResponse:
        async def gen() -> AsyncIterator[dict[str, str]]:
            n = 0
            try:
                while True:
                    n += 1
                    yield {"event": "tick", "id": str(n), "data": str(n)}
                    await asyncio.sleep(0.005)
            finally:
                log.append(f"stream closed after {n}")

        return EventSourceResponse(gen())

    @app.get("/slow")
    async def slow() -> dict[str, str]:
        await asyncio.sleep(5)
        return {"late": "yes"}

    @app.get("/crash")
    async def crash() -> None:
        raise RuntimeError("boom")

    return app


def test_sync_transport_serves_requests_and_streams_an_endless_response() -> None:
    app = make_app()
    transport = SyncASGITransport(app)
    with httpx.Client(transport=transport, base_url="http://app") as client:
        assert client.get("/echo?a=1", headers={"X-Auth-Token": "k"}).json() == {
            "q": "a=1",
            "auth": "k",
        }
        assert client.post("/body", content=b"x" * 100_000).json() == {"len": 100_000}
        with client.stream("GET", "/ticks") as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            data = []
            for line in response.iter_lines():
                if line.startswith("data:"):
                    data.append(line)
                if len(data) == 5:
                    break
        assert data == [f"data: {n}" for n in range(1, 6)]
        # Closing the response is a client disconnect: the app's stream ends.
        for _ in range(100):
            if any(e.startswith("stream closed") for e in app.state.log):
                break
            client.get("/echo")
        assert any(e.startswith("stream closed") for e in app.state.log)
    assert app.state.log[0] == "startup" and app.state.log[-1] == "shutdown"


def test_read_timeout_applies_to_the_response_start() -> None:
    with httpx.Client(
        transport=SyncASGITransport(make_app()), base_url="http://app", timeout=0.05
    ) as client:
        with pytest.raises(httpx.ReadTimeout, match="did not answer within the read timeout"):
            client.get("/slow")
        assert client.get("/echo").status_code == 200


def test_an_app_crash_is_a_500_like_a_real_server(caplog: pytest.LogCaptureFixture) -> None:
    with httpx.Client(transport=SyncASGITransport(make_app()), base_url="http://app") as client:
        response = client.get("/crash")
    assert response.status_code == 500
    assert "Exception in the embedded service" in caplog.text


def test_async_transport_streams_and_disconnects() -> None:
    app = make_app()

    async def main() -> list[str]:
        transport = StreamingASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
            assert (await client.get("/echo?b=2")).json()["q"] == "b=2"
            lines = []
            async with client.stream("GET", "/ticks") as response:
                async for line in response.aiter_lines():
                    if line.startswith("id:"):
                        lines.append(line)
                    if len(lines) == 3:
                        break
            await asyncio.sleep(0.05)
        return lines

    assert asyncio.run(main()) == ["id: 1", "id: 2", "id: 3"]
    assert any(e.startswith("stream closed") for e in app.state.log)
    assert app.state.log[-1] == "shutdown"


def test_async_transport_is_bound_to_one_event_loop() -> None:
    transport = StreamingASGITransport(make_app())

    async def get() -> int:
        client = httpx.AsyncClient(transport=transport, base_url="http://app")
        return (await client.get("/echo")).status_code

    assert asyncio.run(get()) == 200
    with pytest.raises(RuntimeError, match="bound to the event loop that first used it"):
        asyncio.run(get())
