"""RFQ throughput and latency of the embedded service over loopback HTTP at 1, 16, 64 clients.

The load generator is cheap enough that the figures are the server's. Three processes: the server
(uvicorn with uvloop and httptools, scenario ``default``, no access log), one load-generator process
per concurrency level, and this one, which starts them, checks answers with httpx and prints the
table. On a machine with two CPUs or more the server is pinned to CPU 0 and the load generator to
CPU 1 (``--no-pin`` leaves scheduling to the OS).

The load generator is a minimal HTTP/1.1 keep-alive client on asyncio streams: N connections,
each sending pre-encoded ``GET /partner-intents/rfq`` requests back to back, reading the status
line, the headers and a Content-Length body. Requests cycle over the twelve USDC routes with 50
USDC each, so reservations (15 s each) stay far below the pools' capacity; 404 (no capacity)
answers are counted apart. Each level runs ``--warmup`` seconds unmeasured, then ``--seconds``
measured; a level also stops after ``--max-requests`` requests. The generator uses uvloop too
(``--generator-loop asyncio`` for the standard loop).

Columns: ``requests`` and ``req/s`` count the responses completed in the measured window;
latencies (send to last body byte, ``perf_counter_ns``) are those of the requests sent in it;
``404`` and ``err`` are the shares of 404 answers and of other statuses or failed connections;
``srv us`` is the server process's CPU (user + system) microseconds per request, ``sys`` the
kernel's share of it, ``srv cpu`` the server's CPU use in the window (100 % is one core: the
server is the bottleneck); ``gen us`` is the load generator's CPU per request; ``gc ms/n`` the
server's longest garbage-collection pause in the window and its number of full (generation 2)
collections there: with preemption by other processes, those pauses set ``max ms``. The CPU
figures hold when other work shares the machine; req/s and latencies do not (the header prints
the load average). Correctness: every route is sent once through httpx before and after the
levels (status 200 and a quote in the body), and a sample of the load generator's bodies is
parsed and checked the same way. The table is printed once the server has stopped.

``--profile N`` runs the server under cProfile and prints its N costliest functions at the end
(cProfile roughly doubles the server's CPU per request: read it for shares, not the table).

Usage: ``python bench/bench_server.py [--seconds 5] [--warmup 1] [--clients 1,16,64]``.
Target: >= 1,000 req/s and p99 <= 25 ms at 16 concurrent clients.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import itertools
import json
import math
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from typing import Any
from urllib.parse import urlencode

HOST = "127.0.0.1"
KEY = "demo-key"
USER = "0x1111111111111111111111111111111111111111"
USDC = {
    1: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
    10: "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85",
    8453: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    42161: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
}
AMOUNT = 50_000_000  # 50 USDC
PATH = "/partner-intents/rfq"
SAMPLE_EVERY = 500  # the load generator keeps every n-th body for the correctness check


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


def _cpu_seconds(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of a process, from /proc (Linux)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def _pin(cpu: int | None) -> None:
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})


def _check_quote(body: bytes | str) -> str | None:
    """Why ``body`` is not a one-quote RFQ answer, or None when it is."""
    try:
        quotes = json.loads(body)["quotes"]
        quote = quotes[0]
        output = quote["preview"]["outputs"][0]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return f"not an RFQ answer ({type(exc).__name__}: {exc})"
    if len(quotes) != 1 or not quote.get("quoteId") or not str(output["amount"]).isdigit():
        return "expected one quote with a quoteId and an output amount"
    return None


# --- server process -------------------------------------------------------------------------


def _serve(cpu: int | None, profile: str | None) -> None:
    """Server mode: print the port, loop and HTTP protocol, serve until SIGINT."""
    _pin(cpu)
    from toolkit.scenario import load_scenario
    from toolkit.server import create_app
    from toolkit.server.loopback import bind_socket, serve_socket

    app = create_app(load_scenario("default"))
    sock = bind_socket(HOST, 0)
    # Explicit rather than "auto": uvicorn fails loudly if either is missing.
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    print(json.dumps({"port": sock.getsockname()[1], "loop": loop, "http": http}), flush=True)
    options: dict[str, Any] = {"log_level": "warning", "access_log": False}
    pauses = _GcPauses()
    gc.callbacks.append(pauses.callback)
    profiler = None
    if profile is not None:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    try:
        serve_socket(app, sock, loop=loop, http=http, **options)
    except KeyboardInterrupt:
        pass  # the parent's SIGINT: the normal end
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile)
        print(json.dumps(pauses.pauses), flush=True)


class _GcPauses:
    """Every collection as ``[start ns, pause ns, generation]``, from ``gc.callbacks``."""

    def __init__(self, limit: int = 1_000_000) -> None:
        self.started = 0
        self.limit = limit
        self.pauses: list[list[int]] = []

    def callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.started = time.perf_counter_ns()
        elif len(self.pauses) < self.limit:
            pause = time.perf_counter_ns() - self.started
            self.pauses.append([self.started, pause, info["generation"]])


# --- load-generator process -----------------------------------------------------------------


class _Level:
    """The shared state of one level's connections (one event loop, so no locks)."""

    def __init__(self, max_requests: int) -> None:
        self.remaining = max_requests
        # perf_counter_ns bounds of the measured window, set by the meter
        self.window_start: int | None = None
        self.window_end: int | None = None
        self.finished = False
        self.completed = 0
        self.latencies: list[int] = []
        self.statuses: Counter[int] = Counter()
        self.failures = 0
        self.samples: list[str] = []


