"""``toolkit collect rfq|borrow|liquidity|snapshot|chain|swap|credit|pools``: collect from the
service, or a chain's blocks and logs, into DuckDB.

The target is ``--base-url`` or ``$TOOLKIT_BASE_URL``; without either the embedded service runs
in-process (nothing is started outside this process, no port is opened). The API key is read
from ``$TOOLKIT_API_KEY`` only: there is no key option, so a key never lands in shell history,
process lists or output. For ``liquidity`` against the embedded service, a background thread
replays other users' order flow at the scenario's rates (RFQs, orders opened on chain, fills and
settlements; not recorded: :class:`toolkit.collect.Traffic`) so that the stream carries a
market's events; against a real service nothing is sent but the stream request.

``chain`` reads blocks and token logs of ``--chain`` over ``--from-block``..``--to-block``
through JSON-RPC: ``--rpc-url``, else ``$TOOLKIT_RPC_URL_<chainId>``, else the embedded
service's simulated chain in-process. Only the URL's scheme, host and port are recorded.

``swap`` sweeps the swap API (pairs × log-spaced sizes × mainnet and base) into ``swap_routes``
and ``swap_route_legs``: the swap URL is ``--base-url`` or ``$TOOLKIT_SWAP_URL`` (else the
embedded service's ``/swap``), the Basic credentials ``$TOOLKIT_SWAP_USERNAME`` and
``$TOOLKIT_SWAP_API_KEY``; on the embedded service the AMM pools are also read through web3.py
into ``amm_pool_snapshots``.

``pools`` finds the Uniswap V2 pairs and V3 pools between ``--tokens`` (default: the registry's
tokens on ``--chain``) from the factories' creation logs (``--v3-factory``/``--v2-factory``,
default: the registry's, from their deployment block) over JSON-RPC as ``chain`` does, into
``amm_pools``, and reads every one at the last block into ``amm_pool_snapshots`` and
``amm_pool_ticks`` (``--depth-ticks`` either side of the price).

``credit`` snapshots ``/credit/protocol`` and, for each of ``--accounts`` (and with
``--all-known`` the accounts of earlier credit runs and the embedded scenario's seeded book),
``/info``, operator status and auto top-up configs, ``--rounds`` times ``--interval`` seconds
apart; the credit surface needs no key.

Exit status: 0 completed, 2 for a bad URL, a rejected key (401), an unreachable service, an
unwritable database or a bad option, 130 when interrupted (the run can be resumed).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from toolkit.cli.argtypes import integer, names, real

__all__ = ["add_arguments", "run"]

_KINDS = ("rfq", "borrow", "liquidity", "snapshot", "chain", "swap", "credit", "pools")
_CHAIN_EVENTS = (
    "transfers",
    "approvals",
    "deposits",
    "withdrawals",
    "swaps",
    "liquidity",
    "syncs",
    "flashes",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``collect`` options to ``parser``."""
    parser.add_argument("kind", choices=_KINDS, help="what to collect")
    parser.add_argument(
        "--db",
        metavar="PATH",
        default=None,
        help="DuckDB file to write (default: data/toolkit.duckdb)",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        default=None,
        help="service URL (default: $TOOLKIT_BASE_URL, else the embedded service in-process); "
        "the API key is read from $TOOLKIT_API_KEY",
    )
    parser.add_argument(
        "--duration",
        type=real(above=0),
        metavar="S",
        default=None,
        help="stop after S seconds (sweeps: no new grid point after it; liquidity: default "
        "until Ctrl-C)",
    )
    parser.add_argument(
        "--interval",
        type=real(above=0),
        metavar="S",
        default=None,
        help="seconds between the starts of sweep rounds (default: 10)",
    )
    parser.add_argument(
        "--rounds",
        type=integer(minimum=1),
        metavar="N",
        default=None,
        help="sweep rounds (default: 1 when no --duration is given); on --resume, --rounds, "
        "--duration and --interval replace the run's stored values",
    )
    parser.add_argument(
        "--resume", metavar="RUN_ID", default=None, help="continue an interrupted or failed run"
    )
    parser.add_argument(
        "--transactions",
        action="store_true",
        help="rfq: follow each quote through the transaction endpoint and the calldata guard",
    )
    parser.add_argument(
        "--capacity-retries",
        type=int,
        metavar="N",
        default=3,
        help="rfq: retries of a capacity 404 (reservations lapse in 15 s) (default: 3)",
    )
    parser.add_argument(
        "--chain", type=integer(minimum=1), metavar="ID", default=None, help="chain: chain id"
    )
    parser.add_argument(
        "--from-block",
        type=integer(minimum=0),
        metavar="N",
        default=None,
        help="chain, pools: first block (default: 0; pools: the block the registry's oldest "
        "factory on the chain was deployed at)",
    )
    parser.add_argument(
        "--to-block",
        type=integer(minimum=0),
        metavar="N",
        default=None,
        help="chain: last block (default: the latest when the run starts)",
    )
    parser.add_argument(
        "--events",
        type=names(_CHAIN_EVENTS),
        metavar="LIST",
        default=_CHAIN_EVENTS,
        help=f"chain: comma-separated events to collect (default: {','.join(_CHAIN_EVENTS)})",
    )
    parser.add_argument(
        "--chunk",
        type=integer(minimum=1),
        metavar="N",
        default=2000,
        help="chain: blocks per eth_getLogs request, halved when the node refuses a range "
        "(default: 2000)",
    )
    parser.add_argument(
        "--rpc-url",
        metavar="URL",
        default=None,
        help="chain: JSON-RPC endpoint (default: $TOOLKIT_RPC_URL_<chainId>, else the embedded "
        "service in-process)",
    )
    parser.add_argument(
        "--accounts",
        metavar="LIST",
        default="",
        help="credit: comma-separated account addresses to snapshot",
    )
    parser.add_argument(
        "--all-known",
        action="store_true",
        help="credit: add the accounts of earlier credit runs (and the embedded scenario's book)",
    )
    _add_pool_arguments(parser)
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _fail(message: str) -> int:
    print(f"toolkit collect: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run one collection; print the run id, rows written and database path."""
    from toolkit.client import (
        RetryPolicy,
        ServiceClient,
        ServiceError,
        TransportError,
        Unauthorized,
    )
    from toolkit.store import Store, StoreError

    if args.kind == "chain":
        return _chain(args)
    if args.kind == "swap":
        return _swap(args)
    if args.kind == "pools":
        return _pools(args)
    if args.capacity_retries < 0:
        return _fail(f"--capacity-retries: must be 0 or more, got {args.capacity_retries}")
    try:
        client = ServiceClient(
            args.base_url, retry=RetryPolicy(capacity_retries=args.capacity_retries)
        )
    except ValueError as exc:
        return _fail(str(exc))
    try:
        try:
            store = Store(args.db)
        except StoreError as exc:
            return _fail(f"cannot use the database: {exc}")
        with store:
            try:
                result = _collect(client, store, args)
            except Unauthorized:
                return _fail(
                    f"the service at {client.base_url} rejected the API key (401); "
                    "set TOOLKIT_API_KEY to a key it accepts"
                )
            except TransportError as exc:
                return _fail(f"cannot reach the service at {client.base_url} ({exc})")
            except ServiceError as exc:
                return _fail(f"the service at {client.base_url} answered an error: {exc}")
            except (StoreError, ValueError) as exc:
                return _fail(str(exc))
    finally:
        client.close()
    return _report(result)


def _swap(args: argparse.Namespace) -> int:
    from toolkit.client import ServiceError, SwapClient, TransportError, Unauthorized, chain_web3
    from toolkit.collect.swap import SwapSweep
    from toolkit.store import Store, StoreError

    try:
        client = SwapClient(args.base_url)
    except ValueError as exc:
        return _fail(str(exc))
    try:
        try:
            store = Store(args.db)
        except StoreError as exc:
            return _fail(f"cannot use the database: {exc}")
        web3s = {}
        if client.embedded is not None:
            web3s = {
                name: chain_web3(chain, embedded=client.embedded)
                for name, chain in (("mainnet", 1), ("base", 8453))
            }
        with store:
            sweep = SwapSweep(client, store, web3s=web3s, progress=not args.no_progress)
            try:
                result = sweep.run(resume=args.resume)
            except Unauthorized:
                return _fail(
                    f"the swap service at {client.url} rejected the credentials (401); set "
                    "TOOLKIT_SWAP_USERNAME and TOOLKIT_SWAP_API_KEY"
                )
            except TransportError as exc:
                return _fail(f"cannot reach the swap service at {client.url} ({exc})")
            except ServiceError as exc:
                return _fail(f"the swap service at {client.url} answered an error: {exc}")
            except (StoreError, ValueError) as exc:
                return _fail(str(exc))
    finally:
        client.close()
    return _report(result)


def _report(result: Any) -> int:
    tables = ", ".join(f"{name} {count}" for name, count in sorted(result.by_table.items()))
    print(f"run {result.run_id} ({result.kind}) {result.status}")
    print(f"rows written: {result.rows_written}" + (f" ({tables})" if tables else ""))
    print(f"database: {result.db_path}")
    if result.status == "interrupted":
        print(f"resume with: toolkit collect {result.kind} --resume {result.run_id}")
        return 130
    return 0


def _collect(client: Any, store: Any, args: argparse.Namespace) -> Any:
    from toolkit.backtest import generate_flow
    from toolkit.collect import BorrowSweep, LiquidityStream, RfqSweep, Snapshot, Traffic

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
            duration=args.duration,
            interval=interval,
            progress=progress,
            **extra,
        )
        return sweep.run(resume=args.resume)
    if args.kind == "snapshot":
        return Snapshot(client, store, progress=progress).run(resume=args.resume)
    if args.kind == "credit":
        from toolkit.collect import CreditCollector

        accounts = [a.strip() for a in args.accounts.split(",") if a.strip()]
        credit = CreditCollector(
            client,
            store,
            accounts=accounts,
            all_known=args.all_known,
            rounds=args.rounds or 1,
            interval=60.0 if args.interval is None else args.interval,
            progress=progress,
        )
        return credit.run(resume=args.resume)
    stream = LiquidityStream(client, store, duration=args.duration, progress=progress)
    if client.embedded is None:
        return stream.run(resume=args.resume)
    # Other users' order flow at the default scenario's rates, for as long as the stream is
    # followed (a day when it runs until Ctrl-C), so that the stream has a market to report.
    hours = 24.0 if args.duration is None else max(args.duration, 60.0) / 3600
    scenario = client.embedded.scenario
    with Traffic(client.embedded, generate_flow(scenario, hours=hours)):
        return stream.run(resume=args.resume)


