"""RFQ throughput and latency of the embedded service on loopback.

The server runs with uvicorn in a subprocess on 127.0.0.1 (scenario ``default``, no access log);
the load generator runs in this process with ``httpx.AsyncClient``: N workers, each sending
``GET /partner-intents/rfq`` back to back for a fixed time, at N = 1, 16 and 64. Requests cycle
over the twelve USDC routes with 50 USDC each, so reservations (15 s each) stay far below the
pools' capacity; the share of 404 (no capacity) answers is reported.

Usage: ``python bench/bench_server.py [--seconds 5] [--warmup 1] [--clients 1,16,64]``.
Target: >= 1,000 req/s and p99 <= 25 ms at 16 concurrent clients.

Columns: requests and latencies are counted in the measured window; ``server us`` and
``client us`` are the CPU microseconds per request (warm-up included) of the server process
and of the load generator, which stay meaningful when other work shares the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import itertools
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field

import httpx

try:
    import sniffio  # noqa: F401
except ImportError:
    # httpcore imports sniffio on every lock it takes (four per request) and, when the import
    # fails, Python searches sys.path again each time: ~0.5 ms of load-generator CPU per
    # request. A None entry makes the failed import immediate; httpcore then assumes asyncio.
    sys.modules["sniffio"] = None  # type: ignore[assignment]

KEY = "demo-key"
USER = "0x1111111111111111111111111111111111111111"
USDC = {
    1: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
    10: "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85",
    8453: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    42161: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
}
AMOUNT = 50_000_000  # 50 USDC


def _routes() -> list[dict[str, str]]:
    return [
        {
            "srcChain": f"eip155:{src}",
            "dstChain": f"eip155:{dst}",
            "amount": str(AMOUNT),
            "token": USDC[dst],
            "user": USER,
        }
        for src, dst in itertools.permutations(USDC, 2)
    ]


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux /proc), or None where unavailable."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Result:
    clients: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    failures: int = 0
    server_cpu: float | None = None
    client_cpu: float = 0.0
    total: int = 0

    def row(self) -> str:
        count = len(self.latencies)
        ordered = sorted(self.latencies)
        p50 = statistics.median(ordered) * 1000 if ordered else float("nan")
        p99 = ordered[min(count - 1, int(0.99 * count))] * 1000 if ordered else float("nan")
        not_found = self.statuses.get(404, 0)
        other = count - self.statuses.get(200, 0) - not_found
        per = max(self.total, 1)
        server = "n/a" if self.server_cpu is None else f"{self.server_cpu / per * 1e6:.0f}"
        client = f"{self.client_cpu / per * 1e6:.0f}"
        return (
            f"{self.clients:>7} {count:>9} {count / self.seconds:>9.0f} {p50:>8.2f} "
            f"{p99:>8.2f} {100 * not_found / max(count, 1):>6.2f}% {other:>6} {self.failures:>6}"
            f" {server:>10} {client:>10}"
        )


async def _load(
    base_url: str, clients: int, seconds: float, warmup: float, server_pid: int
) -> Result:
    result = Result(clients, seconds)
    # One client (one keep-alive connection) per worker: a shared pool of many connections
    # costs the load generator more CPU per request than the server spends answering it.
    pool = [
        httpx.AsyncClient(base_url=base_url, headers={"X-Auth-Token": KEY}, timeout=10)
        for _ in range(clients)
    ]
    start = time.perf_counter()
    measure_from = start + warmup
    stop = measure_from + seconds

    async def worker(client: httpx.AsyncClient) -> None:
        # Requests are built once and re-sent: URL building is most of httpx's cost per call.
        requests = itertools.cycle(
            [client.build_request("GET", "/partner-intents/rfq", params=p) for p in _routes()]
        )
        while True:
            request = next(requests)
            sent = time.perf_counter()
            if sent >= stop:
                return
            result.total += 1
            try:
                answer = await client.send(request)
            except httpx.HTTPError:
                result.failures += 1
                continue
            done = time.perf_counter()
            if sent >= measure_from and done <= stop:
                result.latencies.append(done - sent)
                result.statuses[answer.status_code] = result.statuses.get(answer.status_code, 0) + 1

    server_before = _cpu_seconds(server_pid)
    client_before = time.process_time()
    try:
        await asyncio.gather(*(worker(client) for client in pool))
    finally:
        for client in pool:
            await client.aclose()
    result.client_cpu = time.process_time() - client_before
    server_after = _cpu_seconds(server_pid)
    if server_before is not None and server_after is not None:
        result.server_cpu = server_after - server_before
    return result


def _serve() -> None:
    """Server mode (run in the subprocess): print the port, serve until terminated."""
    from toolkit.scenario import load_scenario
    from toolkit.server import create_app
    from toolkit.server.loopback import bind_socket, serve_socket

    app = create_app(load_scenario("default", env={}))
    sock = bind_socket("127.0.0.1", 0)
    print(sock.getsockname()[1], flush=True)
    serve_socket(app, sock, log_level="warning", access_log=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measured seconds per level")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds per level")
    parser.add_argument("--clients", default="1,16,64", help="concurrency levels")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve()
        return 0
    levels = [int(x) for x in args.clients.split(",")]
    server = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--serve"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        base_url = f"http://127.0.0.1:{port}"
        http = "httptools" if importlib.util.find_spec("httptools") else "h11"
        loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
        print(
            f"embedded service, scenario default, uvicorn ({http}, {loop}) in a subprocess; "
            f"load: httpx.AsyncClient in this process; {platform.python_version()}, "
            f"{os.cpu_count()} CPUs"
        )
        print(f"GET /partner-intents/rfq, 50 USDC over 12 routes, {args.seconds:g} s per level")
        print()
        print(
            f"{'clients':>7} {'requests':>9} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
            f"{'404':>7} {'other':>6} {'failed':>6} {'server us':>10} {'client us':>10}"
        )
        for clients in levels:
            result = asyncio.run(_load(base_url, clients, args.seconds, args.warmup, server.pid))
            print(result.row(), flush=True)
    finally:
        server.terminate()
        server.wait(15)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
