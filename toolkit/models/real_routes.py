"""Swap routes on real liquidity: the service's route, the exact optimum and the best single
pool, all on the pools of one snapshot (one block), in bps and USD, gas included.

The venues are a chain's pools as one block held them (:func:`toolkit.amm.snapshot.
venues_from_snapshot` of a ``toolkit collect pools`` run). For each input amount:

- **optimum**: :func:`toolkit.amm.routing.best_route` over every path of up to ``max_hops``
  pools, split over up to ``max_paths`` paths, executed exactly on the snapshot;
- **single pool**: the best direct pool taking the whole amount;
- **service**: the route the swap endpoint answered (its Universal Router legs: paths, fee
  tiers and amounts, :func:`service_allocation`) executed exactly on the same pools, so the
  comparison is at one block even when the quote was not (null where a leg uses a pool the
  snapshot lacks).

Gas is :class:`GasModel`'s estimate of each route (per hop and per initialised tick crossed,
measured against Uniswap's bytecode on anvil) at the block's base fee, in USD with the
native coin's price; the ``net`` figures subtract it from the output's USD value.

>>> from toolkit.amm.routing import Venue
>>> from toolkit.amm.v2 import Pair
>>> venues = [Venue.v2("deep", "WETH", "USDC", Pair(10**22, 3 * 10**25)),
...           Venue.v2("thin", "WETH", "USDC", Pair(10**21, 3 * 10**24))]
>>> frame = real_liquidity_comparison(venues, "WETH", "USDC", [10**21], price_out_usd=1e-18,
...                                   base_fee_wei=10**10, native_usd=3000.0)
>>> frame["optimum_paths"][0], round(frame["optimum_vs_single_bps"][0], 1)
(2, 83.1)
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from toolkit.amm.errors import AmmError
from toolkit.amm.paths import Hop, Path, SplitRoute, Venue, execute_allocation
from toolkit.amm.routing import best_route
from toolkit.amm.snapshot import venues_from_snapshot
from toolkit.amm.v2 import Pair
from toolkit.arguments import ArgumentError, number, whole
from toolkit.models.bps import gain_bps

__all__ = [
    "GasModel",
    "real_liquidity_comparison",
    "route_gas",
    "service_allocation",
    "snapshot_venues",
]


def snapshot_venues(
    snapshots: pl.DataFrame, ticks: pl.DataFrame, names: Mapping[str, str] | None = None
) -> list[Venue]:
    """The venues of one snapshot as stored (``amm_pool_snapshots`` rows of one
    ``snapshot_id`` and its ``amm_pool_ticks``), tokens named by ``names`` (address →
    symbol)."""
    if snapshots["snapshot_id"].n_unique() > 1:
        raise ArgumentError(
            "snapshots", "the rows of one snapshot_id", snapshots["snapshot_id"].unique().to_list()
        )
    by_pool: dict[str, list[tuple[int, ...]]] = {}
    columns = ("pool", "tick", "liquidity_net", "liquidity_gross", "fee_growth_outside0_x128",
               "fee_growth_outside1_x128")  # fmt: skip
    for pool, tick, net, gross, outside0, outside1 in ticks.select(columns).iter_rows():
        by_pool.setdefault(pool, []).append(
            (tick, int(net), int(gross), int(outside0 or 0), int(outside1 or 0))
        )
    return venues_from_snapshot(snapshots.iter_rows(named=True), by_pool, names)


@dataclass(frozen=True)
class GasModel:
    """Gas of a swap route: one transaction, each pool crossing, each initialised V3 tick
    crossed. Defaults measured on anvil against Uniswap's published bytecode: a one-pool
    ``SwapRouter.exactInputSingle`` costs about 105,000 gas plus about 24,000 per initialised
    tick crossed (the median of 40 seeded swaps; swaps that write cold storage slots cost up
    to twice that), a one-hop ``UniswapV2Router02`` swap about 87,000. The tests hold the
    median swap to the node's ``gasUsed`` within 10 %."""

    transaction: int = 21_000
    v2_hop: int = 66_000
    v3_hop: int = 84_000
    v3_tick: int = 24_000


def _crossed(venue: Venue, token_in: str, amount: int) -> tuple[int, int]:
    """Swap ``amount`` on ``venue`` (a copy: committed): the output and the initialised ticks
    the price crossed (0 for a V2 pair)."""
    pool = venue.pool
    if isinstance(pool, Pair):
        return venue.out(token_in, amount, commit=True), 0
    before = pool.tick
    out = venue.out(token_in, amount, commit=True)
    low, high = sorted((before, pool.tick))
    return out, sum(1 for tick in pool.ticks if low < tick <= high)


def route_gas(route: SplitRoute, model: GasModel | None = None) -> int:
    """The gas ``model`` gives ``route``: the splits replayed on copies of the pools (largest
    first, as executed) to count the ticks each hop crosses.

    >>> from toolkit.amm.routing import find_paths
    >>> venue = Venue.v2("a", "X", "Y", Pair(10**6, 10**6))
    >>> route_gas(execute_allocation({find_paths([venue], "X", "Y")[0]: 1000}))
    87000
    """
    model = model or GasModel()
    copies: dict[int, Venue] = {}
    gas = model.transaction
    for split in route.splits:
        amount = split.amount_in
        for hop in split.path:
            venue = copies.setdefault(id(hop.venue), copy.deepcopy(hop.venue))
            out, crossed = _crossed(venue, hop.token_in, amount)
            gas += model.v2_hop if isinstance(venue.pool, Pair) else model.v3_hop
            gas += crossed * model.v3_tick
            amount = out
    return gas


