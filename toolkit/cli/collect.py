"""``toolkit collect rfq|borrow|liquidity|snapshot|chain|swap|credit|pools|prices``: collect
from the service, or a chain's blocks, logs and prices, into DuckDB.

The target is one :class:`~toolkit.client.Target` for every surface: ``--base-url`` /
``$TOOLKIT_BASE_URL``, ``--swap-url`` / ``$TOOLKIT_SWAP_URL``, ``$TOOLKIT_CREDIT_URL``,
``$TOOLKIT_RPC_URL_<chainId>``, over ``--profile`` / ``$TOOLKIT_PROFILE``; or ``--embedded``,
the simulated service in-process (nothing is started outside this process, no port is opened),
which is never chosen unless named. With no target the command says how to choose one and
exits 2; a surface left unconfigured while others are set is an error naming its variable.
Keys are read from the environment (or the profile) only: there is no key option, so a key
never lands in shell history, process lists or output. For ``liquidity`` against the
embedded service, a background thread replays other users' order flow at the scenario's rates
(RFQs, orders opened on chain, fills and settlements; not recorded:
:class:`toolkit.simulate.Traffic`) so that the stream carries a market's events; against a
real service nothing is sent but the stream request.

``chain`` reads blocks and token logs of ``--chain`` over ``--from-block``..``--to-block``
through JSON-RPC: ``--rpc-url``, else ``$TOOLKIT_RPC_URL_<chainId>``, else (``--embedded``) the
embedded service's simulated chain in-process. Only the URL's scheme, host and port are
recorded; a ``--to-block`` beyond the chain head is refused with the head's number.

``swap`` sweeps the swap API (pairs × log-spaced sizes × mainnet and base) into ``swap_routes``
and ``swap_route_legs``: the swap URL is ``--swap-url`` or ``$TOOLKIT_SWAP_URL`` (the embedded
service's ``/swap`` with ``--embedded``), the Basic credentials ``$TOOLKIT_SWAP_USERNAME`` and
``$TOOLKIT_SWAP_API_KEY``; the grid's tokens come from the chain registry (the scenario's own
tokens only with ``--embedded``), sized at the store's latest prices; on the embedded service
the AMM pools are also read through web3.py into ``amm_pool_snapshots``.

``pools`` finds the Uniswap V2 pairs and V3 pools between ``--tokens`` (default: the registry's
tokens on ``--chain``) from the factories' creation logs (``--v3-factory``/``--v2-factory``,
default: the registry's, from their deployment block) over JSON-RPC as ``chain`` does, into
``amm_pools``, and reads every one at the last block into ``amm_pool_snapshots`` and
``amm_pool_ticks`` (``--depth-ticks`` either side of the price).

``credit`` snapshots ``/credit/protocol`` and, for each of ``--accounts`` (and with
``--all-known`` the accounts of earlier credit runs and every account the credit hubs' and
collateral escrows' events name, found through ``eth_getLogs``),
``/info``, operator status and auto top-up configs, ``--rounds`` times ``--interval`` seconds
apart; the credit surface needs no key.

``prices`` reads USD prices on each chain of the target (``--chain``; default: every chain with
a ``$TOOLKIT_RPC_URL_<chainId>``, or every simulated chain with ``--embedded``) through web3.py
into ``prices``: the chain registry's price feeds (the credit hubs' oracles, source ``oracle``)
and the mid price of each pool against a USD stablecoin (source ``pool``): the pools of
``--pools`` (with ``--chain``), else those the store knows on the chain (``collect pools``),
else on the embedded service its simulated markets' pools.

Exit status: 0 completed, 2 for no target, a bad URL, a rejected key (401), an unreachable
service, a run in which every request failed (recorded ``failed``; the message names the first
error), an unwritable database or a bad option, 130 when interrupted (the run can be resumed).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from toolkit.cli.argtypes import flagged, integer, names, real
from toolkit.cli.target import add_target_arguments, load_target

__all__ = ["add_arguments", "run"]

_KINDS = ("rfq", "borrow", "liquidity", "snapshot", "chain", "swap", "credit", "pools", "prices")
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
    add_target_arguments(parser)
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
        "--chain",
        type=integer(minimum=1),
        metavar="ID",
        default=None,
        help="chain, pools: chain id; prices: one chain (default: every configured chain)",
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
        help="chain: JSON-RPC endpoint (default: $TOOLKIT_RPC_URL_<chainId>, or the embedded "
        "service's chain with --embedded)",
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
        help="credit: add the accounts of earlier credit runs and every account the credit "
        "hubs' events name (discovered through eth_getLogs)",
    )
    _add_pool_arguments(parser)
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _fail(message: str) -> int:
    print(f"toolkit collect: {flagged(message)}", file=sys.stderr)
    return 2


def _connect(args: argparse.Namespace, **options: Any) -> Any:
    """The :class:`~toolkit.client.Connection` of the command's target (raises TargetError)."""
    from toolkit.client import Connection

    return Connection(load_target(args), **options)


