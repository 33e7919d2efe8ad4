"""``toolkit collect rfq|borrow|liquidity|snapshot|credit|swap``: the service's surfaces."""

from __future__ import annotations

import argparse
from typing import Any

from toolkit.cli.collect.outcome import connect, fail, outcome, run_or_follow

__all__ = ["add_credit_arguments", "collect_service", "swap_sweep"]


def add_credit_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``credit`` options: the accounts to snapshot."""
    parser.add_argument(
        "--accounts",
        metavar="LIST",
        default="",
        help="credit: comma-separated account addresses to snapshot",
    )
    parser.add_argument(
        "--all-known",
        action="store_true",
        help="credit: add the accounts of earlier credit runs and every account the credit "
        "hubs' events name (discovered through eth_getLogs)",
    )


def collect_service(args: argparse.Namespace) -> int:
    """Collect through the target's connection: the service's surfaces (``rfq``, ``borrow``,
    ``liquidity``, ``snapshot``, ``credit``, ``swap``) and ``chain`` logs (whose node the
    connection may open)."""
    from toolkit.cli.collect.chain import collect_chain
    from toolkit.client import TargetError
    from toolkit.store import Store, StoreError

    if args.capacity_retries < 0:
        return fail(f"--capacity-retries: must be 0 or more, got {args.capacity_retries}")
    if args.follow and args.kind == "snapshot":
        return fail("--follow: snapshot reads once; follow credit, pools or liquidity instead")
    try:
        conn = connect(args)
    except TargetError as exc:
        return fail(exc)
    with conn:
        try:
            if args.kind == "chain":
                return collect_chain(conn, args)
            if args.kind == "swap":
                return _swap(conn, args)
            client = conn.credit_service if args.kind == "credit" else conn.service
        except TargetError as exc:
            return fail(exc)
        try:
            store = Store(args.db)
        except StoreError as exc:
            return fail(f"cannot use the database: {exc}")
        with store:
            return outcome(
                lambda: _collect(conn, client, store, args),
                f"the service at {client.base_url}",
                "the API key (401); set TOOLKIT_API_KEY to a key it accepts",
            )


def _swap(conn: Any, args: argparse.Namespace) -> int:
    """Sweep the swap API (and, on the embedded service, read its AMM pools)."""
    from toolkit.store import Store, StoreError

    where = f"the swap service at {conn.swap.url}"  # first: with no target, no database
    try:
        store = Store(args.db)
    except StoreError as exc:
        return fail(f"cannot use the database: {exc}")
    with store:
        sweep = swap_sweep(conn, store, progress=not args.no_progress and not args.follow)
        made: Any = sweep
        if args.follow:
            from toolkit.collect.followers import follower_for

            made = follower_for(sweep, every_s=args.poll_s, resume=args.resume)
        return outcome(
            lambda: run_or_follow(made, store, args),
            where,
            "the credentials (401); set TOOLKIT_SWAP_USERNAME and TOOLKIT_SWAP_API_KEY",
        )


def swap_sweep(conn: Any, store: Any, *, progress: bool) -> Any:
    """The swap sweep of ``conn``'s target: the default grid (the scenario's tokens on the
    embedded service, the registry's sized at the store's prices otherwise), each network's
    node for gas prices, and on the embedded service its simulated pools to read."""
    from toolkit.collect.swap import SwapSweep, default_points
    from toolkit.store import latest_prices

    web3s, pools = {}, {}
    if conn.embedded is not None and conn.embedded.scenario is not None:
        # The simulated markets' pools: the simulation's own list (a real service's pools
        # are given by address to SwapSweep).
        from toolkit.world.evm.markets import market_for

        for name, chain in (("mainnet", 1), ("base", 8453)):
            market = market_for(conn.embedded.scenario, chain)
            if market is not None:
                web3s[name] = conn.chain(chain)
                pools[name] = [p.address for p in market.pools]
    else:
        # A real service: read each network's gas price from its configured RPC node (the
        # route's gas_usd needs it); its pools are not listed, so none are snapshotted.
        for name, chain in (("mainnet", 1), ("base", 8453)):
            if chain in conn.target.rpc_urls:
                web3s[name] = conn.chain(chain)
    simulated = conn.embedded is not None
    points = default_points(simulated=simulated, prices=None if simulated else latest_prices(store))
    return SwapSweep(conn.swap, store, points=points, web3s=web3s, pools=pools, progress=progress)


def _collect(conn: Any, client: Any, store: Any, args: argparse.Namespace) -> Any:
    """Run (or with ``--follow`` follow) the collector of ``args.kind`` on the service."""
    from toolkit.backtest import generate_flow
    from toolkit.collect.followers import follower_for
    from toolkit.simulate import Traffic

    collector = _collector(conn, client, store, args)
    made = (
        follower_for(collector, every_s=args.poll_s, resume=args.resume)
        if args.follow
        else collector
    )
    if args.kind != "liquidity" or client.embedded is None:
        return run_or_follow(made, store, args)
    # Other users' order flow at the default scenario's rates, for as long as the stream is
    # followed (a day when it runs until Ctrl-C), so that the stream has a market to report.
    hours = 24.0 if args.duration is None else max(args.duration, 60.0) / 3600
    scenario = client.embedded.scenario
    with Traffic(client.embedded, generate_flow(scenario, span_h=hours)):
        return run_or_follow(made, store, args)


def _collector(conn: Any, client: Any, store: Any, args: argparse.Namespace) -> Any:
    """The collector of ``args.kind`` on the service (a followed one has no end)."""
    from toolkit.collect import BorrowSweep, LiquidityStream, RfqSweep, Snapshot

    progress = not args.no_progress and not args.follow
    if args.kind in ("rfq", "borrow"):
        rounds, interval = args.rounds, args.interval
        if args.resume is None and not args.follow:
            rounds = rounds if rounds is not None or args.duration else 1
            interval = 10.0 if interval is None else interval
        sweep_type = RfqSweep if args.kind == "rfq" else BorrowSweep
        extra = {"follow_transactions": args.transactions} if args.kind == "rfq" else {}
        return sweep_type(
            client,
            store,
            rounds=rounds,
            duration_s=args.duration,
            interval_s=interval,
            progress=progress,
            **extra,
        )
    if args.kind == "snapshot":
        return Snapshot(client, store, progress=progress)
    if args.kind == "credit":
        from toolkit.collect import CreditCollector

        accounts = [a.strip() for a in args.accounts.split(",") if a.strip()]
        web3s = {}
        for chain in conn.target.rpc_urls if conn.embedded is None else ():
            web3s[chain] = conn.chain(chain)
        return CreditCollector(
            client,
            store,
            accounts=accounts,
            all_known=args.all_known,
            web3s=web3s,
            rounds=args.rounds or 1,
            interval_s=60.0 if args.interval is None else args.interval,
            progress=progress,
        )
    duration = None if args.follow else args.duration
    return LiquidityStream(client, store, duration_s=duration, progress=progress)
