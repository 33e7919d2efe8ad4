"""RFQ sweep throughput: attempts per second, in-process and over loopback, with and without
DuckDB writes.

Targets:
- ``in-process``: the embedded service through the client's streaming ASGI transport (no socket).
- ``loopback``: the same app served by uvicorn in a subprocess on 127.0.0.1.

Modes:
- ``client only``: the sweep's requests (``ServiceClient.rfq`` over the grid), rows not built.
- ``sweep + DuckDB``: :class:`toolkit.collect.RfqSweep` into a temporary DuckDB file (every
  attempt a row, batched idempotent appends, run bookkeeping).

The grid is the default one discovered from the target, restricted to each route's lowest fee
tier so that most quotes succeed; retries are off, so one request is one attempt and a capacity
404 is counted, not waited on. Each figure is the best of ``REPEATS`` runs on a fresh service
after one warm-up round. Run: ``.venv/bin/python bench/bench_collect.py``.

Reading the figures: in-process, the app runs on an event loop in a second thread of the same
interpreter, so client and service share one GIL and their costs add up; over loopback the
service is another process and the two overlap (on two cores), at the price of a socket.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections import Counter
from pathlib import Path

from loopback import start_loopback

from toolkit.client import Attempt, RetryPolicy, ServiceClient, ServiceError
from toolkit.collect import GridPoint, RfqSweep, discover_routes, grid_for, tier_amounts
from toolkit.store import Store

ROUNDS = 20
REPEATS = 3


def light_grid(client: ServiceClient) -> list[GridPoint]:
    routes = discover_routes(client)
    amounts: dict[str, list[int]] = {}
    for route in routes:
        amounts.setdefault(route.token, [tier_amounts(route.tiers)[0]])
    return grid_for(routes, amounts=amounts)


def client_only(client: ServiceClient, grid: list[GridPoint]) -> tuple[int, float, Counter[int]]:
    statuses: Counter[int] = Counter()

    def count(attempt: Attempt) -> None:
        statuses[attempt.status] += 1

    started = time.perf_counter()
    for _ in range(ROUNDS):
        for point in grid:
            with contextlib.suppress(ServiceError):
                client.rfq(
                    src_chain=point.src_chain,
                    dst_chain=point.dst_chain,
                    amount=point.amount,
                    token=point.dst_token,
                    src_token=point.src_token,
                    user="0x00000000000000000000000000000000C011EC70",
                    type=point.quote_type,  # type: ignore[arg-type]
                    on_attempt=count,
                )
    return sum(statuses.values()), time.perf_counter() - started, statuses


def with_store(client: ServiceClient, grid: list[GridPoint]) -> tuple[int, float, Counter[int]]:
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "bench.duckdb") as store:
        started = time.perf_counter()
        result = RfqSweep(
            client, store, grid=grid, rounds=ROUNDS, interval_s=1e-6, progress=False
        ).run()
        elapsed = time.perf_counter() - started
        frame = store.query(
            "SELECT status, count(*) AS n FROM rfq_observations WHERE run_id = ? GROUP BY 1",
            [result.run_id],
        )
    statuses = Counter({int(s): int(n) for s, n in frame.iter_rows()})
    return sum(statuses.values()), elapsed, statuses


Run = tuple[int, float, Counter[int]]


def warm(client: ServiceClient, grid: list[GridPoint]) -> None:
    for point in grid:
        with contextlib.suppress(ServiceError):
            client.rfq(
                src_chain=point.src_chain,
                dst_chain=point.dst_chain,
                amount=point.amount,
                token=point.dst_token,
                user="0x00000000000000000000000000000000C011EC70",
            )


def best(results: list[Run]) -> Run:
    return min(results, key=lambda result: result[1])


def main() -> None:
    rows: list[tuple[str, str, int, float, Counter[int]]] = []
    policy = RetryPolicy.no_retries()
    grid: list[GridPoint] = []
    for mode, run in (("client only", client_only), ("sweep + DuckDB", with_store)):
        results = []
        for _ in range(REPEATS):
            # A fresh service per measurement, so reservations from the last one do not linger.
            with ServiceClient(embedded=True, env={}, retry=policy) as client:
                grid = light_grid(client)
                warm(client, grid)
                results.append(run(client, grid))
        rows.append(("in-process", mode, *best(results)))
        results = []
        for _ in range(REPEATS):
            process, url = start_loopback()
            try:
                with ServiceClient(url, api_key="demo-key", retry=policy) as client:
                    grid = light_grid(client)
                    warm(client, grid)
                    results.append(run(client, grid))
            finally:
                process.terminate()
                process.wait(timeout=10)
        rows.append(("loopback", mode, *best(results)))

    print(f"RFQ sweep throughput ({ROUNDS} rounds of a {len(grid)}-point grid, no retries)")
    print()
    header = f"{'target':<12} {'mode':<16} {'attempts':>8} {'seconds':>8} {'attempts/s':>11}"
    print(header + f" {'200':>6} {'404':>6}")
    print("-" * (len(header) + 14))
    for target, mode, count, seconds, statuses in rows:
        ok = statuses.get(200, 0) / count if count else 0.0
        busy = statuses.get(404, 0) / count if count else 0.0
        print(
            f"{target:<12} {mode:<16} {count:>8} {seconds:>8.2f} {count / seconds:>11.1f}"
            f" {ok:>6.0%} {busy:>6.0%}"
        )


if __name__ == "__main__":
    main()
