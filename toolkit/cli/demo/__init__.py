"""``toolkit demo``: the whole main job on the embedded default, as ``make demo`` runs it.

One pass through every layer, offline: the embedded service (in-process, named explicitly:
``ServiceClient(embedded=True)``; its runs are recorded as ``embedded`` and the report says
"Simulated") running ``--speed`` times faster than real time, with other users' order flow at
the default scenario's rates as background traffic (RFQs that convert, open on chain, fill and
settle; swaps on the AMM pools; borrowers that lock, draw, repay and unlock:
:class:`toolkit.simulate.Traffic`), so the collectors observe a market rather than their own
requests; collection from its surfaces into DuckDB (discovery snapshot, a swap-route sweep and a
credit snapshot of the seeded book and the traffic's borrowers while the traffic warms up, the
liquidity event stream, a paced RFQ sweep that only asks for quotes (opening orders would hold
the pools it measures 60 s each), one quote per route followed through the transaction endpoint
and the calldata guard, the swap routes and the borrowers again once the market has moved, the
other users' RFQs and the service's answers stored as the market's observations, a borrow-quote
sweep); the pricing and capacity models on what was collected; a backtest
of a day of order flow on the same engine and a pool_scale sweep of an hour at the day's mean
rate (capital against 404 rate); and the report (figures and a summary).
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TextIO

from toolkit.cli.argtypes import integer, real
from toolkit.cli.backtest import DEFAULT_RATE
from toolkit.cli.demo.backtests import POOL_SCALES, SWEEP_HOURS, SWEEP_POLICIES
from toolkit.cli.demo.observe import CREDIT_ACCOUNTS, SWAP_SIZES_USD
from toolkit.cli.traffic import BORROWERS, SWAP_RATE, traffic_summary

__all__ = [
    "BORROWERS",
    "CREDIT_ACCOUNTS",
    "POOL_SCALES",
    "SWAP_RATE",
    "SWAP_SIZES_USD",
    "SWEEP_HOURS",
    "SWEEP_POLICIES",
    "add_arguments",
    "run",
    "traffic_summary",
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``toolkit demo``.

    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args([]).rounds
    3
    """
    parser.add_argument(
        "--db",
        default=None,
        metavar="PATH",
        help="DuckDB file (default: toolkit.duckdb in $TOOLKIT_DATA_DIR or ./data)",
    )
    parser.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="figures and tables (default: reports in $TOOLKIT_DATA_DIR or ./data)",
    )
    parser.add_argument(
        "--rounds",
        type=integer(minimum=1),
        default=3,
        help="RFQ sweep rounds (default: 3)",
    )
    parser.add_argument(
        "--rate",
        type=real(above=0),
        default=DEFAULT_RATE,
        help=f"backtest: mean RFQs per second over the day (default: {DEFAULT_RATE:g}, the flow "
        "calibrated to comparable services' volume against capital)",
    )
    parser.add_argument(
        "--seed",
        type=integer(minimum=0),
        default=0,
        help="backtest seed (default: 0)",
    )
    parser.add_argument(
        "--speed",
        type=real(above=0),
        default=30.0,
        help="the embedded market runs this many times faster than real time (default: 30)",
    )
    parser.add_argument(
        "--minutes",
        type=real(above=0),
        default=30.0,
        help="simulated minutes of background traffic the collectors observe (default: 30)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the demo; print where the database and figures are and a short summary."""
    stream = sys.stdout if out is None else out
    from toolkit.cli.demo.backtests import replay_day, replay_scales, store_backtest, store_sweep
    from toolkit.cli.demo.models import print_models
    from toolkit.cli.demo.observe import collect
    from toolkit.client import RetryPolicy, ServiceClient
    from toolkit.clock import ScaledClock
    from toolkit.store import Store, StoreError, data_dir, default_path

    db = Path(args.db) if args.db is not None else default_path()
    out_dir = Path(args.out) if args.out is not None else data_dir() / "reports"

    started = time.perf_counter()

    def step(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f} s] {text}", file=stream, flush=True)

    try:
        store = Store(db)
    except StoreError as exc:
        print(f"toolkit demo: cannot use the database: {exc}", file=sys.stderr)
        return 2
    # A capacity 404 is an observation here, recorded like any other answer: retrying it would
    # only make the demo sleep through the 15 s reservation window.
    clock = ScaledClock(args.speed)
    with (
        store,
        ServiceClient(embedded=True, retry=RetryPolicy(capacity_retries=0), clock=clock) as client,
    ):
        step(
            f"embedded service started in-process ({client.base_url}), "
            f"its clock {args.speed:g}x real time"
        )
        # The day's backtest is pure CPU: it runs in a worker process while the live market is
        # observed, and is stored once it is back (spawned: this process already runs threads).
        # One worker, two jobs in turn: the day, then the pool_scale sweep.
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            backtest = pool.submit(replay_day, args.rate, args.seed)
            scales = pool.submit(replay_scales, args.rate, args.seed)
            step(
                f"backtest of a day of flow (rate {args.rate:g}/s), then a pool_scale sweep "
                f"(x{', x'.join(f'{x:g}' for x in POOL_SCALES)}) of {SWEEP_HOURS:g} hour(s) at "
                f"its mean rate under rebalancing policies {', '.join(SWEEP_POLICIES)}, started "
                "in a worker process"
            )
            collect(client, store, args, step)
            print_models(store, stream, step)
            store_sweep(store, scales.result(), step)
            store_backtest(store, backtest.result(), stream, step)
        step("writing the report")
        from toolkit.report import write_report

        report = write_report(store, out_dir)
    print("", file=stream)
    print(f"database: {db.resolve()}", file=stream)
    print(f"figures:  {Path(report.out_dir).resolve()}", file=stream)
    for path in report.figures:
        print(f"  {Path(path).name}", file=stream)
    print(f"summary:  {Path(report.markdown).resolve()}", file=stream)
    print(f"done in {time.perf_counter() - started:.0f} s", file=stream)
    return 0