def _chain(args: argparse.Namespace) -> int:
    import httpx

    from toolkit.client import chain_web3
    from toolkit.collect import ChainCollector, RpcFailure
    from toolkit.store import Store, StoreError

    if args.chain is None and args.resume is None:
        return _fail("--chain: required for chain (a chain id such as 8453)")
    if args.from_block is None:
        args.from_block = 0
    if args.to_block is not None and args.to_block < args.from_block:
        return _fail(
            f"--to-block: must be >= --from-block ({args.from_block}), got {args.to_block}"
        )
    if args.rpc_url is not None and not args.rpc_url.startswith(("http://", "https://")):
        return _fail("--rpc-url: must be an absolute http(s) URL")
    try:
        store = Store(args.db)
    except StoreError as exc:
        return _fail(f"cannot use the database: {exc}")
    with store:
        chain = args.chain
        if chain is None:
            try:
                chain = int(store.run_record(args.resume)["parameters"]["chain"])
            except (StoreError, KeyError, TypeError, ValueError) as exc:
                return _fail(str(exc))
        w3 = chain_web3(chain, url=args.rpc_url)
        target = getattr(w3.provider, "public_url", "the node")
        try:
            collector = ChainCollector(
                w3,
                store,
                chain=chain,
                from_block=args.from_block,
                to_block=args.to_block,
                events=args.events,
                chunk=args.chunk,
                progress=not args.no_progress,
            )
            result = collector.run(resume=args.resume)
        except RpcFailure as exc:
            return _fail(f"the node at {target} answered an error: {exc}")
        except (StoreError, ValueError) as exc:
            return _fail(str(exc))
        except httpx.HTTPError as exc:
            return _fail(f"cannot reach the node at {target} ({type(exc).__name__})")
        finally:
            w3.provider.close()  # type: ignore[attr-defined]
    return _report(result)


