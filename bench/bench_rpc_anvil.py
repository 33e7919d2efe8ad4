"""Our JSON-RPC side by side with anvil (npm ``@foundry-rs/anvil``), same client, same call mix.

The client is bench_rpc's: keep-alive connections on asyncio streams, each sending its next
request when the previous answer is read. The mix: ``eth_call`` of an ERC-20 ``balanceOf``
(Base USDC here; on anvil an ERC-20 deployed first, Uniswap v2-core's test token from
tests/node), ``eth_getBalance`` and ``eth_blockNumber``, each at 16 concurrent clients for
``--seconds``. Prints req/s, p50 and p99 of both and our throughput as a fraction of anvil's.
Skips (prints why) when anvil is not installed (``make node``).

Usage: ``python bench/bench_rpc_anvil.py [--seconds 3] [--clients 16]``.
Goal: at least 0.5x of anvil on each method.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
from bench_rpc import HOST, USDC, _row

ERC20_ARTIFACT = Path("tests/node/node_modules/@uniswap/v2-core/build/ERC20.json")


def _request(method: str, params: list[object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()


def _mix(token: str, holder: str) -> dict[str, bytes]:
    data = "0x70a08231" + holder[2:].lower().rjust(64, "0")
    return {
        "eth_call balanceOf": _request("eth_call", [{"to": token, "data": data}, "latest"]),
        "eth_getBalance": _request("eth_getBalance", [holder, "latest"]),
        "eth_blockNumber": _request("eth_blockNumber", []),
    }


async def _client(
    port: int, path: str, body: bytes, deadline: float, latencies: list[float]
) -> None:
    reader, writer = await asyncio.open_connection(HOST, port)
    request = (
        f"POST {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    try:
        first = True
        while time.perf_counter() < deadline:
            t = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            lower = head.lower()
            start = lower.index(b"content-length:") + len(b"content-length:")
            answer = await reader.readexactly(int(lower[start : lower.index(b"\r\n", start)]))
            latencies.append(time.perf_counter() - t)
            if first and b'"error"' in answer:
                raise RuntimeError(f"{path}: {answer[:200]!r}")
            first = False
    finally:
        writer.close()


async def _run(port: int, path: str, body: bytes, clients: int, seconds: float) -> list[float]:
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    await asyncio.gather(*(_client(port, path, body, deadline, latencies) for _ in range(clients)))
    return latencies


def _measure(url: str, mix: dict[str, bytes], clients: int, seconds: float) -> dict[str, str]:
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    path = "/" + url.split("/", 3)[3] if url.count("/") > 2 else "/"
    rows = {}
    for name, body in mix.items():
        asyncio.run(_run(port, path, body, 4, 0.3))  # warm-up
        latencies = asyncio.run(_run(port, path, body, clients, seconds))
        rows[name] = _row(name, latencies, seconds)
    return rows


def _deploy_token(url: str) -> tuple[str, str]:
    artifact = json.loads(ERC20_ARTIFACT.read_text())
    code = artifact.get("bytecode") or artifact["evm"]["bytecode"]["object"]
    code = code if code.startswith("0x") else "0x" + code
    with httpx.Client(timeout=30) as client:

        def call(method: str, *params: object) -> object:
            body = _request(method, list(params))
            headers = {"Content-Type": "application/json"}
            answer = client.post(url, content=body, headers=headers).json()
            if "error" in answer:
                raise RuntimeError(f"{method}: {answer['error']}")
            return answer["result"]

        sender = call("eth_accounts")[0]  # type: ignore[index]
        supply = hex(10**24)[2:].rjust(64, "0")
        tx = call("eth_sendTransaction", {"from": sender, "data": code + supply, "gas": "0x500000"})
        receipt = call("eth_getTransactionReceipt", tx)
        return str(receipt["contractAddress"]), str(sender)  # type: ignore[index]


def _ours() -> tuple[subprocess.Popen[bytes], str, str]:
    from toolkit.scenario import load_scenario
    from toolkit.world.evm import dev_accounts

    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("bench_rpc.py")), "--serve"],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert server.stdout is not None
    port = json.loads(server.stdout.readline())["port"]
    holder = dev_accounts(load_scenario("default"))[0].address
    return server, f"http://{HOST}:{port}/rpc/8453", holder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()
    from toolkit.testing.anvil import AnvilUnavailable, anvil

    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs, {args.clients} clients")
    server, url, holder = _ours()
    try:
        ours = _measure(url, _mix(USDC, holder), args.clients, args.seconds)
    finally:
        server.send_signal(2)
        server.wait(timeout=10)
    try:
        with anvil(chain_id=8453) as node:
            token, sender = _deploy_token(node.url)
            theirs = _measure(node.url, _mix(token, sender), args.clients, args.seconds)
    except AnvilUnavailable as exc:
        print(f"anvil not available, no comparison: {exc}")
        theirs = {}
    print(f"{'':<44} {'requests':>7} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for name, row in ours.items():
        print("ours  " + row)
        if name in theirs:
            print("anvil " + theirs[name])
            ratio = float(row.split()[-3].replace(",", "")) / float(
                theirs[name].split()[-3].replace(",", "")
            )
            print(f"      {name}: ours / anvil = {ratio:.2f}x throughput")


if __name__ == "__main__":
    main()
