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
from typing import TYPE_CHECKING, Any, TextIO

from toolkit.cli.argtypes import integer, real
from toolkit.cli.backtest import DEFAULT_RATE
from toolkit.cli.traffic import (
    BORROWERS,
    RFQ_RATE,
    SWAP_RATE,
    background_flows,
    describe_flows,
    traffic_summary,
)

if TYPE_CHECKING:
    import polars as pl

    from toolkit.backtest import BacktestResult
    from toolkit.client import ServiceClient
    from toolkit.collect import GridPoint
    from toolkit.store import Store

__all__ = [
    "BORROWERS",
    "CREDIT_ACCOUNTS",
    "POOL_SCALES",
    "SWAP_RATE",
    "SWAP_SIZES_USD",
    "SWEEP_HOURS",
    "add_arguments",
    "run",
    "traffic_summary",
]

#: Trade sizes of the demo's swap-route sweep, in USD.
SWAP_SIZES_USD: tuple[int, ...] = (100, 10_000, 1_000_000, 10_000_000)
#: Pool balances of the demo's capital sweep, as factors on the default scenario's: down to a
#: few thousandths, where the calibrated flow (:data:`toolkit.cli.backtest.DEFAULT_RATE`)
#: starts to meet 404s.
POOL_SCALES: tuple[float, ...] = (0.003, 0.01, 0.03, 0.1, 1.0)
#: Accounts of the seeded credit book the demo snapshots (a sample: the whole book takes long).
CREDIT_ACCOUNTS = 300
#: Hours of flow the capital sweep replays, at the day's mean rate (a day: enough requests at
#: the plausible rate for a 404 share to mean something).
SWEEP_HOURS = 24.0


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
            backtest = pool.submit(_replay_day, args.rate, args.seed)
            scales = pool.submit(_replay_scales, args.rate, args.seed)
            step(
                f"backtest of a day of flow (rate {args.rate:g}/s), then a pool_scale sweep "
                f"(x{', x'.join(f'{x:g}' for x in POOL_SCALES)}) of {SWEEP_HOURS:g} hour(s) at "
                "its mean rate, started in a worker process"
            )
            _collect(client, store, args, step)
            _model(store, stream, step)
            _store_sweep(store, scales.result(), step)
            _store_backtest(store, backtest.result(), stream, step)
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