def _leg(command: Any) -> tuple[list[str], list[int | None], int | None] | None:
    """``(tokens, fees (None for V2), amount_in (None: the rest))`` of a swap command."""
    path = getattr(command, "path", None)
    if path is None or not hasattr(command, "amount_in"):
        return None
    if len(path) >= 3 and isinstance(path[1], int):  # V3: token, fee, token, ...
        tokens, fees = list(path[::2]), list(path[1::2])
    else:
        tokens, fees = list(path), [None] * (len(path) - 1)
    amount = command.amount_in
    return tokens, fees, None if amount >= 2**255 else amount  # CONTRACT_BALANCE: the rest


def service_allocation(
    commands: Sequence[Any],
    venues: Sequence[Venue],
    amount_in: int,
    symbols: Mapping[str, str] | None = None,
) -> dict[Path, int] | None:
    """The service's route (decoded Universal Router commands) as an allocation over
    ``venues``: each swap leg's path matched to the pools by tokens and fee tier (``symbols``:
    lower-case address → the name the venues use). None when a leg's pool is not among the
    venues."""
    names = {k.lower(): v for k, v in (symbols or {}).items()}
    allocation: dict[Path, int] = {}
    rest: Path | None = None
    for command in commands:
        leg = _leg(command)
        if leg is None:
            continue
        tokens, fees, amount = leg
        hops = []
        for i, fee in enumerate(fees):
            token_in, token_out = (names.get(t.lower(), t) for t in tokens[i : i + 2])
            venue = next(
                (v for v in venues if {v.token0, v.token1} == {token_in, token_out}
                 and (isinstance(v.pool, Pair) if fee is None
                      else not isinstance(v.pool, Pair) and v.pool.fee == fee)),
                None,
            )  # fmt: skip
            if venue is None:
                return None
            hops.append(Hop(venue, token_in, token_out))
        path = tuple(hops)
        if amount is None:
            rest = path
        else:
            allocation[path] = allocation.get(path, 0) + amount
    if rest is not None:
        allocation[rest] = allocation.get(rest, 0) + amount_in - sum(allocation.values())
    return allocation or None


def _best_single(venues: Sequence[Venue], token_in: str, token_out: str, amount: int) -> Venue:
    direct = [v for v in venues if {v.token0, v.token1} == {token_in, token_out}]
    quotes = []
    for venue in direct:
        try:
            quotes.append((venue.out(token_in, amount), venue))
        except AmmError:  # cannot take it (or beyond the snapshot's depth)
            continue
    if not quotes:
        raise AmmError(f"no single pool from {token_in} to {token_out} can take {amount}")
    return max(quotes, key=lambda q: q[0])[1]


def real_liquidity_comparison(
    venues: Sequence[Venue],
    token_in: str,
    token_out: str,
    amounts: Sequence[int],
    *,
    price_out_usd: float,
    base_fee_wei: int,
    native_usd: float,
    service: Mapping[int, dict[Path, int] | None] | None = None,
    gas: GasModel | None = None,
    max_hops: int = 3,
    max_paths: int = 4,
) -> pl.DataFrame:
    """One row per amount (module docstring): ``optimum_out``/``single_out``/``service_out``
    (exact, smallest units of ``token_out``), ``optimum_paths``, ``single_pool``, gas units
    and USD of each route, the optimum's gain over the single pool and over the service in
    bps and in USD, and the same net of gas. ``price_out_usd`` is the USD value of one
    smallest unit of ``token_out``; ``service`` the service's allocation per amount
    (:func:`service_allocation`)."""
    if not amounts:
        raise ArgumentError("amounts", "at least one amount", amounts)
    number(price_out_usd, "price_out_usd", minimum=0.0)
    number(native_usd, "native_usd", minimum=0.0)
    whole(base_fee_wei, "base_fee_wei", minimum=0)
    usd_per_gas = base_fee_wei * native_usd / 1e18
    rows = []
    for amount in amounts:
        whole(amount, "amounts[]", minimum=1)
        optimum = best_route(
            venues, token_in, token_out, amount, max_hops=max_hops, max_paths=max_paths
        )
        single_venue = _best_single(venues, token_in, token_out, amount)
        single = execute_allocation({(Hop(single_venue, token_in, token_out),): amount})
        allocation = (service or {}).get(amount)
        served = execute_allocation(allocation) if allocation else None
        row: dict[str, Any] = {"amount_in": amount, "single_pool": single_venue.name}
        for name, route in (("optimum", optimum), ("single", single), ("service", served)):
            units = None if route is None else route_gas(route, gas)
            row[f"{name}_out"] = None if route is None else route.amount_out
            row[f"{name}_gas"] = units
            row[f"{name}_gas_usd"] = None if units is None else units * usd_per_gas
        row["optimum_paths"] = len(optimum.splits)
        for other in ("single", "service"):
            out = row[f"{other}_out"]
            if out is None:
                row |= dict.fromkeys((f"optimum_vs_{other}_bps", f"optimum_vs_{other}_usd",
                                      f"optimum_vs_{other}_net_usd"))  # fmt: skip
                continue
            gain_usd = (optimum.amount_out - out) * price_out_usd
            row[f"optimum_vs_{other}_bps"] = gain_bps(optimum.amount_out, out)
            row[f"optimum_vs_{other}_usd"] = gain_usd
            row[f"optimum_vs_{other}_net_usd"] = gain_usd - (
                row["optimum_gas_usd"] - row[f"{other}_gas_usd"]
            )
        rows.append(row)
    ints = ("amount_in", "optimum_out", "single_out", "service_out")
    return pl.DataFrame(
        rows, schema_overrides=dict.fromkeys(ints, pl.Int128), infer_schema_length=None
    )
