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

``--horizons`` prints instead the figures before and after inventory had a chain, over a day, a
week and a month: instant-free (the toolkit's books before), none and threshold (the default
scenario's policy), five seeds per horizon on both flows: the 404 share pooled over the seeds
with its Wilson 95 % interval, the rebalancing cost in bps of the filled volume and the
annualised return on capital net of rebalancing, each the mean of the seeds with its Student-t
95 % interval.

Run: ``.venv/bin/python bench/bench_rebalancing.py [--days 30] [--repeats 2] [--horizons]``.
Prints plain tables.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import polars as pl

from toolkit.backtest import generate_flow, replay
from toolkit.models.intervals import mean_interval, wilson
from toolkit.scenario import load_scenario

POLICIES = ("instant-free", "none", "threshold", "periodic")
RATE = 0.03  # toolkit backtest's calibrated mean rate (toolkit/cli/backtest.py)


def flows(days: float, seed: int = 1) -> dict[str, pl.DataFrame]:
    """The two flows of the module docstring."""
    scenario = load_scenario("default")
    hours = 24.0 * days
    directional = {(r.src, r.dst, r.token): 3.0 if r.dst == 8453 else 1.0 for r in scenario.routes}
    return {
        "calibrated": generate_flow(scenario, span_h=hours, rate_per_s=RATE, seed=seed),
        "into Base x3": generate_flow(
            scenario, span_h=hours, rate_per_s=RATE, seed=seed, routes=directional
        ),
    }


def _between(values: list[float], digits: int) -> str:
    mean, low, high = mean_interval(values)
    assert mean is not None and low is not None and high is not None
    if min(values) >= 0:  # a cost or a share: the t-interval's lower end stops at 0
        low = max(low, 0.0)
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def horizons(seeds: range = range(1, 6)) -> None:
    """The ``--horizons`` tables of the module docstring."""
    for days, label in ((1.0, "a day"), (7.0, "a week"), (30.0, "a month")):
        runs: dict[tuple[str, str], list[Any]] = {}
        for seed in seeds:
            for name, flow in flows(days, seed).items():
                for policy in ("instant-free", "none", "threshold"):
                    overrides = {"rebalancing.policy": policy}
                    summary = replay(flow, "default", seed=seed, overrides=overrides).summary
                    runs.setdefault((name, policy), []).append(summary)
        rows = []
        for (name, policy), summaries in runs.items():
            refused = sum(s.no_capacity for s in summaries)
            attempts = sum(s.attempts for s in summaries)
            low, high = wilson(refused, attempts)
            rows.append(
                [
                    name,
                    policy,
                    f"{attempts:,}",
                    f"{100 * refused / attempts:.3f} % [{100 * low:.3f}, {100 * high:.3f}]",
                    _between([s.rebalancing_cost_bps for s in summaries], 3),
                    _between([s.net_annualised_return_pct for s in summaries], 2) + " %",
                ]
            )
        table(
            f"{label} of flow at {RATE} RFQs/s, default scenario, seeds {seeds.start}-"
            f"{seeds.stop - 1} (95 % intervals)",
            ["flow", "policy", "attempts", "404 share", "rebalancing bps", "net return/yr"],
            rows,
        )


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
    parser.add_argument(
        "--horizons", action="store_true", help="figures over a day, a week and a month instead"
    )
    args = parser.parse_args(argv)
    if args.horizons:
        horizons()
        return 0
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
