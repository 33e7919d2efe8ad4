"""RPC latency beside the heaviest bounded requests, and the server's memory after a hostile suite.

The server is bench_rpc's (the default scenario under uvicorn, with the served instance's
limits) in a child process on 127.0.0.1. First ``eth_call`` (ERC-20 ``balanceOf``) at 16
keep-alive clients on a quiet server: its p99. Then the same while one more client sends, over
and over, the heaviest request of one kind that the limits let through (a batch of 1,000
``eth_feeHistory`` of 1,024 blocks; a batch of 1,000 full latest blocks; a block filter polled
after a month of Arbitrum blocks; a 4 MB body nested past the depth limit; a 1,000-call batch of
``eth_call``): p99 beside each, and its ratio to the quiet p99. Last, the server's resident
memory before and after a hostile suite (1M-level nesting, a 500 MB streamed POST, the heavy
batches, 200 idle connections held past the header deadline).

Usage: ``python bench/bench_rpc_hostile.py [--seconds 3]``.
Goals: p99 beside each heavy request within 2x of the quiet p99; RSS back within 50 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from bench_rpc import HOST, _call_body, _level

CHAIN = 8453


def _rpc(method: str, *params: object, ident: int = 1) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": list(params)}


def _batch(method: str, *params: object) -> bytes:
    return json.dumps([_rpc(method, *params, ident=i) for i in range(1000)]).encode()


def _heavy(url: str, holder: str) -> dict[str, Callable[[httpx.Client], None]]:
    fee = _batch("eth_feeHistory", "0x400", "latest", [10, 50, 90])
    blocks = _batch("eth_getBlockByNumber", "latest", True)
    calls = json.loads(_call_body(holder))
    call_batch = json.dumps([{**calls, "id": i} for i in range(1000)]).encode()
    deep = b"[" * (4 * 1024 * 1024 - 1)

    def post(body: bytes, chain: int = CHAIN) -> Callable[[httpx.Client], None]:
        def send(client: httpx.Client) -> None:
            client.post(f"{url}/rpc/{chain}", content=body, timeout=120)

        return send

    def month_poll(client: httpx.Client) -> None:
        target = f"{url}/rpc/42161"
        fid = client.post(target, json=_rpc("eth_newBlockFilter")).json()["result"]
        snap = client.post(target, json=_rpc("evm_snapshot")).json()["result"]
        client.post(target, json=_rpc("evm_increaseTime", 2_600_000))
        client.post(target, json=_rpc("eth_getFilterChanges", fid), timeout=120)
        client.post(target, json=_rpc("evm_revert", snap))

    return {
        "1,000 x eth_feeHistory(1024)": post(fee),
        "1,000 x full latest block": post(blocks),
        "block filter after a month": month_poll,
        "4 MB nested body": post(deep),
        "1,000 x eth_call batch": post(call_batch),
    }


def _p99(port: int, body: bytes, seconds: float) -> float:
    latencies, _ = asyncio.run(_level(port, [[body]] * 16, seconds))
    ordered = sorted(latencies)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1e3


def _beside(port: int, body: bytes, seconds: float, heavy: Callable[[httpx.Client], None]) -> float:
    stop = threading.Event()

    def hammer() -> None:
        with httpx.Client(timeout=120) as client:
            while not stop.is_set():
                heavy(client)

    thread = threading.Thread(target=hammer, daemon=True)
    thread.start()
    time.sleep(0.2)
    try:
        return _p99(port, body, seconds)
    finally:
        stop.set()
        thread.join(120)


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def _hostile(url: str, heavy: dict[str, Callable[[httpx.Client], None]]) -> None:
    port = int(url.rsplit(":", 1)[1])
    with httpx.Client(timeout=120) as client:
        for opener in (b"[", b'{"a":'):
            client.post(f"{url}/rpc/{CHAIN}", content=opener * 1_000_000)
            client.post(f"{url}/partner-intents/transaction", content=opener * 50_000)
        for send in heavy.values():
            send(client)
    with socket.create_connection((HOST, port)) as conn:
        conn.sendall(b"POST /rpc/8453 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"[" * (1024 * 1024)
        try:
            for _ in range(500):
                conn.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        except OSError:
            pass
    idle = [socket.create_connection((HOST, port)) for _ in range(200)]
    time.sleep(12)  # past the 10 s header deadline
    for conn in idle:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    from toolkit.scenario import load_scenario
    from toolkit.world.evm import dev_accounts

    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("bench_rpc.py")), "--serve"],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    try:
        assert server.stdout is not None
        port = json.loads(server.stdout.readline())["port"]
        url = f"http://{HOST}:{port}"
        holder = dev_accounts(load_scenario("default"))[0].address
        body = _call_body(holder)
        heavy = _heavy(url, holder)
        print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
        asyncio.run(_level(port, [[body]] * 4, 0.5))  # warm-up
        quiet = _p99(port, body, args.seconds)
        print(f"{'eth_call p99 at 16 clients, quiet':<52} {quiet:>8.1f} ms")
        for name, send in heavy.items():
            p99 = _beside(port, body, args.seconds, send)
            print(f"{'  beside ' + name:<52} {p99:>8.1f} ms  {p99 / quiet:>5.2f}x quiet")
        start = _rss(server.pid)
        _hostile(url, heavy)
        time.sleep(1)
        end = _rss(server.pid)
        print(
            f"server RSS before the hostile suite {start / 2**20:.0f} MB, after "
            f"{end / 2**20:.0f} MB ({(end - start) / 2**20:+.0f} MB); alive: "
            f"{httpx.get(url + '/health').status_code == 200}"
        )
    finally:
        server.send_signal(2)
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
