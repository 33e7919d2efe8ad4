"""The demo's collection: every surface of the embedded service, observed while other users'
order flow runs as background traffic."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from toolkit.cli.backtest import DEFAULT_RATE
from toolkit.cli.traffic import (
    BORROWERS,
    RFQ_RATE,
    background_flows,
    describe_flows,
    traffic_summary,
)

if TYPE_CHECKING:
    from toolkit.client import ServiceClient
    from toolkit.collect import GridPoint
    from toolkit.store import Store

__all__ = ["CREDIT_ACCOUNTS", "SWAP_SIZES_USD", "collect"]

#: Trade sizes of the demo's swap-route sweep, in USD.
SWAP_SIZES_USD: tuple[int, ...] = (100, 10_000, 1_000_000, 10_000_000)
#: Accounts of the seeded credit book the demo snapshots (a sample: the whole book takes long).
CREDIT_ACCOUNTS = 300


def collect(client: ServiceClient, store: Store, args: argparse.Namespace, step: Any) -> None:
    """Collect every surface of the embedded service into ``store`` while other users' order
    flow runs as background traffic; ``step`` prints each step."""
    from toolkit.collect import BorrowSweep, Snapshot
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
    flows = background_flows(scenario, span_h=seconds / 3600, seed=args.seed)
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
        _observe(client, store, args, step, borrowers, warmup=warmup, remaining=seconds - warmup)
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


def _observe(
    client: ServiceClient,
    store: Store,
    args: argparse.Namespace,
    step: Any,
    borrowers: list[str],
    *,
    warmup: float,
    remaining: float,
) -> None:
    """What the collectors observe while the background traffic runs: swap routes and credit
    during the ``warmup`` (simulated seconds), then over the ``remaining`` ones the liquidity
    stream, the paced RFQ sweep, the guard's quotes, and swaps and credit again."""
    from toolkit.collect import LiquidityStream, RfqSweep

    progress = not args.no_progress
    began = client.clock()
    _swaps_and_credit(client, store, progress, step, borrowers, sample=True)
    client.clock.sleep(max(0.0, warmup - (client.clock() - began)))
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