def run(args: argparse.Namespace) -> int:
    """Run one collection; print the run id, rows written and database path."""
    from toolkit.client import (
        RetryPolicy,
        TargetError,
    )
    from toolkit.store import Store, StoreError

    if args.kind == "pools":
        # Only a node is read: no service target, so no connection to open.
        try:
            return _pools(args)
        except TargetError as exc:
            return _fail(str(exc))
    if args.kind == "prices":
        return _prices(args)
    if args.capacity_retries < 0:
        return _fail(f"--capacity-retries: must be 0 or more, got {args.capacity_retries}")
    try:
        conn = _connect(args, retry=RetryPolicy(capacity_retries=args.capacity_retries))
    except TargetError as exc:
        return _fail(str(exc))
    with conn:
        try:
            if args.kind == "chain":
                return _chain(conn, args)
            if args.kind == "swap":
                return _swap(conn, args)
            client = conn.credit_service if args.kind == "credit" else conn.service
        except TargetError as exc:
            return _fail(str(exc))
        try:
            store = Store(args.db)
        except StoreError as exc:
            return _fail(f"cannot use the database: {exc}")
        with store:
            return _outcome(
                lambda: _collect(conn, client, store, args),
                f"the service at {client.base_url}",
                "the API key (401); set TOOLKIT_API_KEY to a key it accepts",
            )


def _outcome(collect: Any, target: str, rejected: str = "") -> int:
    """Run ``collect`` (a collector's ``run``) and turn its outcome into the exit status: the
    one place where every collector's errors become one-line messages. A run in which every
    request failed is recorded ``failed`` and named by its first error."""
    import httpx

    from toolkit.client import ServiceError, TransportError, Unauthorized
    from toolkit.collect import CollectionFailed, RpcFailure
    from toolkit.store import StoreError

    try:
        result = collect()
    except Unauthorized:
        return _fail(f"{target} rejected {rejected}")
    except CollectionFailed as exc:
        cause = exc.__cause__
        if isinstance(cause, TransportError | httpx.TransportError):
            reason = cause if isinstance(cause, TransportError) else type(cause).__name__
            return _fail(f"cannot reach {target} ({reason})")
        return _fail(f"run failed: every request to {target} failed; the first: {exc}")
    except TransportError as exc:
        return _fail(f"cannot reach {target} ({exc})")
    except (ServiceError, RpcFailure) as exc:
        return _fail(f"{target} answered an error: {exc}")
    except httpx.HTTPError as exc:
        return _fail(f"cannot reach {target} ({type(exc).__name__})")
    except (StoreError, ValueError) as exc:
        return _fail(_flag(str(exc)))
    return _report(result)