# -- collect pools: Uniswap pools from their factories' logs, snapshot at the last block ------


def _add_pool_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tokens",
        metavar="LIST",
        default=None,
        help="pools: comma-separated token addresses; pools between two of them are found "
        "(default: the registry's tokens on the chain)",
    )
    for kind in ("v3", "v2"):
        parser.add_argument(
            f"--{kind}-factory",
            metavar="ADDR",
            default=None,
            help=f"pools: the Uniswap {kind.upper()} factory (default: the registry's; giving "
            "either factory replaces both)",
        )
    parser.add_argument(
        "--depth-ticks",
        type=integer(minimum=1),
        metavar="N",
        default=None,
        help="pools: initialised ticks read either side of each V3 pool's price (default: "
        "4000, about ±49 %% in price); a quote beyond them is refused",
    )


def _pools(args: argparse.Namespace) -> int:
    import httpx

    from toolkit.client import chain_web3
    from toolkit.collect import RpcFailure
    from toolkit.collect.pool_state import DEFAULT_DEPTH_TICKS
    from toolkit.collect.pools import PoolCollector
    from toolkit.store import Store, StoreError

    if args.chain is None and args.resume is None:
        return _fail("--chain: required for pools (a chain id such as 1)")
    if args.rpc_url is not None and not args.rpc_url.startswith(("http://", "https://")):
        return _fail("--rpc-url: must be an absolute http(s) URL")
    tokens = None
    if args.tokens is not None:
        tokens = [t.strip() for t in args.tokens.split(",") if t.strip()]
    try:
        store = Store(args.db)
    except StoreError as exc:
        return _fail(f"cannot use the database: {exc}")
    with store:
        chain = args.chain
        if chain is None:
            try:
                chain = int(store.run_record(args.resume)["parameters"]["chain"])
            except (StoreError, KeyError, TypeError, ValueError) as exc:
                return _fail(str(exc))
        w3 = chain_web3(chain, url=args.rpc_url)
        target = getattr(w3.provider, "public_url", "the node")
        try:
            collector = PoolCollector(
                w3,
                store,
                chain=chain,
                tokens=tokens,
                v3_factory=args.v3_factory,
                v2_factory=args.v2_factory,
                from_block=args.from_block,
                to_block=args.to_block,
                chunk=args.chunk,
                depth_ticks=args.depth_ticks or DEFAULT_DEPTH_TICKS,
                progress=not args.no_progress,
            )
            result = collector.run(resume=args.resume)
        except RpcFailure as exc:
            return _fail(f"the node at {target} answered an error: {exc}")
        except (StoreError, ValueError) as exc:
            return _fail(_flag(str(exc)))
        except httpx.HTTPError as exc:
            return _fail(f"cannot reach the node at {target} ({type(exc).__name__})")
        finally:
            w3.provider.close()  # type: ignore[attr-defined]
    return _report(result)


def _flag(message: str) -> str:
    """The collector's message with its argument named as the command-line flag."""
    if message.startswith("v3_factory/v2_factory"):
        return "--v3-factory/--v2-factory" + message[len("v3_factory/v2_factory") :]
    for name in ("tokens", "v3_factory", "v2_factory", "depth_ticks", "from_block", "to_block"):
        if message.startswith(name):
            return "--" + name.replace("_", "-") + message[len(name) :]
    return message