def _collect(client: ServiceClient, store: Store, args: argparse.Namespace, step: Any) -> None:
    from toolkit.collect import BorrowSweep, LiquidityStream, RfqSweep, Snapshot
    from toolkit.scenario import load_scenario
    from toolkit.simulate import Traffic
    from toolkit.simulate.traffic import record_traffic
    from toolkit.world.evm import dev_accounts

    progress = not args.no_progress
    step("snapshot of tokens, pools and fee tiers")
    _report_run(Snapshot(client, store, progress=progress).run(), step)
    embedded = client.embedded
    assert embedded is not None  # the demo runs on the embedded default
    seconds = args.minutes * 60
    scenario = load_scenario("default")
    flows = background_flows(scenario, hours=seconds / 3600, seed=args.seed)
    borrowers = [a.address for a in dev_accounts(scenario)[:BORROWERS]]
    # The quotes and orders of the first ten simulated minutes build up the pools' state.
    warmup = min(600.0, seconds / 3)
    step(
        f"background traffic over {args.minutes:g} simulated minutes, other users' RFQs at "
        f"{RFQ_RATE:g}/s (busier than the backtest's calibrated {DEFAULT_RATE:g}/s, so the "
        f"market's 404 shares have samples): {describe_flows(flows)}; "
        f"{warmup / 60:g} minutes to warm up"
    )
    with Traffic(embedded, flows.intents, swaps=flows.swaps, credit=flows.credit) as traffic:
        began = client.clock()
        _swaps_and_credit(client, store, progress, step, borrowers, sample=True)
        client.clock.sleep(max(0.0, warmup - (client.clock() - began)))
        remaining = seconds - warmup
        step(f"liquidity event stream for {remaining / 2 / 60:g} simulated minutes")
        stream = LiquidityStream(
            client, store, duration_s=remaining / 2 / args.speed, progress=progress
        )
        _report_run(stream.run(), step)
        step(
            f"RFQ sweep, {args.rounds} rounds paced over {remaining / 2 / args.rounds / 60:g} "
            "simulated minutes each, quotes only (no order opened: each would hold its pool 60 s)"
        )
        sweep = RfqSweep(
            client,
            store,
            rounds=args.rounds,
            interval_s=remaining / 2 / args.rounds,
            spread=True,
            progress=progress,
        )
        _report_run(sweep.run(), step)
        guard = _guard_grid(sweep.grid or [])
        step(
            f"calldata guard: {len(guard)} quotes (one per route, its smallest amount) followed "
            "through the transaction endpoint"
        )
        checked = RfqSweep(
            client, store, grid=guard, rounds=1, follow_transactions=True, progress=progress
        )
        _report_run(checked.run(), step)
        step("the swap routes and the borrowers again, after the market has moved")
        _swaps_and_credit(client, store, progress, step, borrowers, sample=False)
        late = traffic.counts["late"]
    step("  background traffic: " + traffic_summary(traffic.counts))
    market = record_traffic(store, traffic)
    if market is not None:
        step(
            f"  stored the other users' {len(traffic.outcomes):,} RFQs as the market (run {market})"
        )
    if late:
        step(f"  ({late:,} traffic steps ran more than a second late)")
    step("borrow-quote sweep, 1 round")
    _report_run(BorrowSweep(client, store, rounds=1, progress=progress).run(), step)


def _guard_grid(grid: list[GridPoint]) -> list[GridPoint]:
    """One point per route, its smallest amount (ExactInput): enough to check the calldata the
    transaction endpoint builds, without holding the pools the sweep measured."""
    smallest: dict[tuple[int, int, str], GridPoint] = {}
    for point in grid:
        key = (point.src_chain, point.dst_chain, point.token)
        if point.quote_type == "ExactInput" and (
            key not in smallest or point.amount < smallest[key].amount
        ):
            smallest[key] = point
    return list(smallest.values())


