"""Swap-route comparisons: what size costs, what splitting and multi-hop buy, where gas stops
mattering, mainnet against Base, how stale routes fare, and firm against indicative legs.

Two kinds of input:

- **pools** (:class:`~toolkit.amm.routing.Venue` lists, wei-exact V2/V3): :func:`route_comparison`
  puts, per amount, the split route of :func:`toolkit.amm.routing.best_route` against the best
  single path, the best route of direct pools only (no multi-hop) and :func:`grid_split`, the
  5 %-grid baseline of the best-known open router;
- **frames** of what the swap endpoint answered and what its routes did when executed (built by
  :mod:`toolkit.backtest.routes` from an embedded service, or from collected data):
  :func:`impact_curves` (price impact in bps against the pool mid, and gas),
  :func:`gas_threshold`, :func:`network_comparison`, :func:`delay_outcomes` with
  :func:`needed_slippage` and :func:`slippage_for_revert_rate`, and :func:`firm_vs_indicative`.

Everything is pure: no I/O, no clock. Amounts stay exact integers; bps and USD are floats.
"""

from __future__ import annotations

import math
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
from toolkit.arguments import ArgumentError, fraction, number, whole
from toolkit.models.bps import gain_bps, shortfall_bps
from toolkit.models.frames import Kind, check_keys, prepare
from toolkit.models.intervals import clustered_share, wilson_exprs

__all__ = [
    "delay_outcomes",
    "firm_vs_indicative",
    "gas_threshold",
    "grid_split",
    "impact_against_best",
    "impact_curves",
    "needed_slippage",
    "network_comparison",
    "route_comparison",
    "slippage_for_revert_rate",
]

#: A slippage no ``slippageBps`` (0 to 10000) covers: the route reverted even without minimum.
NEVER: int = 10_001


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
        try:
            direct: int | None = best_route(
                venues, token_in, token_out, amount, max_hops=1, max_paths=max_paths
            ).amount_out
        except AmmError:
            direct = None
        grid = grid_split(
            venues,
            token_in,
            token_out,
            amount,
            parts=parts,
            max_hops=max_hops,
            max_paths=max_paths,
        ).amount_out
        ideal = spot * amount
        rows.append(
            {
                "amount_in": amount,
                "best_path": ">".join(h.venue.name for h in single_path),
                "best_single": single,
                "split_out": route.amount_out,
                "paths": len(route.splits),
                "direct_out": direct,
                "grid_out": grid,
                "split_gain_bps": gain_bps(route.amount_out, single),
                "hop_gain_bps": gain_bps(route.amount_out, direct),
                "grid_gain_bps": gain_bps(route.amount_out, grid),
                "single_impact_bps": shortfall_bps(single, ideal) if ideal else None,
                "split_impact_bps": shortfall_bps(route.amount_out, ideal) if ideal else None,
            }
        )
    return pl.DataFrame(
        rows,
        schema_overrides={
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
        },
    )


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


_OBSERVED: dict[str, Kind] = {
    "network": "str",
    "pair": "str",
    "amount_in_usd": "float",
    "status": "int",
    "amount_out": "amount",
    "mid_out": "float",
    "gas_usd": "float",
}


def impact_curves(observations: pl.DataFrame) -> pl.DataFrame:
    """Price impact and gas per answered route, in bps of the trade.

    ``observations``: one row per route request with ``network``, ``pair``, ``amount_in_usd``
    (the input's value), ``status`` (the HTTP status; only 200 rows are kept), ``amount_out``
    (smallest units), ``mid_out`` (what the input buys at the pools' mid prices, same units)
    and ``gas_usd`` (``gasUsed`` at the chain's gas price, in USD). Adds ``impact_bps``
    (``1 - amount_out / mid_out``: fees and price impact together), ``gas_bps`` (gas against
    the trade's value) and ``total_bps``, sorted by network, pair and size.

    >>> frame = pl.DataFrame({"network": ["base"], "pair": ["USDC/WETH"],
    ...     "amount_in_usd": [1000.0], "status": [200], "amount_out": [996],
    ...     "mid_out": [1000.0], "gas_usd": [0.1]})
    >>> row = impact_curves(frame).select("impact_bps", "gas_bps", "total_bps").row(0)
    >>> [round(x, 6) for x in row]
    [40.0, 1.0, 41.0]
    """
    frame = prepare(observations, "impact_curves", _OBSERVED)
    bad = frame.filter((pl.col("status") == 200) & ~(pl.col("mid_out") > 0))
    if bad.height:
        raise ValueError("impact_curves: column 'mid_out' must be positive on answered rows")
    return (
        frame.filter(pl.col("status") == 200)
        .with_columns(
            impact_bps=shortfall_bps(pl.col("amount_out").cast(pl.Float64), pl.col("mid_out")),
            gas_bps=pl.col("gas_usd") / pl.col("amount_in_usd") * 1e4,
        )
        .with_columns(total_bps=pl.col("impact_bps") + pl.col("gas_bps"))
        .sort("network", "pair", "amount_in_usd")
    )


