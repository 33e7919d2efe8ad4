"""How indicative swap routes fare when executed after a delay: the slippage each needed, the
revert rate at each ``slippageBps``, and the ``slippageBps`` that gives a target revert rate.

Input: ``trials``, one row per executed route (``network``, ``delay_s``, ``quoted_out``,
``executed_out``), as :meth:`toolkit.backtest.routes.RouteLab.delay_trials` measures them.
Pure: no I/O, no clock; outputs are exact integers where the endpoint rounds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from toolkit.arguments import ArgumentError, fraction, whole
from toolkit.models.bps import shortfall_bps
from toolkit.models.frames import Kind, prepare
from toolkit.models.intervals import clustered_share, wilson_exprs

__all__ = ["NEVER", "delay_outcomes", "needed_slippage", "slippage_for_revert_share"]


#: A slippage no ``slippageBps`` (0 to 10000) covers: the route reverted even without minimum.
NEVER: int = 10_001


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

    Parameters
    ----------
    trials : polars.DataFrame
        One row per executed route: network, delay_s, quoted_out, executed_out (null: reverted
        anyway); from toolkit.backtest.routes.RouteLab.delay_trials.

    Returns
    -------
    polars.DataFrame
        trials with needed_bps (Int64) and slip_bps (Float64).

    Examples
    --------
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
    ``revert_share`` (the executed output below ``minAmountOut``, or a revert regardless), and
    among the routes that went through, ``mean_slip_bps`` and ``p95_slip_bps`` (what they
    delivered below the quote). ``trials`` as :func:`needed_slippage` takes them.

    ``revert_ci95_low`` / ``revert_ci95_high`` bound the revert rate: the Wilson interval of
    independent trials, or, when ``trials`` has a ``cluster`` column (trials whose executions
    overlap in time, e.g. :meth:`toolkit.backtest.routes.RouteLab.delay_trials` with a stride
    shorter than the delay), the interval clustered by it
    (:func:`toolkit.models.intervals.clustered_share`).

    Parameters
    ----------
    trials : polars.DataFrame
        One row per executed route: network, delay_s, quoted_out, executed_out (null: reverted
        anyway); from toolkit.backtest.routes.RouteLab.delay_trials.
    slippage_bps : sequence of int
        The slippageBps levels to evaluate (0 to 10000), at least one.

    Returns
    -------
    polars.DataFrame
        One row per network, delay_s and slippage_bps with the columns above.

    Examples
    --------
    >>> trials = pl.DataFrame({"network": ["base"] * 4, "delay_s": [2.0] * 4,
    ...     "quoted_out": [10_000] * 4, "executed_out": [10_050, 9_990, 9_900, None]})
    >>> delay_outcomes(trials, [0, 50]).select("slippage_bps", "revert_share").rows()
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
    out = out.with_columns(revert_share=pl.col("reverts") / pl.col("trials"))
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


def slippage_for_revert_share(trials: pl.DataFrame, target: float) -> pl.DataFrame:
    """Which ``slippageBps`` gives a target revert rate: per ``network`` and ``delay_s``, the
    smallest ``slippage_bps`` whose revert rate over the trials is at most ``target`` (null when
    routes reverting regardless already exceed it), and the ``revert_share`` it gives.

    Parameters
    ----------
    trials : polars.DataFrame
        One row per executed route: network, delay_s, quoted_out, executed_out (null: reverted
        anyway); from toolkit.backtest.routes.RouteLab.delay_trials.
    target : float
        The revert rate to stay within (0 to 1).

    Returns
    -------
    polars.DataFrame
        One row per network and delay_s: network, delay_s, trials, slippage_bps, revert_share.

    Examples
    --------
    >>> trials = pl.DataFrame({"network": ["base"] * 4, "delay_s": [2.0] * 4,
    ...     "quoted_out": [10_000] * 4, "executed_out": [10_050, 9_990, 9_900, 9_000]})
    >>> slippage_for_revert_share(trials, 0.25).select("slippage_bps", "revert_share").row(0)
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
                "revert_share": rate,
            }
        )
    schema = {
        "network": pl.String,
        "delay_s": pl.Float64,
        "trials": pl.Int64,
        "slippage_bps": pl.Int64,
        "revert_share": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema).sort("network", "delay_s")
