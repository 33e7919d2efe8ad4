"""Capital-placement benchmark: the search over 4 chains × 3 tokens, timed, and its answer.

The default scenario has two tokens (USDC, WETH). For a third, this script adds DAI to it: a
pool of 2M DAI on each of its four chains (the registry's DAI addresses), the USDC fee tiers
scaled to 18 decimals, and a bridge modelled on the default scenario's Across entry (fast
intent bridge: median 90 s, p95 240 s, 5 bps; DAI has no burn-and-mint transfer like CCTP).
The flow is the default generator's (equal weights over the 36 routes, log-normal sizes with a
median of about 5,000 USD) at 0.045 RFQs/s, so each token sees the default's 0.015 RFQs/s.

Steps, each timed in CPU seconds:

1. the flow the surrogate reads: 28 days, then each holding's demand (net flow with its
   variance, RFQs, sizes, holds) and how transfers reach it;
2. the search (:func:`toolkit.models.placement.search_placement`): every policy (none,
   threshold, periodic 1 h / 4 h / 24 h) for a 404 share ≤ 1 % over a week at 3.5 % a year;
3. with ``--verify N``, the two cheapest candidates replayed on the engine over N seeded weeks
   (:func:`toolkit.backtest.capital.verify_placements`), means and 95 % intervals.

Measured (2 cores shared with other engineers' test runs, so CPU seconds vary ~20 %):
see the commit that last changed this docstring.

Run: ``.venv/bin/python bench/bench_placement.py [--verify 3]``. Prints plain tables.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from decimal import Decimal

import polars as pl

from toolkit.backtest.capital import verify_placements
from toolkit.backtest.placement import (
    holding_bridgings,
    holding_demands,
    holding_keys,
    token_usd,
)
from toolkit.flows import generate_flow
from toolkit.models.placement import PlacementProblem, search_placement
from toolkit.scenario import Bridge, FeeTier, Pool, Route, Scenario, Token, load_scenario
from toolkit.scenario.rebalancing import BridgeLatency

DAI = {
    1: "0x6B175474E89094C44Da98b954EedeAC495271d0F",
    10: "0xDA10009cBd5D07dd0CeCc66161FC93D7c9000da1",
    8453: "0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb",
    42161: "0xDA10009cBd5D07dd0CeCc66161FC93D7c9000da1",
}
#: A simulation address for the DAI pools (no such deployment is modelled).
POOL = "0x9C6f1Cc8a1C4f4B1a43A07B7f1A2f3b3a0bb2C01"
RATE = 0.045
HORIZON_S = 7 * 86_400.0
BOUND = 0.01
CAPITAL_RATE = 0.035


def three_tokens() -> Scenario:
    """The default scenario plus DAI (module docstring)."""
    base = load_scenario("default")
    chains = sorted({t.chain for t in base.tokens})
    scale = 10**12  # USDC's 6 decimals to DAI's 18
    usdc_tiers = next(r.fee_tiers for r in base.routes if r.token == "USDC")
    tiers = tuple(
        FeeTier(t.fee_bps, t.min_amount * scale, t.max_amount * scale) for t in usdc_tiers
    )
    across = next(b for b in base.bridges if b.token == "WETH" and b.src is None)
    return dataclasses.replace(
        base,
        name="default-with-dai",
        tokens=(*base.tokens, *(Token(c, "DAI", DAI[c], 18) for c in chains)),
        pools=(*base.pools, *(Pool(c, "DAI", "aave", POOL, 2_000_000 * 10**18) for c in chains)),
        routes=(
            *base.routes,
            *(Route(s, d, "DAI", tiers) for s in chains for d in chains if s != d),
        ),
        pricing=dataclasses.replace(
            base.pricing, prices_usd=(*base.pricing.prices_usd, ("DAI", Decimal(1)))
        ),
        bridges=(
            *base.bridges,
            Bridge(
                "DAI", "Across (fast intent bridge), as the default's WETH entry",
                BridgeLatency(across.latency_s.median, across.latency_s.p95), across.fee_bps,
                "the default scenario's Across entry (docs.across.to)",
            ),
        ),
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verify", type=int, default=0, help="seeded weeks to replay (0: none)")
    args = parser.parse_args()
    scenario = three_tokens()
    keys = holding_keys(scenario)
    started = time.process_time()
    flow = generate_flow(scenario, span_h=28 * 24.0, rate_per_s=RATE, seed=0)
    demands = holding_demands(scenario, flow, span_s=28 * 86_400.0)
    bridgings = holding_bridgings(scenario)
    inputs_s = time.process_time() - started
    start_usd = [
        sum(p.balance for p in scenario.pools if (p.chain, p.token) == k)
        * token_usd(scenario, k[1])
        for k in keys
    ]
    started = time.process_time()
    problem = PlacementProblem.build(
        demands, [bridgings[k] for k in keys], horizon_s=HORIZON_S, max_share_404=BOUND,
        capital_rate=CAPITAL_RATE, start_usd=start_usd,
        overshoot_share=float(scenario.rebalancing.overshoot_share),
        min_transfer_usd=float(scenario.rebalancing.min_transfer_usd),
    )  # fmt: skip
    found = search_placement(problem)
    search_s = time.process_time() - started
    tokens = sorted({k[1] for k in keys})
    chains = len({k[0] for k in keys})
    print(
        f"capital placement, {chains} chains x {len(tokens)} tokens ({', '.join(tokens)}), "
        f"{len(keys)} holdings; {flow.height:,} RFQs over 28 days read"
    )
    print(f"inputs (flow, net flow, demands) {inputs_s:6.2f} CPU s")
    print(f"search (every policy)            {search_s:6.2f} CPU s")
    print(
        f"\nbest per policy, 404 share <= {BOUND:.0%} over a week, "
        f"capital at {CAPITAL_RATE:.1%} a year"
    )
    print(f"{'policy':<14} {'capital USD':>13} {'404 share':>10} {'cost USD':>10} "
          f"{'lower bound':>12} {'fixed point':>12}")  # fmt: skip
    for p in found:
        print(
            f"{p.label:<14} {p.capital_usd:>13,.0f} {100 * p.share_404:>9.2f}% "
            f"{p.cost_usd:>10,.0f} {p.lower_bound_usd:>12,.0f} {p.converged!s:>12}"
        )
    best = found[0]
    print(f"\nthe answer ({best.label}): capital per holding, USD")
    table = best.holdings.select(
        "chain", "token", pl.col("capital_usd").round(0), "threshold_fraction",
        (100 * pl.col("refused_share")).round(3).alias("refused_pct"),
        pl.col("transfers").round(1), pl.col("rebalancing_cost_usd").round(0),
    )  # fmt: skip
    with pl.Config(tbl_rows=20, tbl_cols=10, tbl_hide_dataframe_shape=True):
        print(table)
    if args.verify:
        started = time.process_time()
        checked = verify_placements(
            scenario, found[:2], max_share_404=BOUND, span_h=HORIZON_S / 3600,
            seeds=tuple(range(1, args.verify + 1)), rate_per_s=RATE, capital_rate=CAPITAL_RATE,
        )  # fmt: skip
        print(f"\nreplayed on the engine, {args.verify} seeded weeks each "
              f"({time.process_time() - started:.1f} CPU s): means and 95 % intervals")  # fmt: skip
        with pl.Config(tbl_cols=12, tbl_hide_dataframe_shape=True, tbl_width_chars=160):
            print(checked.select(
                "label", pl.col("predicted_share_404").round(4), pl.col("share_404_mean").round(4),
                pl.col("share_404_low").round(4), pl.col("share_404_high").round(4),
                pl.col("predicted_cost_usd").round(0), pl.col("cost_usd_mean").round(0),
                pl.col("cost_usd_low").round(0), pl.col("cost_usd_high").round(0), "verified",
            ))  # fmt: skip


if __name__ == "__main__":
    main()