def impact_against_best(
    routes: pl.DataFrame, *, by: Sequence[str] = ("network", "pair")
) -> pl.DataFrame:
    """Price impact of stored routes, against the best rate observed for the same trade.

    A collected ``swap_routes`` table (:func:`toolkit.store.queries.swap_routes`) holds what
    the endpoint answered but no pool mid price, so :func:`impact_curves`' reference is not
    there; the best rate answered for the same pair and network (its smallest size, in
    practice) stands in for it. The figure is then the cost of size, and
    :func:`toolkit.models.bps.shortfall_bps` is the one definition of both.

    Parameters
    ----------
    routes : polars.DataFrame
        One row per answered route with ``rate`` (output per input, in any fixed units) and
        the ``by`` columns.
    by : sequence of str
        What makes two routes the same trade at different sizes (default: network and pair).

    Returns
    -------
    polars.DataFrame
        ``routes`` with ``impact_bps``: ``(1 − rate / best rate of its group) × 10 000``.

    Examples
    --------
    >>> routes = pl.DataFrame({"network": ["base"] * 2, "pair": ["USDC→WETH"] * 2,
    ...     "rate": [0.0004, 0.000398]})
    >>> [round(x, 6) for x in impact_against_best(routes)["impact_bps"]]
    [0.0, 50.0]
    """
    keys = check_keys(routes, "impact_against_best", by)
    frame = prepare(routes, "impact_against_best", {"rate": "float"})
    best = pl.col("rate").max().over(keys)
    return frame.with_columns(shortfall_bps(pl.col("rate"), best).alias("impact_bps"))


def gas_threshold(curves: pl.DataFrame, *, within_bps: float = 1.0) -> pl.DataFrame:
    """Above what size gas stops mattering, per network and pair of :func:`impact_curves`:
    ``gas_usd`` (the median gas cost of a route), ``break_even_usd`` (the size at which that
    cost is ``within_bps`` of the trade) and ``observed_usd``, the smallest observed size from
    which on every route's gas stays within ``within_bps`` (null when none does).

    >>> curves = pl.DataFrame({"network": ["base"] * 3, "pair": ["USDC/WETH"] * 3,
    ...     "amount_in_usd": [100.0, 1e4, 1e6], "gas_usd": [0.5, 0.5, 0.6],
    ...     "gas_bps": [50.0, 0.5, 0.006]})
    >>> gas_threshold(curves).select("break_even_usd", "observed_usd").row(0)
    (5000.0, 10000.0)
    """
    limit = number(within_bps, "within_bps", above=0)
    frame = prepare(
        curves,
        "gas_threshold",
        {
            "network": "str",
            "pair": "str",
            "amount_in_usd": "float",
            "gas_usd": "float",
            "gas_bps": "float",
        },
    ).sort("network", "pair", "amount_in_usd")
    # a size counts when it and every larger size keep gas within the limit
    worst_above = pl.col("gas_bps").reverse().cum_max().reverse().over("network", "pair")
    marked = frame.with_columns(within=worst_above <= limit)
    return (
        marked.group_by("network", "pair")
        .agg(
            gas_usd=pl.col("gas_usd").median(),
            observed_usd=pl.col("amount_in_usd").filter(pl.col("within")).min(),
        )
        .with_columns(break_even_usd=pl.col("gas_usd") * 1e4 / limit)
        .select("network", "pair", "gas_usd", "break_even_usd", "observed_usd")
        .sort("network", "pair")
    )