def _swap(conn: Any, args: argparse.Namespace) -> int:
    from toolkit.collect.swap import SwapSweep, default_points
    from toolkit.store import Store, StoreError

    client = conn.swap
    try:
        store = Store(args.db)
    except StoreError as exc:
        return _fail(f"cannot use the database: {exc}")
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
    with store:
        from toolkit.store import latest_prices

        simulated = conn.embedded is not None
        points = default_points(
            simulated=simulated, prices=None if simulated else latest_prices(store)
        )
        sweep = SwapSweep(
            client, store, points=points, web3s=web3s, pools=pools, progress=not args.no_progress
        )
        return _outcome(
            lambda: sweep.run(resume=args.resume),
            f"the swap service at {client.url}",
            "the credentials (401); set TOOLKIT_SWAP_USERNAME and TOOLKIT_SWAP_API_KEY",
        )


def _report(result: Any) -> int:
    tables = ", ".join(f"{name} {count}" for name, count in sorted(result.by_table.items()))
    print(f"run {result.run_id} ({result.kind}) {result.status}")
    print(f"rows written: {result.rows_written}" + (f" ({tables})" if tables else ""))
    print(f"database: {result.db_path}")
    if result.status == "interrupted":
        print(f"resume with: toolkit collect {result.kind} --resume {result.run_id}")
        return 130
    return 0


def _collect(conn: Any, client: Any, store: Any, args: argparse.Namespace) -> Any:
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


def _chain(conn: Any, args: argparse.Namespace) -> int:

    from toolkit.client import chain_web3
    from toolkit.collect import ChainCollector

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
    # The node first: with no target nothing is opened, not even the database.
    if args.chain is not None and args.rpc_url is None:
        conn.chain(args.chain)
    return _on_node(
        args,
        lambda chain: (
            conn.chain(chain) if args.rpc_url is None else chain_web3(chain, url=args.rpc_url)
        ),
        lambda w3, store, chain: ChainCollector(
            w3,
            store,
            chain=chain,
            from_block=args.from_block,
            to_block=args.to_block,
            events=args.events,
            chunk=args.chunk,
            progress=not args.no_progress,
        ),
        close=args.rpc_url is not None,  # a node the connection opened stays the connection's
    )


# -- collect pools: Uniswap pools from their factories' logs, snapshot at the last block ------


