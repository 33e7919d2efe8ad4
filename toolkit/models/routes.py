"""Swap-route costs from frames of what the swap endpoint answered and what its routes did:
what size costs, where gas stops mattering, mainnet against Base, and firm against indicative
legs.

- :func:`impact_curves` (price impact in bps against the mid, and gas), with
  :func:`gas_threshold` and :func:`network_comparison`, on a store's priced routes
  (:func:`toolkit.store.queries.route_costs`) or what :class:`toolkit.backtest.routes.RouteLab`
  measures; :func:`impact_against_best` on the routes alone (the pair's best observed rate
  stands in for the mid);
- :func:`firm_vs_indicative`: two-leg strategies in cost and failure risk.

Split routes on pools are :mod:`toolkit.models.splits`; stale routes and slippage
:mod:`toolkit.models.slippage`. Everything is pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from toolkit.arguments import ArgumentError, number
from toolkit.models.bps import shortfall_bps
from toolkit.models.frames import KIND_DTYPE, Kind, check_keys, prepare

__all__ = [
    "LEG_SCHEMA",
    "firm_vs_indicative",
    "gas_threshold",
    "impact_against_best",
    "impact_curves",
    "network_comparison",
]


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
    (smallest units), ``mid_out`` (what the input buys at the mid prices, same units) and
    ``gas_usd`` (``gasUsed`` at the chain's gas price, in USD). Adds ``impact_bps``
    (``1 - amount_out / mid_out``: fees and price impact together), ``gas_bps`` (gas against
    the trade's value) and ``total_bps``, sorted by network, pair and size.

    Parameters
    ----------
    observations : polars.DataFrame
        One row per route request with the columns above: a store's
        (toolkit.store.queries.route_costs: mid at the stored USD prices, gas at the gas price
        the chain answered) or what toolkit.backtest.routes.RouteLab measures (mid at the
        pools' prices, gas at the base fee).

    Returns
    -------
    polars.DataFrame
        The answered rows with impact_bps, gas_bps and total_bps, sorted by network, pair and
        size. A row whose ``mid_out`` or ``gas_usd`` is null (a price or gas price the store
        does not hold) is kept, with the figures that need it null: unknown, not zero.

    Examples
    --------
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

    For routes without prices (:func:`toolkit.store.queries.swap_routes`: what the endpoint
    answered, before any price is joined; :func:`impact_curves` takes the priced frame), the
    best rate answered for the same pair and network (its smallest size, in practice) stands
    in for the mid. The figure is then the cost of size, and
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

    Parameters
    ----------
    curves : polars.DataFrame
        The output of impact_curves (the columns named above are required).
    within_bps : float
        The gas share of the trade (bps) that counts as not mattering, positive.

    Returns
    -------
    polars.DataFrame
        One row per network and pair: network, pair, gas_usd, break_even_usd, observed_usd.

    Examples
    --------
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

    Parameters
    ----------
    curves : polars.DataFrame
        The output of impact_curves (the columns named above are required).
    first, second : str
        The two networks to compare (distinct).

    Returns
    -------
    polars.DataFrame
        One row per pair and size present on both networks with the columns above.

    Examples
    --------
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
#: The polars schema of :func:`firm_vs_indicative`'s legs, for those who build the frame.
LEG_SCHEMA: dict[str, pl.DataType] = {name: KIND_DTYPE[kind] for name, kind in _LEGS.items()}
_RATES: dict[str, Kind] = {"network": "str", "delay_s": "float", "revert_share": "float"}


def firm_vs_indicative(legs: pl.DataFrame, revert_shares: pl.DataFrame) -> pl.DataFrame:
    """Two-leg strategies in total cost and failure risk, e.g. USDC on chain A into WETH on
    chain B as a partner-intents order then a swap on B, against a swap on A then an intents
    order.

    ``legs``: one row per leg with ``strategy``, ``size_usd`` (the order), ``step`` (the legs'
    order), ``leg`` (``intents``: a firm quote, or ``swap``: an indicative route), ``network``
    and ``delay_s`` (for a swap, the seconds between its quote and its execution), and the
    leg's ``value_in_usd``, ``value_out_usd`` (at mid prices; null when the intents quote was
    refused) and ``gas_usd``. ``revert_shares`` (``network``, ``delay_s``, ``revert_share``, e.g.
    :func:`delay_outcomes` at one ``slippageBps``) gives a swap leg the revert rate measured at
    the nearest delay at or above its own (the longest measured, past them all); a firm
    intents leg fails only when refused.

    One row per strategy and size: ``cost_usd`` and ``cost_bps`` (first input less last output
    plus all gas; null when a leg was refused), split into ``intents_bps``, ``swap_bps`` and
    ``gas_bps``, and ``failure_share`` (one minus the product of the legs' success rates).

    Parameters
    ----------
    legs : polars.DataFrame
        One row per leg with the columns above.
    revert_shares : polars.DataFrame
        network, delay_s, revert_share (e.g. delay_outcomes at one slippageBps).

    Returns
    -------
    polars.DataFrame
        One row per strategy and size with the columns above, sorted by size and strategy.

    Examples
    --------
    >>> legs = pl.DataFrame({"strategy": ["a", "a"], "size_usd": [1e4, 1e4], "step": [1, 2],
    ...     "leg": ["intents", "swap"], "network": ["mainnet", "base"], "delay_s": [0.0, 10.0],
    ...     "value_in_usd": [1e4, 9995.0], "value_out_usd": [9995.0, 9985.0],
    ...     "gas_usd": [0.0, 0.05]})
    >>> rates = pl.DataFrame({"network": ["base"], "delay_s": [12.0], "revert_share": [0.1]})
    >>> row = firm_vs_indicative(legs, rates).row(0, named=True)
    >>> round(row["cost_bps"], 6), round(row["intents_bps"], 6), round(row["failure_share"], 6)
    (15.05, 5.0, 0.1)
    """
    frame = prepare(legs, "firm_vs_indicative", _LEGS)
    unknown = set(frame["leg"].unique().to_list()) - {"intents", "swap"}
    if unknown:
        raise ValueError(f"firm_vs_indicative: column 'leg' must be intents or swap, got {unknown}")
    rates = prepare(revert_shares, "firm_vs_indicative", _RATES).lazy().sort("network", "delay_s")
    # One lazy query, collected once in memory and unoptimised: the whole-flow backtest costs
    # every user's two strategies here (four legs), where polars' fixed cost per eager step,
    # its streaming engine's start and the optimiser's passes were most of the time.
    table = (
        pl.concat(
            [_firm_legs(frame.lazy()), _swap_legs(frame.lazy(), rates)], how="diagonal_relaxed"
        )
        .sort("strategy", "size_usd", "step")
        .group_by("strategy", "size_usd")
        .agg(**_LEG_TOTALS)
        .select("strategy", "size_usd", "refused", "_unmatched", **_strategy_costs())
        .sort("size_usd", "strategy")
        .collect(engine="in-memory", optimizations=pl.QueryOptFlags.none())
    )
    if table["_unmatched"].any():
        raise ValueError("firm_vs_indicative: revert_shares: no rate for a swap leg's network")
    return table.drop("_unmatched")


def _firm_legs(legs: pl.LazyFrame) -> pl.LazyFrame:
    """The intents legs: a firm quote fails only when refused."""
    return legs.filter(pl.col("leg") == "intents").with_columns(
        failure=pl.col("value_out_usd").is_null().cast(pl.Float64)
    )


def _swap_legs(legs: pl.LazyFrame, rates: pl.LazyFrame) -> pl.LazyFrame:
    """The swap legs with the revert share measured at the nearest delay at or above theirs
    (the longest measured, past them all); null when their network has none."""
    swaps = legs.filter(pl.col("leg") == "swap").sort("delay_s")
    # both as-of joins keep the swaps' rows in order, so their columns sit side by side
    ahead = swaps.join_asof(
        rates, on="delay_s", by="network", strategy="forward", check_sortedness=False
    )
    behind = swaps.join_asof(
        rates.select("network", "delay_s", _behind="revert_share"),
        on="delay_s",
        by="network",
        strategy="backward",
        check_sortedness=False,
    )
    return (
        pl.concat([ahead, behind.select("_behind")], how="horizontal")
        .with_columns(failure=pl.coalesce("revert_share", "_behind"))
        .drop("revert_share", "_behind")
    )


_SPENT = pl.col("value_in_usd") - pl.col("value_out_usd")
_LEG_TOTALS = {
    "value_in_usd": pl.col("value_in_usd").first(),
    "value_out_usd": pl.col("value_out_usd").last(),
    "refused": pl.col("value_out_usd").is_null().any(),
    "intents_usd": _SPENT.filter(pl.col("leg") == "intents").sum(),
    "swap_usd": _SPENT.filter(pl.col("leg") == "swap").sum(),
    "gas_usd": pl.col("gas_usd").sum(),
    "success": (1 - pl.col("failure")).product(),
    "_unmatched": pl.col("failure").is_null().any(),
}


def _strategy_costs() -> dict[str, pl.Expr]:
    """A strategy's costs from its legs' totals (null when a leg was refused)."""
    size = pl.col("size_usd")
    cost = pl.col("value_in_usd") - pl.col("value_out_usd") + pl.col("gas_usd")
    when_quoted = pl.when(~pl.col("refused"))
    return {
        "cost_usd": when_quoted.then(cost),
        "cost_bps": when_quoted.then(cost / size * 1e4),
        "intents_bps": when_quoted.then(pl.col("intents_usd") / size * 1e4),
        "swap_bps": when_quoted.then(pl.col("swap_usd") / size * 1e4),
        "gas_bps": pl.col("gas_usd") / size * 1e4,
        "failure_share": 1 - pl.col("success"),
    }
