"""``toolkit backtest``: replay a generated day of order flow and print a short summary."""

from __future__ import annotations

import argparse
import math
import sys
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TextIO

from toolkit.cli.argtypes import integer, real

if TYPE_CHECKING:
    from toolkit.backtest import BacktestSummary

#: Mean RFQs per second of ``toolkit backtest``'s and the demo's day of flow, calibrated to
#: public figures of comparable cross-chain services (../shared/research/economics.md): on the
#: default scenario's $28.2M of pool capital it fills about $8M a day (daily volume a fraction
#: of committed capital, as Across's LP pools: ~$3.4M a day on ~$50M) at ~5 bps of fees, about
#: 5 % a year on capital (Across LPs: ~3.3 %). About 30 % of RFQs convert: ~2,600 RFQs and
#: ~770 fills a day.
DEFAULT_RATE = 0.03

__all__ = ["POLICY_WORDS", "add_arguments", "format_summary", "pool_label", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``backtest`` options to ``parser``.

    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args(["--hours", "2"]).hours
    2.0
    """
    parser.add_argument("--scenario", default="default", help="scenario name (default: default)")
    parser.add_argument(
        "--hours", type=real(above=0), default=24.0, help="virtual hours of flow (default: 24)"
    )
    parser.add_argument(
        "--rate",
        type=real(minimum=0),
        default=DEFAULT_RATE,
        help=f"mean RFQs per second before the daily profile (default: {DEFAULT_RATE:g}, the "
        "demo's flow calibrated to comparable services' volume against capital)",
    )
    parser.add_argument(
        "--seed", type=integer(minimum=0), default=0, help="random seed (default: 0)"
    )
    parser.add_argument(
        "--retries",
        type=integer(minimum=0),
        default=0,
        help="client retries after a 404, with exponential backoff (default: 0)",
    )
    parser.add_argument(
        "--db", default=None, metavar="PATH", help="also write the result to this DuckDB file"
    )
    sweeping = parser.add_argument_group(
        "sweeps", "replay the same flow over a grid of scenario variants, one row per point"
    )
    sweeping.add_argument(
        "--sweep",
        type=grid_axis,
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="a grid axis, e.g. pool_scale=0.5,1,2 or quote_s=15,60 (repeatable)",
    )
    where = sweeping.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=integer(minimum=1),
        default=None,
        help="run the sweep on a local Dask cluster of this many worker processes",
    )
    where.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the sweep on an existing Dask cluster (e.g. tcp://host:8786)",
    )


def grid_axis(text: str) -> tuple[str, list[float | str]]:
    """An argparse type for ``KEY=V1,V2,...``: the key and its values as numbers (whole
    numbers stay integers: windows are whole seconds), or as words for
    ``rebalancing.policy``.

    >>> grid_axis("pool_scale=0.5,1,2"), grid_axis("rebalancing.policy=none,threshold")
    (('pool_scale', [0.5, 1, 2]), ('rebalancing.policy', ['none', 'threshold']))
    """
    key, sep, values = text.partition("=")
    words = [v.strip() for v in values.split(",")]
    items: list[float | str] = []
    if key == "rebalancing.policy":
        items = [w for w in words if w]
    else:
        try:
            items = [int(w) if w.lstrip("-").isdigit() else float(w) for w in words]
        except ValueError:
            items = []
    if not sep or not key or not items or len(items) != len(words):
        raise argparse.ArgumentTypeError(f"must be KEY=V1,V2,... with numbers, got {text!r}")
    return key, items


def pool_label(pool: str) -> str:
    """A pool id (``chain:TOKEN:name``) as people read it: chain name, token, pool name.

    >>> pool_label("8453:USDC:usdc"), pool_label("42161:WETH:aave")
    ('Base USDC (usdc)', 'Arbitrum WETH (aave)')
    """
    from toolkit.report.units import chain_name

    chain, token, name = pool.split(":", 2)
    return f"{chain_name(int(chain))} {token} ({name})"


def _units(amount: int, decimals: int) -> str:
    value = Decimal(amount).scaleb(-decimals)
    return f"{value:,.{min(decimals, 6)}f}"


def format_summary(summary: BacktestSummary, decimals: dict[str, int]) -> str:
    """The text ``toolkit backtest`` prints for a replay summary.

    ``decimals`` maps each pool id and each token symbol to the token's decimals (amounts in
    whole tokens).

    >>> from toolkit.backtest import generate_flow, replay
    >>> result = replay(generate_flow("single-pool", span_h=0.1, seed=1), "single-pool")
    >>> text = format_summary(result.summary, {"8453:USDC:usdc": 6, "USDC": 6}).splitlines()
    >>> print(text[1]); print(text[2])
    rebalancing policy: none (inventory moves between chains only by transfers it sends)
    requests          180
    """
    s = summary
    lines = [
        f"backtest of scenario {s.scenario} (seed {s.seed})",
        f"rebalancing policy: {s.policy} ({POLICY_WORDS.get(s.policy, s.policy)})",
        f"requests     {s.requests:>8,}",
        f"attempts     {s.attempts:>8,}",
        f"filled       {s.filled:>8,}   fill rate {100 * s.fill_share:.2f} %",
        f"expired      {s.expired:>8,}",
        f"no capacity  {s.no_capacity:>8,}   404 rate {100 * s.rfq_404_share:.2f} % of attempts",
        f"no route     {s.no_route:>8,}",
        "",
        f"{'pool':<24} {'fee revenue':>22} {'peak util':>10} {'mean util':>10}",
    ]
    for pool, revenue in s.fee_revenue.items():
        amount = _units(revenue, decimals.get(pool, 0))
        lines.append(
            f"{pool_label(pool):<24} {amount:>17} {pool.split(':')[1]:<4} "
            f"{100 * s.peak_utilization_share[pool]:>8.1f} % "
            f"{100 * s.mean_utilization_share[pool]:>8.1f} %"
        )
    return "\n".join([*lines, "", *_inventory_lines(s, decimals)])


#: What each rebalancing policy means, in the words ``toolkit backtest`` prints.
POLICY_WORDS = {
    "none": "inventory moves between chains only by transfers it sends",
    "threshold": "a chain below its threshold share is topped up by bridge transfers",
    "periodic": "every chain is brought back to its target share periodically",
    "instant-free": "baseline: settlements repay the lending pool in place, at once, for free",
}


def _inventory_lines(s: BacktestSummary, decimals: dict[str, int]) -> list[str]:
    """Per-chain inventory at the start and end, the transfers and the economics."""
    from toolkit.report.units import chain_name

    lines = [f"{'inventory':<24} {'start':>22} {'end':>22}"]
    for key, start in s.inventory_start.items():
        chain, token = key.split(":")
        digits = decimals.get(token, 0)
        label = f"{chain_name(int(chain))} {token}"
        lines.append(
            f"{label:<24} {_units(start, digits):>17} {token:<4} "
            f"{_units(s.inventory_end.get(key, 0), digits):>17} {token:<4}"
        )
    moved = ", ".join(
        f"{_units(amount, decimals.get(token, 0))} {token}"
        for token, amount in s.rebalanced_by_token.items()
    )
    lines += ["", f"transfers    {s.transfers:>8,}   volume {moved or '0'}"]
    if math.isnan(s.capital_usd):
        return [*lines, "USD figures: none (the scenario prices none of its pooled tokens)"]
    lines[-1] += f" (${s.rebalanced_volume_usd:,.0f})"
    lines += [
        f"rebalancing cost ${s.rebalancing_cost_usd:,.2f} (fees ${s.rebalancing_fees_usd:,.2f}, "
        f"gas ${s.rebalancing_gas_usd:,.2f}): {s.rebalancing_cost_bps:.2f} bps of the "
        f"${s.filled_volume_usd:,.0f} filled",
        f"fee revenue  ${s.fee_revenue_usd:,.2f} (after ${s.fill_gas_usd:,.2f} of fill gas) on "
        f"${s.capital_usd:,.0f} of capital: {s.annualised_return_pct:.2f} % a year, "
        f"{s.net_annualised_return_pct:.2f} % net of rebalancing",
    ]
    return lines


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Generate the flow, replay it (or sweep it), print the summary and optionally store it;
    0 on success."""
    stream = sys.stdout if out is None else out
    from toolkit.backtest import generate_flow, replay
    from toolkit.resources.retry import RetryPolicy
    from toolkit.scenario import load_scenario

    if (args.workers or args.scheduler) and not args.sweep:
        print("toolkit backtest: error: --workers/--scheduler need --sweep", file=sys.stderr)
        return 2
    try:
        scenario = load_scenario(args.scenario)
        flow = generate_flow(scenario, span_h=args.hours, rate_per_s=args.rate, seed=args.seed)
        if flow.height == 0:
            raise ValueError("rate: the flow has no requests; raise --rate or --hours")
        retry = RetryPolicy(capacity_retries=args.retries) if args.retries else None
        if args.sweep:
            return _sweep(args, flow, scenario, retry, stream)
        result = replay(flow, scenario, seed=args.seed, retry=retry)
    except ValueError as exc:
        print(f"toolkit backtest: error: {exc}", file=sys.stderr)
        return 2
    decimals = {p.id: scenario.token(p.chain, p.token).decimals for p in scenario.pools}
    decimals.update({t.symbol: t.decimals for t in scenario.tokens})
    print(format_summary(result.summary, decimals), file=stream)
    if args.db is not None:
        from toolkit.store import Store, StoreError

        try:
            with Store(args.db) as store:
                run_id = result.to_store(store)
        except StoreError as exc:
            print(f"toolkit backtest: error: {exc}", file=sys.stderr)
            return 1
        print(f"\nwritten to {args.db} as run {run_id}", file=stream)
    return 0


