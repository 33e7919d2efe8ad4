"""Swap-route comparisons: for each trade size, the best single pool against the best split
route across pools, and what the split buys.

On top of :mod:`toolkit.amm.routing` (wei-exact V2/V3 venues): per amount, the output of the
best single path, of the split route and how many paths it uses, the improvement of the split
in basis points, and each one's price impact against the spot price (the marginal rate of a
tiny trade). Small trades take one pool; large ones split, and the split's edge grows with size.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from toolkit.amm.routing import Venue, best_route, find_paths, quote_path
from toolkit.arguments import ArgumentError, whole

__all__ = ["route_comparison"]


def route_comparison(
    venues: Sequence[Venue],
    token_in: str,
    token_out: str,
    amounts: Sequence[int],
    *,
    parts: int = 20,
    max_hops: int = 3,
) -> pl.DataFrame:
    """One row per amount (smallest units): ``best_single`` (the best one-path output and its
    ``best_path``), ``split_out`` and ``paths`` (the split route), ``split_gain_bps``, and the
    price impact of each against the spot rate (``single_impact_bps``, ``split_impact_bps``).
    Outputs are exact integers (``Int128``).

    >>> from toolkit.amm.routing import Venue
    >>> from toolkit.amm.v2 import Pair
    >>> venues = [Venue.v2("deep", "USDC", "USDT", Pair(10**24, 10**24)),
    ...           Venue.v2("thin", "USDC", "USDT", Pair(10**23, 10**23))]
    >>> frame = route_comparison(venues, "USDC", "USDT", [10**18, 10**23])
    >>> frame["best_path"].to_list(), frame["paths"][1], frame["split_gain_bps"][1] > 0
    (['deep', 'deep'], 2, True)
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
        route = best_route(venues, token_in, token_out, amount, parts=parts, max_hops=max_hops)
        ideal = spot * amount
        rows.append(
            {
                "amount_in": amount,
                "best_path": ">".join(h.venue.name for h in single_path),
                "best_single": single,
                "split_out": route.amount_out,
                "paths": len(route.splits),
                "split_gain_bps": (route.amount_out - single) / single * 1e4 if single else None,
                "single_impact_bps": (1 - single / ideal) * 1e4 if ideal else None,
                "split_impact_bps": (1 - route.amount_out / ideal) * 1e4 if ideal else None,
            }
        )
    return pl.DataFrame(
        rows,
        schema_overrides={"amount_in": pl.Int128, "best_single": pl.Int128, "split_out": pl.Int128},
    )
