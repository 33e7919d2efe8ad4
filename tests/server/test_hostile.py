"""Hostile clients against a served instance (``toolkit serve`` in a subprocess on loopback):
nothing they send ends the process, stalls other clients for more than a second, or answers
HTTP 500; each refusal names the limit."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import httpx
import pytest

from toolkit.server.connections import HEADER_SECONDS, BodyDeadline
from toolkit.world.evm.rpc.limits import MAX_FILTER_CHANGES

from .conftest import AUTH, Served, rfq_params

pytestmark = pytest.mark.loopback

BODY_ROUTES = [
    "/rpc/8453",
    "/partner-intents/transaction",
    "/liquidity/v2/chain/eip155:8453/protocol/partner-escrow/signature",
]
CHAINS = (1, 10, 8453, 42161)


@pytest.mark.parametrize("levels", [10_000, 100_000, 1_000_000])
@pytest.mark.parametrize("route", BODY_ROUTES)
def test_deep_nesting_is_refused_and_the_server_lives(
    served: Served, route: str, levels: int
) -> None:
    for opener in (b"[", b'{"a":'):
        body = opener * levels
        answer = httpx.post(
            served.url + route,
            content=body,
            headers={**AUTH, "Content-Type": "application/json"},
            timeout=30,
        )
        if route.startswith("/rpc") and len(body) > 4 * 1024 * 1024:
            assert answer.status_code == 413
            assert "must be at most 4194304 bytes" in answer.json()["error"]["message"]
        elif route.startswith("/rpc"):
            assert answer.status_code == 200
            assert answer.json()["error"] == {
                "code": -32600,
                "message": "body: JSON nesting deeper than 64 levels (the limit)",
            }
        elif len(body) > 256 * 1024:
            assert answer.status_code == 400
            assert answer.json() == {"error": "body: must be at most 262144 bytes"}
        else:
            assert answer.status_code == 400
            assert answer.json() == {
                "error": "body: JSON nesting deeper than 64 levels (the limit)"
            }
    assert served.alive()


def test_a_500_mb_post_is_refused_while_streaming(served: Served) -> None:
    _, peak_before = served.rss()
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    total, chunk, sent = 500 * 1024 * 1024, b"[" * (1024 * 1024), 0
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(
            b"POST /rpc/8453 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        try:
            while sent < total:
                conn.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                sent += len(chunk)
        except OSError:
            pass  # the server answered and closed: the rest is never read
        reply = conn.recv(4096)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert b"request too large: body: must be at most 4194304 bytes" in reply
    assert sent < total
    _, peak_after = served.rss()
    assert peak_after - peak_before < 50 * 1024 * 1024
    assert served.alive()


@pytest.mark.parametrize("chain", CHAINS)
def test_absurd_times_are_refused_and_the_latest_block_still_reads(
    served: Served, chain: int
) -> None:
    cases: list[tuple[str, list[Any], str]] = [
        ("evm_increaseTime", [2**300], "seconds"),
        ("evm_increaseTime", ["0x" + "f" * 276], "seconds"),
        ("evm_setNextBlockTimestamp", [2**300], "timestamp"),
        ("evm_mine", [2**300], "timestamp"),
        ("anvil_setBalance", ["0x" + "b0" * 20, hex(2**256)], "balance"),
    ]
    for method, params, name in cases:
        error = served.rpc(chain, method, *params)["error"]
        assert error["code"] == -32602 and name in error["message"], error
    dev = served.rpc(chain, "eth_accounts")["result"][0]
    send = {"from": dev, "to": "0x" + "b0" * 20, "nonce": hex(2**300)}
    error = served.rpc(chain, "eth_sendTransaction", send)["error"]
    assert error["code"] == -32602 and "transaction.nonce" in error["message"]
    assert served.rpc(chain, "eth_getBlockByNumber", "latest", False)["result"]["number"]


def test_a_block_filter_after_a_month_answers_in_bounded_polls(served: Served) -> None:
    fid = served.rpc(42161, "eth_newBlockFilter")["result"]
    snapshot = served.rpc(42161, "evm_snapshot")["result"]
    try:
        served.rpc(42161, "evm_increaseTime", 2_600_000)
        started = time.monotonic()
        changes = served.rpc(42161, "eth_getFilterChanges", fid)["result"]
        assert time.monotonic() - started < 5
        assert len(changes) == MAX_FILTER_CHANGES
    finally:
        assert served.rpc(42161, "evm_revert", snapshot)["result"] is True
    assert served.alive()


def _slowest(served: Served, stop: threading.Event) -> dict[str, float]:
    worst = {"health": 0.0, "rfq": 0.0}
    with httpx.Client(base_url=served.url, timeout=30) as client:
        while not stop.is_set():
            started = time.monotonic()
            assert client.get("/health").status_code == 200
            worst["health"] = max(worst["health"], time.monotonic() - started)
            started = time.monotonic()
            answer = client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH)
            assert answer.status_code in (200, 404)
            worst["rfq"] = max(worst["rfq"], time.monotonic() - started)
            time.sleep(0.02)
    return worst


@pytest.mark.parametrize(
    ("method", "params"),
    [("eth_feeHistory", ["0x400", "latest", [10, 50, 90]]), ("eth_getLogs", [{}])],
)
def test_a_heavy_batch_stalls_no_one_for_a_second(
    served: Served, method: str, params: list[Any]
) -> None:
    batch = [{"jsonrpc": "2.0", "id": i, "method": method, "params": params} for i in range(1000)]
    stop = threading.Event()
    result: dict[str, dict[str, float]] = {}
    watcher = threading.Thread(target=lambda: result.update(worst=_slowest(served, stop)))
    watcher.start()
    try:
        answer = httpx.post(f"{served.url}/rpc/42161", json=batch, timeout=120)
    finally:
        stop.set()
        watcher.join(60)
    assert answer.status_code == 200
    assert len(answer.json()) == 1000
    assert result["worst"]["health"] < 1.0, result
    assert result["worst"]["rfq"] < 1.0, result


@pytest.mark.wallclock  # waits out the server's keep-alive timeout
def test_idle_connections_are_closed_and_others_served(served: Served) -> None:
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    idle = [socket.create_connection((host, int(port)), timeout=5) for _ in range(200)]
    try:
        assert served.alive()  # served while 200 connections sit idle
        time.sleep(HEADER_SECONDS + 2)
        closed = 0
        for conn in idle:
            conn.settimeout(2)
            try:
                closed += conn.recv(1) == b""
            except OSError:
                closed += 1  # reset by the server
        assert closed == 200
    finally:
        for conn in idle:
            conn.close()
    assert served.alive()


def test_a_body_that_does_not_arrive_is_a_408() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()

    sent: list[Any] = []

    async def never() -> Any:
        await asyncio.sleep(10)

    async def send(message: Any) -> None:
        sent.append(message)

    async def run() -> None:
        await BodyDeadline(app, seconds=0.05)({"type": "http"}, never, send)

    from toolkit.server import ApiError

    with pytest.raises(ApiError) as info:
        asyncio.run(run())
    assert (info.value.status, info.value.error) == (
        408,
        "body: not received whole within 0.05 s (the limit)",
    )
