"""The async client under concurrency: ``/health`` requests per second over loopback.

The embedded service runs in its own process (uvicorn on 127.0.0.1). One client is shared by 1,
16 and 64 concurrent tasks; each configuration answers ``REQUESTS`` requests, best of
``REPEATS``. Compared: the toolkit's ``AsyncServiceClient`` (its default transport for a real
URL: aiohttp's pool under the httpx API), the same client on httpx's own transport (httpcore,
the transport before), and a plain ``aiohttp.ClientSession`` (the reference).

Goal: the toolkit's client reaches at least 0.8x aiohttp at 64 tasks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import aiohttp
import httpx
from loopback import start_loopback

from toolkit.client import AsyncServiceClient

REQUESTS = 2_000
REPEATS = 3
TASKS = (1, 16, 64)

Call = Callable[[], Awaitable[object]]


async def rate(call: Call, tasks: int) -> float:
    """Requests per second when ``tasks`` tasks share ``REQUESTS`` calls."""
    per_task = REQUESTS // tasks

    async def worker() -> None:
        for _ in range(per_task):
            await call()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(tasks)))
    return per_task * tasks / (time.perf_counter() - started)


async def toolkit_client(url: str, tasks: int, httpcore: bool) -> float:
    transport = httpx.AsyncHTTPTransport() if httpcore else None  # None: the client's default
    async with AsyncServiceClient(url, api_key="demo-key", transport=transport) as client:
        await client.health()
        return await rate(client.health, tasks)


async def aiohttp_session(url: str, tasks: int) -> float:
    connector = aiohttp.TCPConnector(limit=100)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def health() -> object:
            async with session.get(url + "/health") as response:
                return await response.json()

        await health()
        return await rate(health, tasks)


def best(run: Callable[..., Awaitable[float]], *args: object) -> float:
    return max(asyncio.run(run(*args)) for _ in range(REPEATS))


def main() -> None:
    process, url = start_loopback()
    try:
        print(f"/health over loopback, {REQUESTS:,} requests per run, best of {REPEATS}")
        print(f"{'tasks':>5} {'toolkit':>10} {'httpcore':>10} {'aiohttp':>10} {'ratio':>7}")
        for tasks in TASKS:
            ours = best(toolkit_client, url, tasks, False)
            before = best(toolkit_client, url, tasks, True)
            reference = best(aiohttp_session, url, tasks)
            print(
                f"{tasks:>5} {ours:>10,.0f} {before:>10,.0f} {reference:>10,.0f} "
                f"{ours / reference:>6.2f}x"
            )
        print("req/s; ratio = toolkit / aiohttp (goal at 64 tasks: >= 0.80x)")
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
