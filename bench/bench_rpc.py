"""JSON-RPC throughput and latency of the simulated chains: in-process and over loopback HTTP.

Two methods: ``eth_call`` (ERC-20 ``balanceOf`` on Base USDC) and ``eth_sendRawTransaction``
(pre-signed EIP-1559 USDC transfers, one sender per client so nonces stay in order; signing is
done before the clock starts, but the server recovers every sender, which dominates its cost).
In-process: :meth:`toolkit.world.evm.Rpc.handle_bytes` called in a loop (body bytes in,
body bytes out). Over HTTP: the app under uvicorn (uvloop, httptools) in a child process on
127.0.0.1, driven by 1 and 16 keep-alive connections on asyncio streams; each connection sends
its next request when the previous answer is read. Every answer is checked (a result, no
error). Prints a table; no assertions.

Usage: ``python bench/bench_rpc.py [--seconds 3] [--txs 40]``.
Goal: >= 2,000 eth_call/s and p99 <= 25 ms at 16 clients.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

HOST = "127.0.0.1"
CHAIN = 8453
USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
T0 = 1_760_000_000.0


def _call_body(holder: str) -> bytes:
    from toolkit.codecs.functions import encode_call

    data = encode_call("erc20.balanceOf", holder)
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "eth_call",
        "params": [{"to": USDC, "data": data}, "latest"],
    }
    return json.dumps(request).encode()


def _keys(count: int) -> list[str]:
    from eth_utils import keccak

    return ["0x" + keccak(text=f"bench sender {i}").hex() for i in range(count)]


def _signed_transfers(key: str, count: int) -> list[bytes]:
    from eth_account import Account

    from toolkit.codecs.functions import encode_call

    bodies = []
    for nonce in range(count):
        tx = {
            "type": 2,
            "chainId": CHAIN,
            "nonce": nonce,
            "to": USDC,
            "value": 0,
            "gas": 60_000,
            "maxFeePerGas": 10**8,
            "maxPriorityFeePerGas": 10**6,
            "data": encode_call("erc20.transfer", "0x" + "b0" * 20, 1),
        }
        raw = bytes(Account.sign_transaction(tx, key).raw_transaction)
        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "eth_sendRawTransaction",
            "params": ["0x" + raw.hex()],
        }
        bodies.append(json.dumps(request).encode())
    return bodies


def _fund_bodies(keys: list[str]) -> list[bytes]:
    from eth_account import Account

    bodies = []
    for key in keys:
        address = Account.from_key(key).address
        for method, params in (
            ("anvil_setBalance", [address, hex(10**20)]),
            ("anvil_dealERC20", [address, USDC, hex(10**12)]),
        ):
            bodies.append(
                json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
            )
    return bodies


def _check(answer: bytes) -> None:
    body = json.loads(answer)
    if "error" in body:
        raise RuntimeError(f"error answer: {body['error']}")


def _row(name: str, latencies: list[float], seconds: float) -> str:
    ordered = sorted(latencies)
    p50 = statistics.median(ordered) * 1e3
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1e3
    return f"{name:<44} {len(ordered):>7} {len(ordered) / seconds:>9,.0f} {p50:>8.2f} {p99:>8.2f}"


# -- in-process ----------------------------------------------------------------------------------


def in_process(seconds: float, txs: int) -> list[str]:
    from toolkit.clock import OffsetClock, VirtualClock
    from toolkit.scenario import load_scenario
    from toolkit.world.evm import Chains, Rpc

    scenario = load_scenario("default")
    clock = OffsetClock(VirtualClock(T0))
    rpc = Rpc(Chains(scenario, genesis=T0), clock)
    body = _call_body(rpc.chains.accounts[0].address)
    rows = []
    latencies = []
    end = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < end:
        t = time.perf_counter()
        answer = rpc.handle_bytes(CHAIN, body)
        latencies.append(time.perf_counter() - t)
    assert answer is not None
    _check(answer)
    rows.append(_row("in-process eth_call", latencies, time.perf_counter() - start))
    key = rpc.chains.accounts[0].key.reveal()
    bodies = _signed_transfers(key, txs)
    latencies = []
    start = time.perf_counter()
    for raw in bodies:
        t = time.perf_counter()
        answer = rpc.handle_bytes(CHAIN, raw)
        latencies.append(time.perf_counter() - t)
        assert answer is not None
        _check(answer)
    rows.append(_row("in-process eth_sendRawTransaction", latencies, time.perf_counter() - start))
    return rows


# -- over loopback HTTP --------------------------------------------------------------------------


def _serve() -> None:
    from toolkit.scenario import load_scenario
    from toolkit.server import create_app
    from toolkit.server.loopback import bind_socket, serve_socket

    app = create_app(load_scenario("default"))
    sock = bind_socket(HOST, 0)
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        serve_socket(app, sock, loop=loop, http=http, log_level="warning", access_log=False)


async def _post(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes, body: bytes
) -> bytes:
    writer.write(head + str(len(body)).encode() + b"\r\n\r\n" + body)
    status_and_headers = await reader.readuntil(b"\r\n\r\n")
    lower = status_and_headers.lower()
    start = lower.index(b"content-length:") + len(b"content-length:")
    length = int(lower[start : lower.index(b"\r\n", start)])
    return await reader.readexactly(length)


async def _client(
    port: int, bodies: list[bytes], deadline: float | None, latencies: list[float]
) -> None:
    reader, writer = await asyncio.open_connection(HOST, port)
    head = (
        f"POST /rpc/{CHAIN} HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
        "Content-Length: "
    ).encode()
    i = 0
    try:
        while True:
            if deadline is None:
                if i >= len(bodies):
                    break
                body = bodies[i]
            else:
                if time.perf_counter() >= deadline:
                    break
                body = bodies[i % len(bodies)]
            t = time.perf_counter()
            answer = await _post(reader, writer, head, body)
            latencies.append(time.perf_counter() - t)
            if i % 200 == 0:
                _check(answer)
            i += 1
    finally:
        writer.close()


async def _level(
    port: int, per_client: list[list[bytes]], seconds: float | None
) -> tuple[list[float], float]:
    latencies: list[float] = []
    start = time.perf_counter()
    deadline = None if seconds is None else start + seconds
    await asyncio.gather(*(_client(port, bodies, deadline, latencies) for bodies in per_client))
    return latencies, time.perf_counter() - start


def over_http(seconds: float, txs: int, levels: list[int]) -> list[str]:
    from eth_account import Account

    from toolkit.scenario import load_scenario
    from toolkit.world.evm.accounts import dev_accounts

    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    rows = []
    try:
        assert server.stdout is not None
        port = json.loads(server.stdout.readline())["port"]
        holder = dev_accounts(load_scenario("default"))[0].address
        call = _call_body(holder)
        keys = _keys(max(levels))
        asyncio.run(_level(port, [_fund_bodies(keys)], None))
        asyncio.run(_level(port, [[call]] * 4, 0.5))  # warm-up
        for n in levels:
            latencies, spent = asyncio.run(_level(port, [[call]] * n, seconds))
            rows.append(_row(f"HTTP eth_call, {n} client(s)", latencies, spent))
        for n in levels:
            # each level signs from the senders' current nonces, before its clock starts
            nonces = asyncio.run(
                _nonce_offsets(port, [Account.from_key(k).address for k in keys[:n]])
            )
            per_client = [
                _signed_transfers_from(key, nonce, txs)
                for key, nonce in zip(keys[:n], nonces, strict=True)
            ]
            latencies, spent = asyncio.run(_level(port, per_client, None))
            rows.append(_row(f"HTTP eth_sendRawTransaction, {n} client(s)", latencies, spent))
    finally:
        server.send_signal(2)
        server.wait(timeout=10)
    return rows


async def _nonce_offsets(port: int, addresses: list[str]) -> list[int]:
    reader, writer = await asyncio.open_connection(HOST, port)
    head = (
        f"POST /rpc/{CHAIN} HTTP/1.1\r\nHost: {HOST}\r\n"
        "Content-Type: application/json\r\nContent-Length: "
    ).encode()
    out = []
    for address in addresses:
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "eth_getTransactionCount",
                "params": [address, "pending"],
            }
        ).encode()
        out.append(int(json.loads(await _post(reader, writer, head, body))["result"], 16))
    writer.close()
    return out


def _signed_transfers_from(key: str, first: int, count: int) -> list[bytes]:
    bodies = _signed_transfers(key, first + count)
    return bodies[first:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--txs", type=int, default=40, help="signed transactions per client")
    parser.add_argument("--clients", default="1,16")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve()
        return
    levels = [int(n) for n in args.clients.split(",")]
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
    print(f"{'':<44} {'requests':>7} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for row in in_process(args.seconds, args.txs):
        print(row, flush=True)
    for row in over_http(args.seconds, args.txs, levels):
        print(row, flush=True)


if __name__ == "__main__":
    main()
