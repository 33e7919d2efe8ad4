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

``health`` watches the USDC credit hub's health factors until ``--duration`` or Ctrl-C,
writing crossings to ``alerts`` and posting them to ``--webhook`` (``toolkit.cli.collect.health``).

``prices`` reads USD prices on each chain of the target (``--chain``; default: every chain with
a ``$TOOLKIT_RPC_URL_<chainId>``, or every simulated chain with ``--embedded``) through web3.py
into ``prices``: the chain registry's price feeds (the credit hubs' oracles, source ``oracle``)
and the mid price of each pool against a USD stablecoin (source ``pool``): the pools of
``--pools`` (with ``--chain``), else those the store knows on the chain (``collect pools``),
else on the embedded service its simulated markets' pools.

``--follow`` (``chain``, ``pools``, ``credit``, ``liquidity``, ``rfq``, ``borrow``, ``swap``)
runs the collector until SIGINT or SIGTERM, polling every ``--poll-s`` seconds
(:mod:`toolkit.collect.follow`): a chain reorg-safe from the head (or after what the store holds;
``--confirmations``: the depth at which a block is final on a node without finalized/safe
tags), pools read at the head, the credit book and sweeps a round a poll, the event stream
written every second. ``--resume RUN_ID`` continues a followed run (a killed one too) where the
store says; ``--log-json`` prints the followers' events as JSON lines. It exits 130 after
SIGINT, 0 after SIGTERM (:mod:`toolkit.cli.following`).

Exit status: 0 completed, 2 for no target, a bad URL, a rejected key (401), an unreachable
service, a run in which every request failed (recorded ``failed``; the message names the first
error), an unwritable database or a bad option, 130 when interrupted (the run can be resumed).
"""

from __future__ import annotations

import argparse

from toolkit.cli.argtypes import integer, real
from toolkit.cli.collect.chain import add_chain_arguments, add_pool_arguments
from toolkit.cli.collect.health import add_health_arguments
from toolkit.cli.collect.service import add_credit_arguments
from toolkit.cli.target import add_target_arguments

__all__ = ["add_arguments", "run"]

_KINDS = (
    "rfq",
    "borrow",
    "liquidity",
    "snapshot",
    "chain",
    "swap",
    "credit",
    "pools",
    "prices",
    "health",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``collect`` options to ``parser``.

    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args(["chain", "--chain", "8453"]).chunk
    2000
    """
    parser.add_argument("kind", choices=_KINDS, help="what to collect")
    parser.add_argument(
        "--db",
        metavar="PATH",
        default=None,
        help="DuckDB file to write (default: data/toolkit.duckdb)",
    )
    add_target_arguments(parser)
    _add_run_arguments(parser)
    add_chain_arguments(parser)
    add_credit_arguments(parser)
    add_pool_arguments(parser)
    add_health_arguments(parser)
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    _add_follow_arguments(parser)


def _add_follow_arguments(parser: argparse.ArgumentParser) -> None:
    """``--follow`` and how a followed collector polls."""
    from toolkit.cli.following import add_log_arguments

    parser.add_argument(
        "--follow",
        action="store_true",
        help="chain, pools, credit, liquidity, rfq, borrow, swap: run until SIGINT/SIGTERM, "
        "polling every --poll-s seconds (chain: reorg-safe, following the head)",
    )
    parser.add_argument(
        "--poll-s",
        type=real(above=0),
        metavar="S",
        default=None,
        help="with --follow: seconds between polls (default: chain 2, liquidity 1, credit 60, "
        "pools 300, sweeps their --interval or 600)",
    )
    parser.add_argument(
        "--confirmations",
        type=integer(minimum=0),
        metavar="K",
        default=12,
        help="chain --follow: blocks deep a block is final on a node without finalized/safe "
        "tags (default: 12)",
    )
    add_log_arguments(parser)


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """How long and how often a run collects, and what it follows (sweeps, streams)."""
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
        "--max-rps",
        type=real(above=0),
        metavar="R",
        default=None,
        help="at most R requests a second, every attempt of the run counted (the service's "
        "and the JSON-RPC nodes', retries included; default: unpaced)",
    )
    parser.add_argument(
        "--capacity-retries",
        type=int,
        metavar="N",
        default=3,
        help="rfq: retries of a capacity 404 (reservations lapse in 15 s) (default: 3)",
    )


def run(args: argparse.Namespace) -> int:
    """Run one collection; print the run id, rows written and database path."""
    from toolkit.cli.collect.chain import collect_pools
    from toolkit.cli.collect.outcome import fail
    from toolkit.cli.collect.prices import collect_prices
    from toolkit.cli.collect.service import collect_service
    from toolkit.client import TargetError

    if args.kind == "pools":
        # Only a node is read: no service target, so no connection to open.
        try:
            return collect_pools(args)
        except TargetError as exc:
            return fail(exc)
    if args.kind == "prices":
        if args.follow:
            return fail("--follow: prices reads once; follow pools (their mid prices) instead")
        return collect_prices(args)
    if args.kind == "health":
        from toolkit.cli.collect.health import collect_health

        return collect_health(args)
    return collect_service(args)