def _request_bytes(port: int) -> list[bytes]:
    head = f"Host: {HOST}:{port}\r\nX-Auth-Token: {KEY}\r\nAccept: application/json\r\n\r\n"
    return [f"GET {PATH}?{urlencode(q)} HTTP/1.1\r\n{head}".encode() for q in _routes()]


def _content_length(head: bytes) -> int:
    start = head.lower().find(b"\r\ncontent-length:")
    if start < 0:
        raise ValueError("response without Content-Length")
    start += len(b"\r\ncontent-length:")
    return int(head[start : head.index(b"\r\n", start)])


async def _connection(port: int, requests: list[bytes], offset: int, level: _Level) -> None:
    """One keep-alive connection sending requests back to back until the level finishes."""
    clock = time.perf_counter_ns
    index = offset
    while not level.finished and level.remaining > 0:
        try:
            reader, writer = await asyncio.open_connection(HOST, port)
        except OSError:
            level.failures += 1
            await asyncio.sleep(0.01)
            continue
        try:
            while not level.finished and level.remaining > 0:
                level.remaining -= 1
                request = requests[index % len(requests)]
                index += 1
                sent = clock()
                writer.write(request)  # a few hundred bytes: never above the write buffer limit
                head = await reader.readuntil(b"\r\n\r\n")
                body = await reader.readexactly(_content_length(head))
                done = clock()
                level.completed += 1
                start, end = level.window_start, level.window_end
                if start is not None and sent >= start and (end is None or sent < end):
                    level.latencies.append(done - sent)
                    status = int(head[9:12])
                    level.statuses[status] += 1
                    if status == 200 and len(level.latencies) % SAMPLE_EVERY == 1:
                        level.samples.append(body.decode())
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            level.failures += 1
        finally:
            writer.close()


async def _drive(
    port: int, clients: int, seconds: float, warmup: float, server_pid: int, max_requests: int
) -> dict[str, Any]:
    level = _Level(max_requests)
    requests = _request_bytes(port)
    tasks = [asyncio.create_task(_connection(port, requests, i * 5, level)) for i in range(clients)]
    await asyncio.sleep(warmup)
    # The window is what the meter saw: CPU snapshots and completion counts at the same instants.
    server_user, server_sys = _cpu_seconds(server_pid)
    own_cpu = time.process_time()
    completed = level.completed
    level.window_start = began = time.perf_counter_ns()
    deadline = began + int(seconds * 1e9)
    while time.perf_counter_ns() < deadline and level.remaining > 0:
        await asyncio.sleep(0.01)
    level.window_end = ended = time.perf_counter_ns()
    level.finished = True
    user, system = _cpu_seconds(server_pid)
    result = {
        "began": began,
        "ended": ended,
        "wall": (ended - began) / 1e9,
        "completed": level.completed - completed,
        "server_user": user - server_user,
        "server_sys": system - server_sys,
        "own_cpu": time.process_time() - own_cpu,
    }
    # In-flight requests finish on their own; a stuck one must not hold the bench.
    _, stuck = await asyncio.wait(tasks, timeout=10)
    for task in stuck:
        task.cancel()
    result.update(
        latencies=sorted(level.latencies),
        statuses={str(k): v for k, v in level.statuses.items()},
        failures=level.failures + len(stuck),
        samples=level.samples,
    )
    return result