def _swaps_and_credit(
    client: ServiceClient,
    store: Store,
    progress: bool,
    step: Any,
    borrowers: list[str],
    *,
    sample: bool,
) -> None:
    """A small swap-route sweep and a credit snapshot of the traffic's ``borrowers`` (and, with
    ``sample``, of a sample of the seeded book: during the warm-up, which would otherwise only
    wait)."""
    from toolkit.client import SwapClient
    from toolkit.collect import CreditCollector
    from toolkit.collect.swap import DEFAULT_PAIRS, SwapSweep, default_points
    from toolkit.world.evm.credit import book_accounts

    points = default_points(pairs=DEFAULT_PAIRS, sizes_usd=SWAP_SIZES_USD)
    step(
        f"swap-route sweep: {len(DEFAULT_PAIRS)} pairs x {len(SWAP_SIZES_USD)} sizes "
        f"(${min(SWAP_SIZES_USD):,} to ${max(SWAP_SIZES_USD):,}) x mainnet and base"
    )
    with SwapClient(embedded=client.embedded, env={}, clock=client.clock) as swaps:
        _report_run(SwapSweep(swaps, store, points=points, progress=progress).run(), step)
    accounts = list(borrowers)
    if sample:
        assert client.embedded is not None and client.embedded.scenario is not None
        book = book_accounts(client.embedded.scenario)
        accounts += book[:: max(1, len(book) // CREDIT_ACCOUNTS)][:CREDIT_ACCOUNTS]
        step(
            f"credit snapshot: the protocol, the traffic's {len(borrowers)} borrowers and "
            f"{len(accounts) - len(borrowers)} of the seeded book's {len(book):,} accounts "
            "(every k-th by address)"
        )
    else:
        step(f"credit snapshot: the protocol and the traffic's {len(borrowers)} borrowers")
    credit = CreditCollector(client, store, accounts=accounts, progress=progress)
    _report_run(credit.run(), step)


def _report_run(result: Any, step: Any) -> None:
    tables = ", ".join(f"{name} {count}" for name, count in sorted(result.by_table.items()))
    step(f"  run {result.run_id} {result.status}: {tables or 'no rows'}")


def _model(store: Store, stream: TextIO, step: Any) -> None:
    import polars as pl

    from toolkit.models import capacity, pricing
    from toolkit.report.units import chain_name

    step("models: fee curves and 404 rates of what was collected")
    observations = store.query("select * from rfq_observations")
    curve = pricing.fee_curve(observations)
    keys = ["src_chain", "dst_chain", "token"]
    _print_frame(
        _named(
            curve.sort(*keys, "quote_type")
            .head(6)
            .select(*keys, "quote_type", "n", "r2", _fee_finding().alias("fee by size"))
        ),
        "fee curves, fee_bps = a + b * log10(amount), with the slope's 95 % interval "
        "(first 6 routes; a slope whose interval holds 0 is no finding)",
        stream,
    )
    _print_frame(_refusals(store), _REFUSALS_TITLE, stream)
    # The observer effect: how much of each destination pool the sweep's own quotes (and the
    # orders it converted them to) held while it measured, against the pools' balances.
    rfq_runs = store.query("select run_id from collection_runs where kind = 'rfq'")["run_id"]
    swept = observations.filter(pl.col("run_id").is_in(rfq_runs.to_list()))
    transactions = store.query("select quote_id, observed_at from transactions")
    pools = store.query(
        "select chain, token, balance from pool_snapshots where snapshot_id = "
        "(select snapshot_id from pool_snapshots order by observed_at limit 1)"
    )
    held = capacity.observer_share(swept, pools, transactions=transactions).sort(
        "held_peak_share", descending=True
    )
    names = [chain_name(c) for c in held["dst_chain"]]
    _print_frame(
        held.head(6)
        .with_columns(pl.Series("chain", names[:6]))
        .select(
            "chain",
            "token",
            "quotes",
            (100 * pl.col("held_mean_share")).alias("held_mean_pct"),
            (100 * pl.col("held_peak_share")).alias("held_peak_pct"),
        ),
        "observer effect: share of each pool the RFQ sweep's own quotes held while it measured "
        "(highest 6)",
        stream,
    )


_REFUSALS_TITLE = (
    "404 share by route, the market's (other users' requests; Wilson 95 %) against the "
    "collector's own sweep (95 % clustered by round: its consecutive RFQs are not independent), "
    "highest 6 by the sweep's share"
)


def _refusals(store: Store) -> pl.DataFrame:
    """The report's 404 table (:func:`toolkit.report.refusals.refusal_table`), one row per
    route with the market's and the sweep's share side by side, in %."""
    import polars as pl

    from toolkit.report.load import load_data
    from toolkit.report.refusals import refusal_table

    table = refusal_table(load_data(store))
    pct = [
        pl.col("answered").alias("n"),
        (100 * pl.col("share_404")).round(1).alias("pct"),
        pl.format(
            "{}–{}", (100 * pl.col("ci95_low")).round(1), (100 * pl.col("ci95_high")).round(1)
        ).alias("ci95"),
    ]
    market = table.filter(pl.col("source") == "market").select("route", *pct)
    sweep = table.filter(pl.col("source") == "collector sweep").select(
        "route", *pct, pl.col("own_hold_peak_pct").round(0).alias("own_hold_peak_pct")
    )
    return (
        sweep.join(market, on="route", how="full", suffix="_market", coalesce=True)
        .rename({"n": "n_sweep", "pct": "pct_sweep", "ci95": "ci95_sweep"})
        .sort("pct_sweep", "route", descending=[True, False], nulls_last=True)
        .head(6)
    )


def _named(frame: pl.DataFrame) -> pl.DataFrame:
    """``src_chain``/``dst_chain`` ids as one ``route`` column of chain names, for people."""
    import polars as pl

    from toolkit.report.units import chain_name

    routes = [
        f"{chain_name(s)}→{chain_name(d)}" for s, d in frame.select("src_chain", "dst_chain").rows()
    ]
    return frame.drop("src_chain", "dst_chain").insert_column(0, pl.Series("route", routes))


def _fee_finding() -> Any:
    """What a fitted fee curve says, in words: the slope with its 95 % interval where the
    interval excludes 0, else that no size dependence was detected (with r² and n)."""
    import polars as pl

    slope = pl.col("log10_amount_coef")
    lo, hi = pl.col("log10_amount_coef_lo"), pl.col("log10_amount_coef_hi")
    r2 = pl.col("r2").fill_null(0.0).round(4).cast(pl.String)
    found = pl.format(
        "{} bps per tenfold size (95 % CI {} to {})", slope.round(3), lo.round(3), hi.round(3)
    )
    none = pl.format("no size dependence detected (r² = {}, n = {})", r2, pl.col("n"))
    return (
        pl.when(pl.col("size_dependence"))
        .then(found)
        .when(pl.col("size_dependence").is_null())
        .then(pl.format("too few quotes to fit (n = {})", pl.col("n")))
        .otherwise(none)
    )


def _replay_day(rate: float, seed: int) -> BacktestResult:
    """A day of order flow on the default scenario, replayed (in the worker process)."""
    from toolkit.backtest import generate_flow, replay
    from toolkit.scenario import load_scenario

    scenario = load_scenario("default")
    flow = generate_flow(scenario, span_h=24, rate_per_s=rate, seed=seed)
    return replay(flow, scenario, seed=seed)


def _replay_scales(rate: float, seed: int) -> list[tuple[float, BacktestResult]]:
    """:data:`SWEEP_HOURS` of flow at the day's mean rate (no daily profile) at each of
    :data:`POOL_SCALES` (in the worker process): what more or less pool capital does to the
    404 rate and the return."""
    from toolkit.backtest import generate_flow, replay
    from toolkit.scenario import load_scenario

    scenario = load_scenario("default")
    flow = generate_flow(scenario, span_h=SWEEP_HOURS, rate_per_s=rate, seed=seed, profile=None)
    return [
        (scale, replay(flow, scenario, seed=seed, overrides={"pool_scale": scale}))
        for scale in POOL_SCALES
    ]


def _store_sweep(store: Store, results: list[tuple[float, BacktestResult]], step: Any) -> None:
    shares = ", ".join(
        f"x{scale:g}: {100 * r.summary.no_capacity_share:.1f} %" for scale, r in results
    )
    step(f"pool_scale sweep, requests refused for capacity: {shares}")
    for _, result in results:
        result.to_store(store)


def _store_backtest(store: Store, result: BacktestResult, stream: TextIO, step: Any) -> None:
    from toolkit.cli.backtest import format_summary
    from toolkit.scenario import load_scenario

    scenario = load_scenario("default")
    requests = result.summary.requests
    step(f"backtest: a day of flow on the default scenario, {requests:,} requests")
    run_id = result.to_store(store)
    decimals = {p.id: scenario.token(p.chain, p.token).decimals for p in scenario.pools}
    print(format_summary(result.summary, decimals), file=stream)
    step(f"  backtest stored as run {run_id}")


def _print_frame(frame: pl.DataFrame, title: str, stream: TextIO) -> None:
    import polars as pl

    print(f"\n{title}", file=stream)
    with pl.Config(
        tbl_rows=20,
        tbl_cols=12,
        tbl_hide_dataframe_shape=True,
        float_precision=4,
        fmt_str_lengths=80,
        tbl_width_chars=160,
    ):
        print(frame, file=stream)
    print("", file=stream)