def _add_pool_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tokens",
        metavar="LIST",
        default=None,
        help="pools: comma-separated token addresses; pools between two of them are found "
        "(default: the registry's tokens on the chain)",
    )
    parser.add_argument(
        "--pools",
        metavar="LIST",
        default=None,
        help="prices: comma-separated pool addresses on --chain whose mid prices to read "
        "(default: the pools the database knows on each chain)",
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


def _on_node(
    args: argparse.Namespace,
    web3_for: Callable[[int], Any],
    collector: Callable[[Any, Any, int], Any],
    *,
    close: bool,
) -> int:
    """Run a chain-reading collector (chain logs, pools): open the database, find the chain
    (``--chain`` or the resumed run's), open its node and run ``collector(w3, store, chain)``,
    closing the node after when ``close``."""
    from toolkit.client import TargetError
    from toolkit.collect.chain import provider_url
    from toolkit.store import Store, StoreError

    try:
        store = Store(args.db)
    except StoreError as exc:
        return _fail(f"cannot use the database: {exc}")
    with store:
        try:
            chain = _chain_of(store, args)
        except (StoreError, KeyError, TypeError, ValueError) as exc:
            return _fail(str(exc))
        try:
            w3 = web3_for(chain)
        except TargetError as exc:
            return _fail(str(exc))
        try:
            return _outcome(
                lambda: collector(w3, store, chain).run(resume=args.resume),
                f"the node at {provider_url(w3)}",
            )
        finally:
            if close:
                w3.provider.close()


def _chain_of(store: Any, args: argparse.Namespace) -> int:
    """The chain a chain or pools run reads: ``--chain``, else the chain of the run ``--resume``
    names (``StoreError`` when there is no such run)."""
    if args.chain is not None:
        return int(args.chain)
    return int(store.run_record(args.resume)["parameters"]["chain"])


def _pools(args: argparse.Namespace) -> int:

    from toolkit.client import chain_web3
    from toolkit.collect.pool_state import DEFAULT_DEPTH_TICKS
    from toolkit.collect.pools import PoolCollector

    if args.chain is None and args.resume is None:
        return _fail("--chain: required for pools (a chain id such as 1)")
    if args.rpc_url is not None and not args.rpc_url.startswith(("http://", "https://")):
        return _fail("--rpc-url: must be an absolute http(s) URL")
    tokens = None
    if args.tokens is not None:
        tokens = [t.strip() for t in args.tokens.split(",") if t.strip()]
    return _on_node(
        args,
        lambda chain: chain_web3(chain, url=args.rpc_url),
        lambda w3, store, chain: PoolCollector(
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
        ),
        close=True,
    )


def _flag(message: str) -> str:
    """The collector's message with its argument named as the command-line flag."""
    if message.startswith("v3_factory/v2_factory"):
        return "--v3-factory/--v2-factory" + message[len("v3_factory/v2_factory") :]
    for name in ("tokens", "v3_factory", "v2_factory", "depth_ticks", "from_block", "to_block"):
        if message.startswith(name):
            return "--" + name.replace("_", "-") + message[len(name) :]
    return message


# -- collect prices: the registry's price feeds and pools' mid prices, per chain -------------


def _prices(args: argparse.Namespace) -> int:
    from toolkit.client import TargetError
    from toolkit.collect.price_collector import PriceCollector, pool_addresses
    from toolkit.store import Store, StoreError

    if args.resume is not None:
        return _fail("--resume: a prices run reads once and is not resumed; run it again")
    if args.pools is not None and args.chain is None:
        return _fail("--pools: give --chain too (pool addresses are per chain)")
    pools = None
    if args.pools is not None:
        try:
            pools = {args.chain: pool_addresses([p.strip() for p in args.pools.split(",")])}
        except ValueError as exc:
            return _fail(f"--{exc}")
    try:
        conn = _connect(args)
    except TargetError as exc:
        return _fail(str(exc))
    with conn:
        try:
            chains = _price_chains(conn, args.chain)
            web3s = {chain: conn.chain(chain) for chain in chains}
        except TargetError as exc:
            return _fail(str(exc))
        scenario = None if conn.embedded is None else conn.embedded.scenario
        if pools is None and scenario is not None:
            pools = _market_pools(scenario, chains)
        try:
            store = Store(args.db)
        except StoreError as exc:
            return _fail(f"cannot use the database: {exc}")
        with store:
            collector = PriceCollector(
                web3s, store, pools=pools, scenario=scenario, progress=not args.no_progress
            )
            return _outcome(collector.run, f"the node at {collector.target_url()}")


def _price_chains(conn: Any, chain: int | None) -> list[int]:
    """The chains a prices run reads: ``--chain``, else the embedded service's, else every
    chain with a JSON-RPC URL (TargetError naming the variables when there is none)."""
    from toolkit.client import NoTarget, TargetError

    if chain is not None:
        return [chain]
    if conn.embedded is not None:
        return [c.id for c in conn.embedded.scenario.chains]
    chains = sorted(conn.target.rpc_urls)
    if chains:
        return chains
    if conn.target.kind == "none":
        conn.target.require("service")  # raises NoTarget, saying how to choose one
        raise NoTarget("no target")  # pragma: no cover - require raised
    raise TargetError(
        "TOOLKIT_RPC_URL_<chainId>: not set for any chain; prices are read on chain: set one "
        "per chain to read (TOOLKIT_RPC_URL_8453=...) or use the embedded service (--embedded)"
    )


def _market_pools(scenario: Any, chains: list[int]) -> dict[int, list[str]]:
    """The embedded service's simulated pools on ``chains`` (the simulation's own list)."""
    from toolkit.world.evm.markets import market_for

    found = {}
    for chain in chains:
        market = market_for(scenario, chain)
        if market is not None:
            found[chain] = [p.address for p in market.pools]
    return found