def _generate(args: argparse.Namespace) -> None:
    """Load-generator mode: run one level, write its raw figures as JSON to ``args.out``."""
    _pin(args.cpu)
    run = asyncio.run
    if args.generator_loop == "uvloop":
        import uvloop

        run = uvloop.run
    raw = run(
        _drive(args.port, args.level, args.seconds, args.warmup, args.server_pid, args.max_requests)
    )
    with open(args.out, "w") as handle:
        json.dump(raw, handle)


# --- this process ---------------------------------------------------------------------------


def _percentile(ordered: list[int], q: float) -> float:
    """Nearest-rank percentile of nanosecond values, in milliseconds."""
    if not ordered:
        return math.nan
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] / 1e6


def _row(clients: int, raw: dict[str, Any], pauses: list[list[int]] | None) -> str:
    latencies: list[int] = raw["latencies"]
    answered = len(latencies)
    statuses = {int(k): v for k, v in raw["statuses"].items()}
    not_found = statuses.get(404, 0)
    errors = answered - statuses.get(200, 0) - not_found + raw["failures"]
    per = max(raw["completed"], 1)
    share = max(answered + raw["failures"], 1)
    server = raw["server_user"] + raw["server_sys"]
    if pauses is None:
        gc_text = "n/a"
    else:
        inside = [p for p in pauses if raw["began"] <= p[0] < raw["ended"]]
        full = sum(1 for p in inside if p[2] == 2)
        gc_text = f"{max((p[1] for p in inside), default=0) / 1e6:.1f}/{full}"
    return (
        f"{clients:>7} {raw['completed']:>8} {raw['completed'] / raw['wall']:>7.0f} "
        f"{_percentile(latencies, 0.5):>7.2f} {_percentile(latencies, 0.9):>7.2f} "
        f"{_percentile(latencies, 0.99):>7.2f} {(latencies[-1] / 1e6 if latencies else 0):>7.2f} "
        f"{100 * not_found / share:>6.2f}% {100 * errors / share:>6.2f}% "
        f"{server / per * 1e6:>6.0f} {100 * raw['server_sys'] / max(server, 1e-9):>4.0f}% "
        f"{100 * server / raw['wall']:>6.0f}% {raw['own_cpu'] / per * 1e6:>6.0f} {gc_text:>8}"
    )


def _httpx_check(port: int) -> int:
    """Send every route once with httpx; raise unless each is a 200 carrying one quote."""
    import httpx

    with httpx.Client(
        base_url=f"http://{HOST}:{port}", headers={"X-Auth-Token": KEY}, timeout=10
    ) as client:
        for query in _routes():
            answer = client.get(PATH, params=query)
            problem = None if answer.status_code == 200 else f"status {answer.status_code}"
            problem = problem or _check_quote(answer.content)
            if problem:
                raise SystemExit(f"correctness check failed for {query}: {problem}")
    return len(_routes())


def _loaded_modules(pid: int) -> str:
    """Which of the compiled loop/parser modules the server process has mapped."""
    with open(f"/proc/{pid}/maps") as handle:
        maps = handle.read()
    found = [name for name in ("uvloop", "httptools") if f"/{name}/" in maps]
    return ", ".join(found) or "neither uvloop nor httptools"


