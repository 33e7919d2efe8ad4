"""``toolkit collect prices``: the registry's price feeds and pools' mid prices, per chain."""

from __future__ import annotations

import argparse
from typing import Any

from toolkit.cli.collect.outcome import connect, fail, outcome

__all__ = ["collect_prices"]


def collect_prices(args: argparse.Namespace) -> int:
    """Read USD prices on each chain of the target into the store (``toolkit collect prices``)."""
    from toolkit.client import TargetError
    from toolkit.collect.price_collector import PriceCollector, pool_addresses
    from toolkit.store import Store, StoreError

    if args.resume is not None:
        return fail("--resume: a prices run reads once and is not resumed; run it again")
    if args.pools is not None and args.chain is None:
        return fail("--pools: give --chain too (pool addresses are per chain)")
    pools = None
    if args.pools is not None:
        try:
            pools = {args.chain: pool_addresses([p.strip() for p in args.pools.split(",")])}
        except ValueError as exc:
            return fail(exc)
    try:
        conn = connect(args)
    except TargetError as exc:
        return fail(exc)
    with conn:
        try:
            chains = _price_chains(conn, args.chain)
            web3s = {chain: conn.chain(chain) for chain in chains}
        except TargetError as exc:
            return fail(exc)
        scenario = None if conn.embedded is None else conn.embedded.scenario
        if pools is None and scenario is not None:
            pools = _market_pools(scenario, chains)
        try:
            store = Store(args.db)
        except StoreError as exc:
            return fail(f"cannot use the database: {exc}")
        with store:
            collector = PriceCollector(
                web3s, store, pools=pools, scenario=scenario, progress=not args.no_progress
            )
            return outcome(collector.run, f"the node at {collector.target_url()}")


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
