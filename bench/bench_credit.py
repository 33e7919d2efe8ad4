"""The credit surface over loopback: ``/info`` and ``draw`` latency at 16 concurrent clients, and
full lock → draw → repay → unlock cycles executed on the simulated Base chain per second.

The server is the default scenario's embedded service in its own process (uvicorn on
127.0.0.1). Set-up: each of 16 accounts gets USDC (``anvil_dealERC20``) and locks 10,000 of it
through the lock endpoint's calls, sent with ``eth_sendTransaction`` as the impersonated account
and mined with ``evm_mine``; every answer is checked (HTTP 200, receipts with status 1).

Latency: 16 asyncio clients on keep-alive connections (a minimal HTTP/1.1 client on asyncio
streams, cheap enough that the figures are the server's), each asking ``/info`` (or ``draw``
for 100 USDC to itself) of its own account back to back for ``--seconds``; the table gives
requests, req/s, the p50/p99/max latencies and the answers that were not 200 with a JSON
body. Card-program budget: < 100 ms each; goal p99 <= 25 ms.

Cycles: one client runs lock 1,000 → draw 500 → repay 500 → unlock 1,000 for one account:
four endpoint calls and seven transactions (each mined at once), and checks the account is
back to no debt; the figure is whole cycles per second.

Usage: ``python bench/bench_credit.py [--seconds 5] [--cycles 20]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from typing import Any
from urllib.parse import urlencode

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loopback import start_loopback

USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
UNIT = 10**6
CLIENTS = 16
HEADER = (
    f"{'endpoint':<8} {'requests':>9} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} "
    f"{'errors':>6}"
)


def _account(i: int) -> str:
    return "0x" + f"{0xBE4C0000 + i:040x}"


class Chain:
    """JSON-RPC on the service's Base chain, with the development namespace."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.ids = 0

    def call(self, method: str, *params: Any) -> Any:
        self.ids += 1
        body = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": list(params)}
        answer = self.http.post("/rpc/8453", json=body).json()
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def execute(self, sender: str, calls: list[dict[str, str]]) -> None:
        for call in calls:
            tx = {"from": sender, "to": call["to"], "data": call["data"], "gas": hex(1_000_000)}
            tx_hash = self.call("eth_sendTransaction", tx)
            self.call("evm_mine")
            receipt = self.call("eth_getTransactionReceipt", tx_hash)
            if receipt is None or receipt["status"] != "0x1":
                raise RuntimeError(f"call to {call['to']} failed: {receipt}")

    def prepare(self, account: str, usdc: int) -> None:
        self.call("anvil_impersonateAccount", account)
        self.call("anvil_setBalance", account, hex(10**21))
        self.call("anvil_dealERC20", account, USDC_BASE, hex(usdc))


def _get(http: httpx.Client, path: str, **params: str) -> Any:
    answer = http.get(path, params=params)
    if answer.status_code != 200:
        raise RuntimeError(f"{path}: HTTP {answer.status_code}: {answer.text}")
    return answer.json()


def _v2(account: str) -> str:
    return f"/credit/v2/accounts/{account}/assets/usdc"


def _setup(http: httpx.Client, chain: Chain) -> list[str]:
    accounts = [_account(i) for i in range(CLIENTS)]
    for account in accounts:
        chain.prepare(account, 10_000 * UNIT)
        lock = _get(http, _v2(account) + "/lock", amount=str(10_000 * UNIT), earnAsset=USDC_BASE)
        chain.execute(account, lock["calls"])
    return accounts


def _request(host: str, path: str, params: dict[str, str]) -> bytes:
    query = f"?{urlencode(params)}" if params else ""
    return f"GET {path}{query} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()


async def _client(host: str, port: int, request: bytes, until: float, latencies: list[int]) -> int:
    """One keep-alive connection sending ``request`` back to back: a minimal HTTP/1.1 client
    (status line, headers, Content-Length body), so the figures are the server's."""
    errors = 0
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < until:
            start = time.perf_counter_ns()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            body = await reader.readexactly(length)
            latencies.append(time.perf_counter_ns() - start)
            errors += not head.startswith(b"HTTP/1.1 200") or not body.startswith(b"{")
    finally:
        writer.close()
    return errors


async def _level(
    url: str, requests: list[tuple[str, dict[str, str]]], seconds: float
) -> tuple[list[int], int, float]:
    host, port = url.removeprefix("http://").split(":")
    latencies: list[int] = []
    started = time.perf_counter()
    until = started + seconds
    encoded = [_request(f"{host}:{port}", path, params) for path, params in requests]
    errors = await asyncio.gather(
        *(_client(host, int(port), request, until, latencies) for request in encoded)
    )
    return sorted(latencies), sum(errors), time.perf_counter() - started


def _row(name: str, latencies: list[int], errors: int, elapsed: float) -> str:
    def pct(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] / 1e6

    return (
        f"{name:<8} {len(latencies):>9} {len(latencies) / elapsed:>9.0f} {pct(0.5):>8.2f} "
        f"{pct(0.99):>8.2f} {latencies[-1] / 1e6:>8.2f} {errors:>6}"
    )


def _cycles(http: httpx.Client, chain: Chain, count: int) -> float:
    account = _account(100)
    chain.prepare(account, 2_000 * UNIT)
    v2 = _v2(account)
    started = time.perf_counter()
    for _ in range(count):
        chain.execute(
            account,
            _get(http, v2 + "/lock", amount=str(1_000 * UNIT), earnAsset=USDC_BASE)["calls"],
        )
        chain.execute(
            account, _get(http, v2 + "/draw", amount=str(500 * UNIT), receiver=account)["calls"]
        )
        chain.execute(account, _get(http, v2 + "/repay", amount=str(500 * UNIT))["calls"])
        chain.execute(
            account,
            _get(http, v2 + "/unlock", amount=str(1_000 * UNIT), collateral=USDC_BASE)["calls"],
        )
        info = _get(http, f"/credit/accounts/{account}/info")["data"]["USDC"]
        if info["debt"] != "0.000000" or info["totalCollateralValue"] != "0.000000":
            raise RuntimeError(f"cycle left {info}")
    return count / (time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--cycles", type=int, default=20)
    args = parser.parse_args()
    process, url = start_loopback()
    try:
        with httpx.Client(base_url=url, timeout=30) as http:
            chain = Chain(http)
            accounts = _setup(http, chain)
            info = [(f"/credit/accounts/{a}/info", {}) for a in accounts]
            draw = [
                (_v2(a) + "/draw", {"amount": str(100 * UNIT), "receiver": a}) for a in accounts
            ]
            load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
            print(f"credit surface over loopback, {CLIENTS} clients, {args.seconds:g} s per row")
            print(f"{os.cpu_count()} CPUs, load average {load} (other work skews latencies)")
            print(HEADER)
            for name, requests in (("info", info), ("draw", draw)):
                print(_row(name, *asyncio.run(_level(url, requests, args.seconds))))
            rate = _cycles(http, chain, args.cycles)
            print(f"lock -> draw -> repay -> unlock on chain: {rate:.2f} cycles/s ({args.cycles})")
    finally:
        process.terminate()
        process.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