def _print_profile(path: str, top: int) -> None:
    import pstats

    stats = pstats.Stats(path)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measured seconds per level")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds per level")
    parser.add_argument("--clients", default="1,16,64", help="concurrency levels")
    parser.add_argument("--max-requests", type=int, default=200_000, help="cap per level")
    parser.add_argument("--no-pin", action="store_true", help="do not pin processes to CPUs")
    parser.add_argument(
        "--generator-loop",
        choices=["uvloop", "asyncio"],
        default="uvloop" if importlib.util.find_spec("uvloop") else "asyncio",
        help="event loop of the load generator",
    )
    parser.add_argument("--profile", type=int, default=0, help="profile the server, print top N")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--profile-file", help=argparse.SUPPRESS)
    parser.add_argument("--level", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--server-pid", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--cpu", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(args.cpu, args.profile_file)
        return 0
    if args.level is not None:
        _generate(args)
        return 0
    levels = [int(x) for x in args.clients.split(",")]
    pinned = not args.no_pin and hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2
    script = os.path.abspath(__file__)
    profile_file = (
        os.path.join(tempfile.gettempdir(), f"bench_server.{os.getpid()}.prof")
        if args.profile
        else None
    )
    command = [sys.executable, script, "--serve"]
    command += ["--cpu", "0"] if pinned else []
    command += ["--profile-file", profile_file] if profile_file else []
    load_before = os.getloadavg()[0]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    results: list[tuple[int, dict[str, Any]]] = []
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if not line:
            raise SystemExit("server: exited during start-up")
        hello = json.loads(line)
        port = hello["port"]
        checked = _httpx_check(port)  # also waits for the server to start answering
        mapped = _loaded_modules(server.pid)
        sampled = 0
        for clients in levels:
            raw = _run_level(script, port, server.pid, clients, args, pinned)
            for body in raw["samples"]:
                problem = _check_quote(body)
                if problem:
                    raise SystemExit(f"load-generator response check failed: {problem}")
            sampled += len(raw["samples"])
            results.append((clients, raw))
        checked += _httpx_check(port)
    finally:
        # SIGINT, not SIGTERM: uvicorn re-raises the signal once it has shut down, and only
        # KeyboardInterrupt lets the server's finally block report its GC pauses and profile.
        server.send_signal(signal.SIGINT)
        remaining, _ = server.communicate(timeout=15)
    pauses: list[list[int]] = json.loads(remaining.strip().splitlines()[-1])
    # The load generator's window bounds and the server's GC times are both perf_counter_ns
    # values: comparable across processes only where that is the system-wide monotonic clock.
    same_clock = "CLOCK_MONOTONIC" in time.get_clock_info("perf_counter").implementation
    print(
        f"embedded service, scenario default: uvicorn --loop {hello['loop']} --http "
        f"{hello['http']} (mapped in the server: {mapped}); Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {load_before:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after"
    )
    print(
        f"load: asyncio-streams keep-alive client on {args.generator_loop}, one process per "
        "level; "
        + ("server on CPU 0, load generator on CPU 1" if pinned else "processes not pinned")
        + (" [server under cProfile]" if profile_file else "")
    )
    print(
        f"GET {PATH}, 50 USDC over 12 routes, {args.warmup:g} s warm-up + "
        f"{args.seconds:g} s measured per level"
    )
    print()
    print(
        f"{'clients':>7} {'requests':>8} {'req/s':>7} {'p50 ms':>7} {'p90 ms':>7} "
        f"{'p99 ms':>7} {'max ms':>7} {'404':>7} {'err':>7} {'srv us':>6} {'sys':>5} "
        f"{'srv cpu':>7} {'gen us':>6} {'gc ms/n':>8}"
    )
    for clients, raw in results:
        print(_row(clients, raw, pauses if same_clock else None))
    print()
    print(
        f"checked: {checked} httpx responses (200 with one quote), "
        f"{sampled} sampled load-generator bodies"
    )
    longest = [max((p[1] for p in pauses if p[2] == g), default=0) / 1e6 for g in range(3)]
    print(
        "server GC over the whole run, start-up included (gen 0/1/2): collections "
        + "/".join(str(sum(1 for p in pauses if p[2] == g)) for g in range(3))
        + ", longest pause ms "
        + "/".join(f"{t:.1f}" for t in longest)
    )
    if profile_file:
        print()
        _print_profile(profile_file, args.profile)
        os.remove(profile_file)
    return 0


def _run_level(
    script: str, port: int, server_pid: int, clients: int, args: argparse.Namespace, pinned: bool
) -> dict[str, Any]:
    """Run one level in a load-generator process; its raw figures."""
    command = [sys.executable, script, "--level", str(clients), "--port", str(port)]
    command += ["--server-pid", str(server_pid), "--seconds", str(args.seconds)]
    command += ["--warmup", str(args.warmup), "--max-requests", str(args.max_requests)]
    command += ["--generator-loop", args.generator_loop]
    command += ["--cpu", "1"] if pinned else []
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        done = subprocess.run(
            [*command, "--out", out.name],
            capture_output=True,
            text=True,
            timeout=args.warmup + args.seconds + 60,
        )
        if done.returncode != 0:
            raise SystemExit(f"load generator failed:\n{done.stderr}")
        raw: dict[str, Any] = json.load(out)
    return raw


if __name__ == "__main__":
    raise SystemExit(main())
