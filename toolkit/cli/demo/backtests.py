"""The demo's backtests, run in a worker process: a day of order flow, and a pool_scale
sweep of the day's mean rate under two rebalancing policies (capital against 404 rate, per
policy); and their storing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from toolkit.backtest import BacktestResult
    from toolkit.store import Store

__all__ = [
    "POOL_SCALES",
    "SWEEP_HOURS",
    "SWEEP_POLICIES",
    "replay_day",
    "replay_scales",
    "store_backtest",
    "store_sweep",
]

#: Pool balances of the demo's capital sweep, as factors on the default scenario's: down to a
#: few thousandths, where the calibrated flow (:data:`toolkit.cli.backtest.DEFAULT_RATE`)
#: starts to meet 404s.
POOL_SCALES: tuple[float, ...] = (0.003, 0.01, 0.03, 0.1, 1.0)
#: Hours of flow the capital sweep replays, at the day's mean rate (a day: enough requests at
#: the plausible rate for a 404 share to mean something).
SWEEP_HOURS = 24.0
#: The rebalancing policies the capital sweep compares on one flow: the default scenario's
#: (threshold, bridges with sourced costs) and none (a chain lives on what settlements bring).
SWEEP_POLICIES: tuple[str, ...] = ("threshold", "none")


def replay_day(rate: float, seed: int) -> BacktestResult:
    """A day of order flow on the default scenario, replayed (in the worker process)."""
    from toolkit.backtest import generate_flow, replay
    from toolkit.scenario import load_scenario

    scenario = load_scenario("default")
    flow = generate_flow(scenario, span_h=24, rate_per_s=rate, seed=seed)
    return replay(flow, scenario, seed=seed)


def replay_scales(rate: float, seed: int) -> list[tuple[str, float, BacktestResult]]:
    """:data:`SWEEP_HOURS` of flow at the day's mean rate (no daily profile) at each of
    :data:`POOL_SCALES` under each of :data:`SWEEP_POLICIES` (in the worker process): what more
    or less pool capital, and rebalancing or not, do to the 404 rate and the return."""
    from toolkit.backtest import generate_flow, replay
    from toolkit.scenario import load_scenario

    scenario = load_scenario("default")
    flow = generate_flow(scenario, span_h=SWEEP_HOURS, rate_per_s=rate, seed=seed, profile=None)
    return [
        (
            policy,
            scale,
            replay(
                flow,
                scenario,
                seed=seed,
                overrides={"pool_scale": scale, "rebalancing.policy": policy},
            ),
        )
        for policy in SWEEP_POLICIES
        for scale in POOL_SCALES
    ]


def store_sweep(store: Store, results: list[tuple[str, float, BacktestResult]], step: Any) -> None:
    """Store the sweep's runs; print, per policy, each scale's share refused for capacity and
    what rebalancing cost."""
    for policy in dict.fromkeys(p for p, _, _ in results):
        mine = [(scale, r.summary) for p, scale, r in results if p == policy]
        shares = ", ".join(f"x{scale:g}: {100 * s.no_capacity_share:.1f} %" for scale, s in mine)
        step(f"pool_scale sweep under {policy}, requests refused for capacity: {shares}")
        if policy != "none":
            spent = ", ".join(
                f"x{scale:g}: {s.transfers} (${s.rebalancing_cost_usd:,.0f})" for scale, s in mine
            )
            step(f"  transfers (rebalancing cost): {spent}")
    for _, _, result in results:
        result.to_store(store)


def store_backtest(store: Store, result: BacktestResult, stream: TextIO, step: Any) -> None:
    """Store the day's backtest and print its summary."""
    from toolkit.cli.backtest import format_summary
    from toolkit.scenario import load_scenario

    scenario = load_scenario("default")
    requests = result.summary.requests
    step(f"backtest: a day of flow on the default scenario, {requests:,} requests")
    run_id = result.to_store(store)
    decimals = {p.id: scenario.token(p.chain, p.token).decimals for p in scenario.pools}
    decimals.update({t.symbol: t.decimals for t in scenario.tokens})  # inventory, by token
    print(format_summary(result.summary, decimals), file=stream)
    step(f"  backtest stored as run {run_id}")