def _sweep(args: argparse.Namespace, flow: Any, scenario: Any, retry: Any, stream: TextIO) -> int:
    """Run the sweep in this process's pool, on a local Dask cluster or on a given one."""
    import polars as pl

    from toolkit.backtest import sweep

    grid = dict(args.sweep)
    if args.workers is None and args.scheduler is None:
        table = sweep(flow, scenario, grid, seed=args.seed, retry=retry)
    else:
        from distributed import Client, LocalCluster

        if args.scheduler is not None:
            with Client(args.scheduler) as client:
                table = sweep(flow, scenario, grid, seed=args.seed, retry=retry,
                              executor=client.get_executor())  # fmt: skip
        else:
            with (
                LocalCluster(
                    n_workers=args.workers, threads_per_worker=1, dashboard_address=None
                ) as cluster,
                Client(cluster) as client,
            ):
                table = sweep(flow, scenario, grid, seed=args.seed, retry=retry,
                              executor=client.get_executor())  # fmt: skip
    columns = [
        *grid, "requests", "filled", "no_capacity", "rfq_404_share", "peak_utilization",
        "transfers", "rebalancing_cost_usd", "net_annualised_return_pct",
    ]  # fmt: skip
    # Wide enough that no column is elided and no name wraps: one line per point.
    with pl.Config(
        tbl_rows=len(table), tbl_cols=-1, tbl_width_chars=250, tbl_hide_dataframe_shape=True
    ):
        print(table.select(columns), file=stream)
    return 0
