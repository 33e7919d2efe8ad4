"""Rebalancing benchmark: a 30-day replay under each rebalancing policy against the same replay
under the instant-free baseline (issue 29's goal: under 2x the time).

Two flows of the default scenario, 30 days each, seed 1, generated once and replayed under
every policy with the same seed (common random numbers):

1. the calibrated flow (0.03 RFQs/s, every route equally likely: ``toolkit backtest``'s);
2. a directional one: the same rate, routes into Base three times as likely as the others, so
   that inventory drifts toward the origins and the policies have work to do.

Each replay is timed in CPU seconds (``time.process_time``, best of ``--repeats``) and printed
with its ratio to instant-free, its transfers, the volume they moved and what they cost, the
404 share and the return on capital net of rebalancing. The instant-free column is the
toolkit's behaviour before inventory had a chain (its frames hash identically), so the ratio is
what the new books and the policy cost.

Run: ``.venv/bin/python bench/bench_rebalancing.py [--days 30] [--repeats 2]``. Prints plain
tables.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import polars as pl

from toolkit.backtest import generate_flow, replay
from toolkit.scenario import load_scenario

POLICIES = ("instant-free", "none", "threshold", "periodic")
RATE = 0.03  # toolkit backtest's calibrated mean rate (toolkit/cli/backtest.py)


def flows(days: float) -> dict[str, pl.DataFrame]:
    """The two flows of the module docstring."""
    scenario = load_scenario("default")
    hours = 24.0 * days
    directional = {(r.src, r.dst, r.token): 3.0 if r.dst == 8453 else 1.0 for r in scenario.routes}
    return {
        "calibrated": generate_flow(scenario, span_h=hours, rate_per_s=RATE, seed=1),
        "into Base x3": generate_flow(
            scenario, span_h=hours, rate_per_s=RATE, seed=1, routes=directional
        ),
    }


def timed(flow: pl.DataFrame, policy: str, repeats: int) -> tuple[float, Any]:
    """Best CPU seconds of ``repeats`` replays under ``policy``, and the last summary."""
    best, summary = float("inf"), None
    for _ in range(repeats):
        start = time.process_time()
        result = replay(flow, "default", seed=1, overrides={"rebalancing.policy": policy})
        best = min(best, time.process_time() - start)
        summary = result.summary
    return best, summary


def table(title: str, header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=float, default=30.0, help="days of flow (default 30)")
    parser.add_argument("--repeats", type=int, default=2, help="timed replays per policy")
    args = parser.parse_args(argv)
    print(f"Python {sys.version.split()[0]}; CPU seconds, best of {args.repeats}")
    for name, flow in flows(args.days).items():
        rows = []
        base = None
        for policy in POLICIES:
            cpu, s = timed(flow, policy, args.repeats)
            base = cpu if policy == "instant-free" else base
            assert base is not None
            rows.append(
                [
                    policy,
                    f"{cpu:.2f}",
                    f"{cpu / base:.2f}x",
                    f"{s.filled:,}",
                    f"{100 * s.rfq_404_share:.2f} %",
                    f"{s.transfers:,}",
                    f"{s.rebalanced_volume_usd:,.0f}",
                    f"{s.rebalancing_cost_usd:,.2f}",
                    f"{s.rebalancing_cost_bps:.3f}",
                    f"{s.net_annualised_return_pct:.2f} %",
                ]
            )
        table(
            f"{name}: {flow.height:,} requests over {args.days:g} days, default scenario, seed 1",
            ["policy", "CPU s", "vs instant-free", "filled", "404 share", "transfers",
             "moved USD", "cost USD", "cost bps", "net return/yr"],
            rows,
        )  # fmt: skip
    print("\n   goal: every policy under 2x the instant-free replay's CPU time")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
