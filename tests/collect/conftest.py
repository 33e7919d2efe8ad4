"""Fixtures of the collector tests: the embedded service with a server-side response log, a
fault-injecting transport around the real in-process transport, fake clocks."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import polars as pl
import pytest

from toolkit.client import EmbeddedService, RetryPolicy, ServiceClient
from toolkit.collect import GridPoint, discover_routes, grid_for
from toolkit.scenario import load_scenario
from toolkit.server import create_app
from toolkit.store import Store

KEY = "demo-key"


class ResponseLog:
    """ASGI middleware recording (method, path, status) of every response the app starts."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.state = app.state
        self.responses: list[tuple[str, str, int]] = []
        self._lock = threading.Lock()

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def record(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                with self._lock:
                    self.responses.append((scope["method"], scope["path"], message["status"]))
            await send(message)

        await self.app(scope, receive, record)

    def count(self, path: str, status: int | None = None) -> int:
        with self._lock:
            return sum(
                1 for _, p, s in self.responses if p == path and (status is None or s == status)
            )


@dataclass
class Fault:
    """What the fault transport does to one request."""

    kind: str  # "status", "timeout", "slow", "drop", "interrupt", "interrupt_after"
    status: int = 503
    delay: float = 0.0
    after_chunks: int = 0


class DroppingStream(httpx.SyncByteStream):
    """Passes ``after`` chunks through, then fails like a reset connection."""

    def __init__(self, inner: httpx.SyncByteStream, after: int) -> None:
        self.inner = inner
        self.after = after

    def __iter__(self) -> Iterator[bytes]:
        for number, chunk in enumerate(self.inner, start=1):
            yield chunk
            if number >= self.after:
                raise httpx.ReadError("connection reset by peer (injected)")

    def close(self) -> None:
        self.inner.close()


@dataclass
class FaultTransport(httpx.BaseTransport):
    """Wraps a transport; ``plan(request, n)`` picks a fault for the n-th request (from 1) of
    each path, or None to pass the request through untouched."""

    inner: httpx.BaseTransport
    plan: Callable[[httpx.Request, int], Fault | None]
    seen: dict[str, int] = field(default_factory=dict)
    injected: list[tuple[str, str]] = field(default_factory=list)
    forwarded: dict[str, int] = field(default_factory=dict)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.seen[path] = self.seen.get(path, 0) + 1
        fault = self.plan(request, self.seen[path])
        if fault is not None and fault.kind != "slow":
            self.injected.append((path, fault.kind))
        if fault is not None and fault.kind == "status":
            return httpx.Response(fault.status, json={"error": "injected failure"})
        if fault is not None and fault.kind == "timeout":
            raise httpx.ConnectTimeout("timed out (injected)", request=request)
        if fault is not None and fault.kind == "interrupt":
            raise KeyboardInterrupt
        if fault is not None and fault.kind == "slow":
            time.sleep(fault.delay)
        self.forwarded[path] = self.forwarded.get(path, 0) + 1
        response = self.inner.handle_request(request)
        if fault is not None and fault.kind == "interrupt_after":
            response.close()
            raise KeyboardInterrupt
        if fault is not None and fault.kind == "drop":
            assert isinstance(response.stream, httpx.SyncByteStream)
            return httpx.Response(
                response.status_code,
                headers=response.headers,
                stream=DroppingStream(response.stream, fault.after_chunks),
                extensions=response.extensions,
            )
        return response

    def close(self) -> None:
        self.inner.close()


class FakeClock:
    """Unix time that moves only when the code under test sleeps."""

    def __init__(self, start: float = 1_760_000_000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@dataclass
class Embedded:
    """An embedded service whose app logs every response it starts, on a fake clock (which its
    clients carry: collectors and back-offs sleep on it)."""

    service: EmbeddedService
    log: ResponseLog
    clock: FakeClock

    def client(
        self,
        plan: Callable[[httpx.Request, int], Fault | None] | None = None,
        **kwargs: Any,
    ) -> tuple[ServiceClient, FaultTransport]:
        transport = FaultTransport(self.service.sync_transport(), plan or (lambda r, n: None))
        kwargs.setdefault("retry", RetryPolicy(rng=random.Random(11)))
        kwargs.setdefault("clock", self.clock)
        client = ServiceClient(self.service.base_url, api_key=KEY, transport=transport, **kwargs)
        return client, transport


@pytest.fixture
def embedded() -> Iterator[Embedded]:
    scenario = load_scenario("default")
    clock = FakeClock()
    log = ResponseLog(create_app(scenario, clock=clock, heartbeat=0.2, tick=0.1))
    service = EmbeddedService(app=log, api_key=KEY)
    yield Embedded(service, log, clock)
    service.close()


@pytest.fixture(scope="session")
def small_grid() -> list[GridPoint]:
    """USDC routes between Base and Arbitrum: every tier amount, both quote types."""
    with ServiceClient(embedded=EmbeddedService(env={})) as client:
        routes = discover_routes(client, chains=(8453, 42161), symbols=("USDC",))
        client.embedded.close()  # type: ignore[union-attr]
    return grid_for(routes)


@pytest.fixture
def store() -> Iterator[Store]:
    with Store(":memory:") as opened:
        yield opened


def grid_flow(
    points: list[GridPoint], *, spacing: float, count: int, converts_every: int = 0
) -> pl.DataFrame:
    """A traffic flow cycling through ``points``, one RFQ every ``spacing`` seconds; every
    ``converts_every``-th converts at once (0: none)."""
    rows = [points[k % len(points)] for k in range(count)]
    return pl.DataFrame(
        {
            "t": [k * spacing for k in range(count)],
            "src_chain": [p.src_chain for p in rows],
            "dst_chain": [p.dst_chain for p in rows],
            "token": [p.token for p in rows],
            "amount": [p.amount for p in rows],
            "type": [p.quote_type for p in rows],
            "converts": [bool(converts_every) and k % converts_every == 0 for k in range(count)],
            "convert_delay": [0.0] * count,
        }
    )
