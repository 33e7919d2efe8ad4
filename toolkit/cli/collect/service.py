"""``toolkit collect rfq|borrow|liquidity|snapshot|credit|swap``: the service's surfaces."""

from __future__ import annotations

import argparse
from typing import Any

from toolkit.cli.collect.outcome import connect, fail, outcome

__all__ = ["add_credit_arguments", "collect_service"]


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
    from toolkit.collect.swap import SwapSweep, default_points
    from toolkit.store import Store, StoreError

    client = conn.swap
    try:
        store = Store(args.db)
    except StoreError as exc:
        return fail(f"cannot use the database: {exc}")
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
    with store:
        from toolkit.store import latest_prices

        simulated = conn.embedded is not None
        points = default_points(
            simulated=simulated, prices=None if simulated else latest_prices(store)
        )
        sweep = SwapSweep(
            client, store, points=points, web3s=web3s, pools=pools, progress=not args.no_progress
        )
        return outcome(
            lambda: sweep.run(resume=args.resume),
            f"the swap service at {client.url}",
            "the credentials (401); set TOOLKIT_SWAP_USERNAME and TOOLKIT_SWAP_API_KEY",
        )


def _collect(conn: Any, client: Any, store: Any, args: argparse.Namespace) -> Any:
    """Run the collector of ``args.kind`` on the service; its result."""
    from toolkit.backtest import generate_flow
    from toolkit.collect import BorrowSweep, LiquidityStream, RfqSweep, Snapshot
    from toolkit.simulate import Traffic

    progress = not args.no_progress
    if args.kind in ("rfq", "borrow"):
        rounds, interval = args.rounds, args.interval
        if args.resume is None:
            rounds = rounds if rounds is not None or args.duration else 1
            interval = 10.0 if interval is None else interval
        sweep_type = RfqSweep if args.kind == "rfq" else BorrowSweep
        extra = {"follow_transactions": args.transactions} if args.kind == "rfq" else {}
        sweep = sweep_type(
            client,
            store,
            rounds=rounds,
            duration_s=args.duration,
            interval_s=interval,
            progress=progress,
            **extra,
        )
        return sweep.run(resume=args.resume)
    if args.kind == "snapshot":
        return Snapshot(client, store, progress=progress).run(resume=args.resume)
    if args.kind == "credit":
        from toolkit.collect import CreditCollector

        accounts = [a.strip() for a in args.accounts.split(",") if a.strip()]
        web3s = {}
        for chain in conn.target.rpc_urls if conn.embedded is None else ():
            web3s[chain] = conn.chain(chain)
        credit = CreditCollector(
            client,
            store,
            accounts=accounts,
            all_known=args.all_known,
            web3s=web3s,
            rounds=args.rounds or 1,
            interval_s=60.0 if args.interval is None else args.interval,
            progress=progress,
        )
        return credit.run(resume=args.resume)
    stream = LiquidityStream(client, store, duration_s=args.duration, progress=progress)
    if client.embedded is None:
        return stream.run(resume=args.resume)
    # Other users' order flow at the default scenario's rates, for as long as the stream is
    # followed (a day when it runs until Ctrl-C), so that the stream has a market to report.
    hours = 24.0 if args.duration is None else max(args.duration, 60.0) / 3600
    scenario = client.embedded.scenario
    with Traffic(client.embedded, generate_flow(scenario, span_h=hours)):
        return stream.run(resume=args.resume)