def network_comparison(
    curves: pl.DataFrame, *, first: str = "mainnet", second: str = "base"
) -> pl.DataFrame:
    """The same trade on two networks, from :func:`impact_curves`: per pair and size present
    on both, ``impact_bps``, ``gas_bps`` and ``total_bps`` of each (suffixed with the network's
    name) and ``difference_bps`` (first minus second: positive when the second is cheaper),
    and ``cheaper`` (the network with the lower total).

    >>> curves = pl.DataFrame({"network": ["mainnet", "base"], "pair": ["USDC/WETH"] * 2,
    ...     "amount_in_usd": [1e3, 1e3], "impact_bps": [5.0, 6.0], "gas_bps": [20.0, 0.1],
    ...     "total_bps": [25.0, 6.1]})
    >>> row = network_comparison(curves).row(0, named=True)
    >>> round(row["difference_bps"], 1), row["cheaper"]
    (18.9, 'base')
    """
    if first == second:
        raise ArgumentError("second", "a network other than first", second)
    frame = prepare(
        curves,
        "network_comparison",
        {
            "network": "str",
            "pair": "str",
            "amount_in_usd": "float",
            "impact_bps": "float",
            "gas_bps": "float",
            "total_bps": "float",
        },
    )
    metrics = ["impact_bps", "gas_bps", "total_bps"]

    def side(name: str) -> pl.DataFrame:
        return frame.filter(pl.col("network") == name).select(
            "pair", "amount_in_usd", *(pl.col(m).alias(f"{m}_{name}") for m in metrics)
        )

    joined = side(first).join(side(second), on=["pair", "amount_in_usd"], how="inner")
    difference = pl.col(f"total_bps_{first}") - pl.col(f"total_bps_{second}")
    return joined.with_columns(
        difference_bps=difference,
        cheaper=pl.when(difference > 0).then(pl.lit(second)).otherwise(pl.lit(first)),
    ).sort("pair", "amount_in_usd")


_TRIALS: dict[str, Kind] = {
    "network": "str",
    "delay_s": "float",
    "quoted_out": "amount",
    "executed_out": "amount",
}


