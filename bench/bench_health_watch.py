"""Alert latency of the health watch: from the block whose prices cross a threshold to the
alert's arrival at a webhook, over a simulated drawdown on the wall clock.

The embedded default scenario (its credit book cut to ``--accounts`` accounts) is served over
loopback on the wall clock, Base mining a block every 2 s; yoBTC falls 50 % over ``--fall-s``
seconds starting 20 s in. :class:`toolkit.collect.HealthWatch` follows it, polling every
``--cadence-s`` seconds with eleven rules (health factor below 1.50, 1.45, ..., 1.00), and posts
to a :class:`toolkit.testing.WebhookReceiver` on loopback. Each alert's latency is its arrival
time less its block's timestamp (the simulated chain shows a block as its head from that
time on, as a node shows a block once it has it). The alerts of the first poll (the
book as found, not a crossing the watch waited for) are left out. Printed: alerts, p50, p99 and
max latency, the polls' mean duration, and the load average (two cores shared by every job
on this machine).

Run: ``.venv/bin/python bench/bench_health_watch.py [--accounts 400] [--fall-s 90]
[--cadence-s 0.5]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from decimal import Decimal

from toolkit.client import ServiceClient, Webhook, chain_web3
from toolkit.collect import HealthWatch
from toolkit.models.health import AlertRule
from toolkit.scenario import drawdown, load_scenario, with_collateral_prices
from toolkit.server import create_app, serve_in_thread
from toolkit.store import Store
from toolkit.testing import WebhookReceiver

RULES = tuple(
    AlertRule(f"hf_below_{t:.2f}", "health_below", Decimal(f"{t:.2f}"))
    for t in (1.5 - 0.05 * k for k in range(11))
)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=400)
    parser.add_argument("--fall-s", type=int, default=90)
    parser.add_argument("--cadence-s", type=float, default=0.5)
    args = parser.parse_args()
    base = load_scenario("default")
    assert base.credit is not None
    start = int(time.time())
    scenario = with_collateral_prices(
        replace(base, credit=replace(base.credit, book_accounts=args.accounts)),
        "yoBTC",
        drawdown(60_000, at_s=start + 20, share=0.5, over_s=args.fall_s),
    )
    store = Store(":memory:")
    with serve_in_thread(create_app(scenario)) as url, WebhookReceiver() as receiver:
        client = ServiceClient(url, api_key="demo-key", env={})
        w3 = chain_web3(8453, url=f"{url}/rpc/8453")
        hook = Webhook(receiver.url)
        watch = HealthWatch(client, w3, store, webhook=hook, rules=RULES, cadence_s=args.cadence_s)
        watch.poll(time.time())
        first = watch.block
        initial = len(receiver.bodies)
        durations = []
        deadline = start + 20 + args.fall_s + 10
        while time.time() < deadline:
            began = time.time()
            status = watch.poll(began)
            durations.append(time.time() - began)
            if status.last_error:
                print(f"poll error: {status.last_error}")
            time.sleep(max(0.0, began + args.cadence_s - time.time()))
        client.close()
        w3.provider.close()  # type: ignore[attr-defined]
        hook.close()
        times = store.query("SELECT alert_id, epoch(block_time) AS t FROM alerts")
        block_time = dict(times.iter_rows())
        latencies = [
            arrived - block_time[body["alert_id"]]
            for body, arrived in zip(
                receiver.bodies[initial:], receiver.arrivals[initial:], strict=True
            )
            if body["block_number"] > (first or 0)
        ]
    print(
        f"load average {os.getloadavg()[0]:.2f}; {args.accounts} accounts, cadence "
        f"{args.cadence_s} s, Base blocks every 2 s, yoBTC -50 % over {args.fall_s} s"
    )
    states = store.query("SELECT state, count(*) AS n FROM alerts GROUP BY state ORDER BY state")
    print("alerts by state: " + ", ".join(f"{state} {n}" for state, n in states.iter_rows()))
    if not latencies:
        print("no crossing after the first poll")
        return 1
    print(
        f"{len(latencies)} alerts, latency from the block: p50 {_quantile(latencies, 0.5):.2f} s, "
        f"p99 {_quantile(latencies, 0.99):.2f} s, max {max(latencies):.2f} s; "
        f"{len(durations)} polls, mean {statistics.fmean(durations) * 1000:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
