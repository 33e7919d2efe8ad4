"""Split routes on pools: what splitting and multi-hop buy over one path, and the 5 %-grid
baseline of the best-known open router.

Input: :class:`~toolkit.amm.routing.Venue` lists (wei-exact V2/V3 pools, e.g.
:func:`toolkit.models.real_routes.snapshot_venues` of a stored snapshot). Pure: no I/O, no
clock; outputs are exact integers, gains and impacts floats in bps.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from toolkit.amm.errors import AmmError
from toolkit.amm.routing import (
    SplitRoute,
    Venue,
    best_route,
    execute_allocation,
    find_paths,
    grid_allocation,
    quote_path,
)
from toolkit.arguments import ArgumentError, whole
from toolkit.models.bps import gain_bps, shortfall_bps

__all__ = ["grid_split", "route_comparison"]


def route_comparison(
    venues: Sequence[Venue],
    token_in: str,
    token_out: str,
    amounts: Sequence[int],
    *,
    parts: int = 20,
    max_hops: int = 3,
    max_paths: int = 4,
) -> pl.DataFrame:
    """One row per amount (smallest units): ``best_single`` (the best one-path output and its
    ``best_path``), ``split_out`` and ``paths`` (the split route), ``direct_out`` (the best
    split over direct pools only: no multi-hop), ``grid_out`` (:func:`grid_split`, the 5 %-grid
    baseline), the gains of the split in bps over each (``split_gain_bps`` over the single path,
    ``hop_gain_bps`` over direct pools, ``grid_gain_bps`` over the grid), and the price impact
    of the single path and of the split against the spot rate (the marginal rate of a tiny
    trade: ``single_impact_bps``, ``split_impact_bps``). Outputs are exact integers
    (``Int128``); ``direct_out`` is null when no pool joins the tokens directly. ``parts`` is
    the grid's resolution (20: 5 % shares).

    Parameters
    ----------
    venues : sequence of Venue
        The pools (toolkit.amm.routing.Venue: wei-exact V2/V3).
    token_in, token_out : str
        The input and output tokens, named as the venues name them.
    amounts : sequence of int
        Input amounts in smallest units, each positive.
    parts : int
        The grid's resolution for grid_split (20: 5 % shares).
    max_hops : int
        The most pools on one path.
    max_paths : int
        The most paths a split route uses.

    Returns
    -------
    polars.DataFrame
        One row per amount with the columns above.

    Examples
    --------
    >>> from toolkit.amm.routing import Venue
    >>> from toolkit.amm.v2 import Pair
    >>> venues = [Venue.v2("deep", "USDC", "USDT", Pair(10**24, 10**24)),
    ...           Venue.v2("thin", "USDC", "USDT", Pair(10**23, 10**23))]
    >>> frame = route_comparison(venues, "USDC", "USDT", [10**18, 10**23])
    >>> frame["best_path"].to_list(), frame["paths"][1], frame["split_gain_bps"][1] > 0
    (['deep', 'deep'], 2, True)
    >>> bool(frame["grid_gain_bps"].min() >= 0)
    True
    """
    if not amounts:
        raise ArgumentError("amounts", "at least one amount", amounts)
    paths = find_paths(venues, token_in, token_out, max_hops=max_hops)
    probe = max(1, min(whole(a, "amounts[]", minimum=1) for a in amounts) // 1_000)
    spot = max(quote_path(p, probe) for p in paths) / probe if paths else 0.0
    rows = []
    for amount in amounts:
        single_path = max(paths, key=lambda p: quote_path(p, amount))
        single = quote_path(single_path, amount)
        route = best_route(
            venues, token_in, token_out, amount, max_hops=max_hops, max_paths=max_paths
        )
        direct = _direct_out(venues, token_in, token_out, amount, max_paths)
        grid = grid_split(
            venues,
            token_in,
            token_out,
            amount,
            parts=parts,
            max_hops=max_hops,
            max_paths=max_paths,
        ).amount_out
        rows.append(
            {
                "amount_in": amount,
                "best_path": ">".join(h.venue.name for h in single_path),
                "best_single": single,
                "split_out": route.amount_out,
                "paths": len(route.splits),
                "direct_out": direct,
                "grid_out": grid,
                **_gains(route.amount_out, single, direct, grid, spot * amount),
            }
        )
    return pl.DataFrame(rows, schema_overrides=_COMPARISON_SCHEMA)


#: :func:`route_comparison`'s exact-integer and float columns.
_COMPARISON_SCHEMA = {
    "amount_in": pl.Int128,
    "best_single": pl.Int128,
    "split_out": pl.Int128,
    "direct_out": pl.Int128,
    "grid_out": pl.Int128,
    "split_gain_bps": pl.Float64,
    "hop_gain_bps": pl.Float64,
    "grid_gain_bps": pl.Float64,
    "single_impact_bps": pl.Float64,
    "split_impact_bps": pl.Float64,
}


def _direct_out(
    venues: Sequence[Venue], token_in: str, token_out: str, amount: int, max_paths: int
) -> int | None:
    """The best split over direct pools only (one hop), or None when no pool joins the
    tokens directly."""
    try:
        return best_route(
            venues, token_in, token_out, amount, max_hops=1, max_paths=max_paths
        ).amount_out
    except AmmError:
        return None


def _gains(
    split: int, single: int, direct: int | None, grid: int, ideal: float
) -> dict[str, float | None]:
    """The split's gains over the single path, direct pools and the grid, and the impacts of
    the single path and the split against ``ideal`` (the spot rate times the amount; no
    impact without a spot rate)."""
    return {
        "split_gain_bps": gain_bps(split, single),
        "hop_gain_bps": gain_bps(split, direct),
        "grid_gain_bps": gain_bps(split, grid),
        "single_impact_bps": shortfall_bps(single, ideal) if ideal else None,
        "split_impact_bps": shortfall_bps(split, ideal) if ideal else None,
    }


def grid_split(
    venues: Sequence[Venue],
    token_in: str,
    token_out: str,
    amount_in: int,
    *,
    parts: int = 20,
    max_hops: int = 3,
    max_paths: int = 4,
) -> SplitRoute:
    """The 5 %-grid baseline, the way the best-known open router splits: every path is quoted
    at each multiple of ``1 / parts`` of the input (5 % for 20), each path on its own, and the
    allocation of whole parts over at most ``max_paths`` paths with the largest sum of those
    quotes is chosen (an exact knapsack over the grid,
    :func:`toolkit.amm.routing.grid_allocation`). The chosen allocation is then executed
    on copies of the pools, so the output is exact to the wei (and paths that share a pool pay
    for it). :class:`~toolkit.amm.AmmError` when no path can take the amount.

    Parameters
    ----------
    venues : sequence of Venue
        The pools (toolkit.amm.routing.Venue: wei-exact V2/V3).
    token_in, token_out : str
        The input and output tokens, named as the venues name them.
    amount_in : int
        Input amount in smallest units, positive.
    parts : int
        Grid parts (1 to 1000; 20: 5 % shares).
    max_hops : int
        The most pools on one path.
    max_paths : int
        The most paths a split route uses.

    Returns
    -------
    toolkit.amm.routing.SplitRoute
        The executed allocation, exact to the wei.

    Examples
    --------
    >>> from toolkit.amm.v2 import Pair
    >>> venues = [Venue.v2("a", "USDC", "USDT", Pair(10**24, 10**24)),
    ...           Venue.v2("b", "USDC", "USDT", Pair(10**23, 10**23))]
    >>> [(s.path_label, s.amount_in) for s in grid_split(venues, "USDC", "USDT", 10**22).splits]
    [('a', 9000000000000000000000), ('b', 1000000000000000000000)]
    """
    whole(amount_in, "amount_in", minimum=1)
    whole(parts, "parts", minimum=1, maximum=1000)
    whole(max_paths, "max_paths", minimum=1, maximum=16)
    paths = find_paths(venues, token_in, token_out, max_hops=max_hops)
    if not paths:
        raise AmmError(f"no path from {token_in} to {token_out} within {max_hops} hops")
    allocation = grid_allocation(paths, amount_in, parts=parts, max_paths=max_paths)
    return execute_allocation(allocation)
