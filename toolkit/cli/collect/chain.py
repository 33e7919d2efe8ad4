"""``toolkit collect chain|pools``: a chain's blocks and logs, and Uniswap pools from their
factories' logs snapshot at the last block, read over JSON-RPC."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from toolkit.cli.argtypes import integer, names
from toolkit.cli.collect.outcome import fail, outcome, retry_policy, run_or_follow

__all__ = ["add_chain_arguments", "add_pool_arguments", "collect_chain", "collect_pools"]


def _events(text: str) -> tuple[str, ...]:
    """``--events``: names from the collector's own table, imported when the flag is given
    (importing the collectors costs seconds that ``toolkit --help`` should not pay)."""
    from toolkit.collect.chain import CHAIN_EVENTS

    return names(tuple(CHAIN_EVENTS))(text)


def add_chain_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the runs that read a chain: which chain, blocks, events and node."""
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
        type=_events,
        metavar="LIST",
        default=None,
        help="chain: comma-separated events to collect (default: every event the collector "
        "reads; an unknown name lists them)",
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


def collect_chain(conn: Any, args: argparse.Namespace) -> int:
    """Read ``--chain``'s blocks and token logs into the store (``toolkit collect chain``)."""
    from toolkit.client import chain_web3
    from toolkit.collect import ChainCollector
    from toolkit.collect.chain_follow import ChainFollower

    if args.chain is None and args.resume is None:
        return fail("--chain: required for chain (a chain id such as 8453)")
    if args.follow and args.to_block is not None:
        return fail("--to-block: a followed chain has no last block; drop --to-block or --follow")
    if args.from_block is None and not args.follow:
        args.from_block = 0
    if args.to_block is not None and args.to_block < args.from_block:
        return fail(f"--to-block: must be >= --from-block ({args.from_block}), got {args.to_block}")
    if args.rpc_url is not None and not args.rpc_url.startswith(("http://", "https://")):
        return fail("--rpc-url: must be an absolute http(s) URL")
    # The node first: with no target nothing is opened, not even the database.
    if args.chain is not None and args.rpc_url is None:
        conn.chain(args.chain)
    options = {"from_block": args.from_block, "events": args.events, "chunk": args.chunk}
    return _on_node(
        args,
        lambda chain: (
            conn.chain(chain)
            if args.rpc_url is None
            else chain_web3(chain, url=args.rpc_url, retry=retry_policy(args))
        ),
        lambda w3, store, chain: (
            ChainFollower(
                w3,
                store,
                chain=chain,
                confirmations=args.confirmations,
                poll_s=args.poll_s or 2.0,
                resume=args.resume,
                **options,
            )
            if args.follow
            else ChainCollector(
                w3,
                store,
                chain=chain,
                to_block=args.to_block,
                progress=not args.no_progress,
                **options,
            )
        ),
        close=args.rpc_url is not None,  # a node the connection opened stays the connection's
    )


def add_pool_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``pools`` (tokens, factories, depth) and of ``prices`` (``--pools``)."""
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
    from toolkit.collect.rpc import provider_url
    from toolkit.store import Store, StoreError

    try:
        store = Store(args.db)
    except StoreError as exc:
        return fail(f"cannot use the database: {exc}")
    with store:
        try:
            chain = _chain_of(store, args)
        except (StoreError, KeyError, TypeError, ValueError) as exc:
            return fail(exc)
        try:
            w3 = web3_for(chain)
        except TargetError as exc:
            return fail(exc)
        try:
            return outcome(
                lambda: run_or_follow(collector(w3, store, chain), store, args),
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


def collect_pools(args: argparse.Namespace) -> int:
    """Find and snapshot the Uniswap pools between ``--tokens`` (``toolkit collect pools``)."""
    from toolkit.client import chain_web3
    from toolkit.collect.followers import PoolFollower
    from toolkit.collect.pool_state import DEFAULT_DEPTH_TICKS
    from toolkit.collect.pools import PoolCollector

    if args.chain is None and args.resume is None:
        return fail("--chain: required for pools (a chain id such as 1)")
    if args.rpc_url is not None and not args.rpc_url.startswith(("http://", "https://")):
        return fail("--rpc-url: must be an absolute http(s) URL")
    tokens = None
    if args.tokens is not None:
        tokens = [t.strip() for t in args.tokens.split(",") if t.strip()]
    if args.follow and args.to_block is not None:
        return fail("--to-block: followed pools are read at the head; drop --to-block")
    options = {
        "tokens": tokens,
        "v3_factory": args.v3_factory,
        "v2_factory": args.v2_factory,
        "from_block": args.from_block,
        "chunk": args.chunk,
        "depth_ticks": args.depth_ticks or DEFAULT_DEPTH_TICKS,
    }
    return _on_node(
        args,
        lambda chain: chain_web3(chain, url=args.rpc_url, retry=retry_policy(args)),
        lambda w3, store, chain: (
            PoolFollower(
                w3,
                store,
                chain=chain,
                every_s=args.poll_s or 300.0,
                resume=args.resume,
                **options,
            )
            if args.follow
            else PoolCollector(
                w3,
                store,
                chain=chain,
                to_block=args.to_block,
                progress=not args.no_progress,
                **options,
            )
        ),
        close=True,
    )