def _needed(quoted: int, executed: int | None) -> int:
    """The smallest ``slippageBps`` whose minimum, ``quoted × (10000 − s) // 10000``, the
    executed output still meets (:data:`NEVER` when it reverted regardless)."""
    if executed is None:
        return NEVER
    if executed >= quoted:
        return 0
    # floor(q (10000 - s) / 10000) <= e  <=>  q (10000 - s) < 10000 (e + 1)
    return max(0, 10_001 - -(-10_000 * (executed + 1) // quoted))


def needed_slippage(trials: pl.DataFrame) -> pl.DataFrame:
    """Per executed route, the slippage it needed: ``needed_bps``, the smallest
    ``slippageBps`` (0 to 10000) whose ``minAmountOut`` the executed output still meets, exactly
    as the endpoint rounds it (10001 when it reverted without any minimum), and ``slip_bps``,
    what it delivered below the quote (negative: more than quoted).

    ``trials``: ``network``, ``delay_s`` (seconds between the quote and the execution),
    ``quoted_out`` (the route's ``amountOut``) and ``executed_out`` (what its calldata delivered
    with no minimum, null when it reverted anyway).

    >>> trials = pl.DataFrame({"network": ["base"] * 3, "delay_s": [2.0] * 3,
    ...     "quoted_out": [10_000, 10_000, 10_000], "executed_out": [10_050, 9_990, None]})
    >>> needed_slippage(trials)["needed_bps"].to_list()
    [0, 10, 10001]
    """
    frame = prepare(trials, "needed_slippage", _TRIALS)
    if frame.height and not (frame["quoted_out"] > 0).all():
        raise ValueError("needed_slippage: column 'quoted_out' must be positive")
    quoted, executed = frame["quoted_out"].to_list(), frame["executed_out"].to_list()
    needed = [_needed(q, e) for q, e in zip(quoted, executed, strict=True)]
    return frame.with_columns(
        needed_bps=pl.Series(needed, dtype=pl.Int64),
        slip_bps=shortfall_bps(pl.col("executed_out").cast(pl.Float64), pl.col("quoted_out")),
    )


def delay_outcomes(trials: pl.DataFrame, slippage_bps: Sequence[int]) -> pl.DataFrame:
    """How indicative routes fare when executed after a delay: per ``network``, ``delay_s``
    and each ``slippageBps`` of ``slippage_bps``, the ``trials``, ``reverts`` and
    ``revert_rate`` (the executed output below ``minAmountOut``, or a revert regardless), and
    among the routes that went through, ``mean_slip_bps`` and ``p95_slip_bps`` (what they
    delivered below the quote). ``trials`` as :func:`needed_slippage` takes them.

    ``revert_ci95_low`` / ``revert_ci95_high`` bound the revert rate: the Wilson interval of
    independent trials, or, when ``trials`` has a ``cluster`` column (trials whose executions
    overlap in time, e.g. :meth:`toolkit.backtest.routes.RouteLab.delay_trials` with a stride
    shorter than the delay), the interval clustered by it
    (:func:`toolkit.models.intervals.clustered_share`).

    >>> trials = pl.DataFrame({"network": ["base"] * 4, "delay_s": [2.0] * 4,
    ...     "quoted_out": [10_000] * 4, "executed_out": [10_050, 9_990, 9_900, None]})
    >>> delay_outcomes(trials, [0, 50]).select("slippage_bps", "revert_rate").rows()
    [(0, 0.75), (50, 0.5)]
    """
    if not slippage_bps:
        raise ArgumentError("slippage_bps", "at least one slippageBps", slippage_bps)
    levels = [whole(s, "slippage_bps[]", minimum=0, maximum=10_000) for s in slippage_bps]
    needed = needed_slippage(trials)
    parts = []
    for level in sorted(set(levels)):
        kept = pl.col("needed_bps") <= level
        parts.append(
            needed.group_by("network", "delay_s").agg(
                slippage_bps=pl.lit(level, pl.Int64),
                trials=pl.len(),
                reverts=(~kept).sum(),
                mean_slip_bps=pl.col("slip_bps").filter(kept).mean(),
                p95_slip_bps=pl.col("slip_bps").filter(kept).quantile(0.95, "higher"),
            )
        )
    schema = {"slippage_bps": pl.Int64, "trials": pl.UInt32, "reverts": pl.UInt32}
    out = pl.concat(parts) if parts else pl.DataFrame(schema=schema)
    out = out.with_columns(revert_rate=pl.col("reverts") / pl.col("trials"))
    return _revert_intervals(out, needed).sort("network", "delay_s", "slippage_bps")


def _revert_intervals(out: pl.DataFrame, needed: pl.DataFrame) -> pl.DataFrame:
    """``out`` with the 95 % interval of each revert rate (Wilson, or clustered by ``cluster``)."""
    if "cluster" not in needed.columns or out.height == 0:
        return out.with_columns(wilson_exprs("reverts", "trials", "revert_"))
    bounds = []
    for network, delay, level in out.select("network", "delay_s", "slippage_bps").iter_rows():
        counts = (
            needed.filter((pl.col("network") == network) & (pl.col("delay_s") == delay))
            .group_by("cluster")
            .agg(pl.len().alias("n"), (pl.col("needed_bps") > level).sum().alias("k"))
        )
        _, low, high = clustered_share(counts["k"].to_list(), counts["n"].to_list())
        bounds.append((low, high))
    return out.with_columns(
        pl.Series("revert_ci95_low", [b[0] for b in bounds], dtype=pl.Float64),
        pl.Series("revert_ci95_high", [b[1] for b in bounds], dtype=pl.Float64),
    )


def slippage_for_revert_rate(trials: pl.DataFrame, target: float) -> pl.DataFrame:
    """Which ``slippageBps`` gives a target revert rate: per ``network`` and ``delay_s``, the
    smallest ``slippage_bps`` whose revert rate over the trials is at most ``target`` (null when
    routes reverting regardless already exceed it), and the ``revert_rate`` it gives.

    >>> trials = pl.DataFrame({"network": ["base"] * 4, "delay_s": [2.0] * 4,
    ...     "quoted_out": [10_000] * 4, "executed_out": [10_050, 9_990, 9_900, 9_000]})
    >>> slippage_for_revert_rate(trials, 0.25).select("slippage_bps", "revert_rate").row(0)
    (100, 0.25)
    """
    share = fraction(target, "target")
    needed = needed_slippage(trials)
    rows = []
    for (network, delay), group in needed.group_by("network", "delay_s"):
        values = sorted(group["needed_bps"].to_list())
        n = len(values)
        allowed = math.floor(share * n + 1e-9)
        level: int | None = 0 if allowed >= n else values[n - allowed - 1]
        if level == NEVER:
            level = None
        rate = None if level is None else sum(v > level for v in values) / n
        rows.append(
            {
                "network": network,
                "delay_s": delay,
                "trials": n,
                "slippage_bps": level,
                "revert_rate": rate,
            }
        )
    schema = {
        "network": pl.String,
        "delay_s": pl.Float64,
        "trials": pl.Int64,
        "slippage_bps": pl.Int64,
        "revert_rate": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema).sort("network", "delay_s")


_LEGS: dict[str, Kind] = {
    "strategy": "str",
    "size_usd": "float",
    "step": "int",
    "leg": "str",
    "network": "str",
    "delay_s": "float",
    "value_in_usd": "float",
    "value_out_usd": "float",
    "gas_usd": "float",
}
_RATES: dict[str, Kind] = {"network": "str", "delay_s": "float", "revert_rate": "float"}


def firm_vs_indicative(legs: pl.DataFrame, revert_rates: pl.DataFrame) -> pl.DataFrame:
    """Two-leg strategies in total cost and failure risk, e.g. USDC on chain A into WETH on
    chain B as a partner-intents order then a swap on B, against a swap on A then an intents
    order.

    ``legs``: one row per leg with ``strategy``, ``size_usd`` (the order), ``step`` (the legs'
    order), ``leg`` (``intents``: a firm quote, or ``swap``: an indicative route), ``network``
    and ``delay_s`` (for a swap, the seconds between its quote and its execution), and the
    leg's ``value_in_usd``, ``value_out_usd`` (at mid prices; null when the intents quote was
    refused) and ``gas_usd``. ``revert_rates`` (``network``, ``delay_s``, ``revert_rate``, e.g.
    :func:`delay_outcomes` at one ``slippageBps``) gives a swap leg the revert rate measured at
    the nearest delay at or above its own (the longest measured, past them all); a firm
    intents leg fails only when refused.

    One row per strategy and size: ``cost_usd`` and ``cost_bps`` (first input less last output
    plus all gas; null when a leg was refused), split into ``intents_bps``, ``swap_bps`` and
    ``gas_bps``, and ``failure_rate`` (one minus the product of the legs' success rates).

    >>> legs = pl.DataFrame({"strategy": ["a", "a"], "size_usd": [1e4, 1e4], "step": [1, 2],
    ...     "leg": ["intents", "swap"], "network": ["mainnet", "base"], "delay_s": [0.0, 10.0],
    ...     "value_in_usd": [1e4, 9995.0], "value_out_usd": [9995.0, 9985.0],
    ...     "gas_usd": [0.0, 0.05]})
    >>> rates = pl.DataFrame({"network": ["base"], "delay_s": [12.0], "revert_rate": [0.1]})
    >>> row = firm_vs_indicative(legs, rates).row(0, named=True)
    >>> round(row["cost_bps"], 6), round(row["intents_bps"], 6), round(row["failure_rate"], 6)
    (15.05, 5.0, 0.1)
    """
    frame = prepare(legs, "firm_vs_indicative", _LEGS)
    unknown = set(frame["leg"].unique().to_list()) - {"intents", "swap"}
    if unknown:
        raise ValueError(f"firm_vs_indicative: column 'leg' must be intents or swap, got {unknown}")
    rates = prepare(revert_rates, "firm_vs_indicative", _RATES).sort("network", "delay_s")
    swaps = frame.filter(pl.col("leg") == "swap").with_row_index("_row").sort("delay_s")
    ahead = swaps.join_asof(
        rates, on="delay_s", by="network", strategy="forward", check_sortedness=False
    )
    behind = swaps.join_asof(
        rates.rename({"revert_rate": "_behind"}),
        on="delay_s",
        by="network",
        strategy="backward",
        check_sortedness=False,
    )
    matched = (
        ahead.join(behind.select("_row", "_behind"), on="_row")
        .with_columns(failure=pl.coalesce("revert_rate", "_behind"))
        .select("_row", "failure")
    )
    missing = matched.filter(pl.col("failure").is_null()).height
    if missing:
        raise ValueError("firm_vs_indicative: revert_rates: no rate for a swap leg's network")
    swaps = swaps.join(matched, on="_row").drop("_row", "revert_rate", strict=False)
    firm = frame.filter(pl.col("leg") == "intents").with_columns(
        failure=pl.col("value_out_usd").is_null().cast(pl.Float64)
    )
    every = pl.concat([firm, swaps], how="diagonal_relaxed").sort("strategy", "size_usd", "step")
    spent = pl.col("value_in_usd") - pl.col("value_out_usd")
    out = every.group_by("strategy", "size_usd").agg(
        value_in_usd=pl.col("value_in_usd").first(),
        value_out_usd=pl.col("value_out_usd").last(),
        refused=pl.col("value_out_usd").is_null().any(),
        intents_usd=spent.filter(pl.col("leg") == "intents").sum(),
        swap_usd=spent.filter(pl.col("leg") == "swap").sum(),
        gas_usd=pl.col("gas_usd").sum(),
        success=(1 - pl.col("failure")).product(),
    )
    size = pl.col("size_usd")
    cost = pl.col("value_in_usd") - pl.col("value_out_usd") + pl.col("gas_usd")
    when_quoted = pl.when(~pl.col("refused"))
    return out.select(
        "strategy",
        "size_usd",
        "refused",
        cost_usd=when_quoted.then(cost),
        cost_bps=when_quoted.then(cost / size * 1e4),
        intents_bps=when_quoted.then(pl.col("intents_usd") / size * 1e4),
        swap_bps=when_quoted.then(pl.col("swap_usd") / size * 1e4),
        gas_bps=pl.col("gas_usd") / size * 1e4,
        failure_rate=1 - pl.col("success"),
    ).sort("size_usd", "strategy")
