"""What a whole-flow run returns (:class:`WholeFlowResult`) and where its surfaces meet
(:func:`interactions`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from toolkit.backtest.wholeflow.settings import WholeFlow


@dataclass(frozen=True)
class WholeFlowResult:
    """Per-step frames per surface (``step``, ``hour`` first), one row per user, the summary."""

    settings: WholeFlow
    seed: int
    intents: pl.DataFrame
    swaps: pl.DataFrame
    credit: pl.DataFrame
    borrow: pl.DataFrame
    liquidations: pl.DataFrame
    users: pl.DataFrame
    summary: dict[str, Any]

    def interactions(self) -> pl.DataFrame:
        """:func:`interactions` of this run."""
        return interactions(self)


def interactions(result: WholeFlowResult) -> pl.DataFrame:
    """Where the surfaces meet, in long form (``measure``, ``group``, ``value``):

    - per phase of the shock (``before``, ``during``, ``after``; the same hours in a control
      run): the source pools' ``depth_2pct_usd`` (mean), users' ``swap_slippage_bps`` (mean per
      swap), ``liquidations`` and ``collateral_sold_usd`` (sums), ``intents_share`` of users;
    - users bucketed by the slippage a swap on the source would have cost them (quartiles of the
      run): ``intents_share`` per bucket (``q1`` the least slippage), and over all users the
      Pearson ``correlation`` of that slippage with choosing an intents route.

    >>> from toolkit.backtest.wholeflow import whole_flow
    >>> run = whole_flow(WholeFlow(hours=0.5, shock_at=0.2, shock_hours=0.1), seed=3)
    >>> frame = run.interactions()
    >>> sorted(frame["measure"].unique().to_list())[:2]
    ['collateral_sold_usd', 'correlation']
    """
    s = result.settings
    phase = pl.col("hour").map_elements(s.phase, return_dtype=pl.String).alias("group")
    swaps = result.swaps.with_columns(phase)
    by_phase = swaps.group_by("group", maintain_order=True).agg(
        depth_2pct_usd=pl.col("depth_2pct_usd").mean(),
        swap_slippage_bps=(pl.col("slippage_bps_mean").fill_nan(None) * pl.col("swaps")).sum()
        / pl.col("swaps").sum(),
    )
    liq = (
        result.liquidations.with_columns(phase)
        .group_by("group", maintain_order=True)
        .agg(
            liquidations=pl.col("liquidations").sum(),
            collateral_sold_usd=pl.col("collateral_sold_usd").sum(),
        )
    )
    users = result.users.with_columns(phase)
    share = users.group_by("group", maintain_order=True).agg(
        intents_share=pl.col("intents").cast(pl.Float64).mean()
    )
    phases = by_phase.join(liq, on="group", how="left").join(share, on="group", how="left")
    long = phases.unpivot(index="group", variable_name="measure").select(
        "measure", "group", pl.col("value").cast(pl.Float64)
    )
    quoted = result.users.filter(pl.col("source_slippage_bps").is_not_nan())
    rows: list[dict[str, Any]] = []
    if quoted.height >= 4:
        bucket = (
            (pl.col("source_slippage_bps").rank("ordinal") * 4 / (quoted.height + 1))
            .floor()
            .cast(pl.Int64)
        )
        buckets = (
            quoted.with_columns(bucket.alias("_q"))
            .group_by("_q")
            .agg(
                intents_share=pl.col("intents").cast(pl.Float64).mean(),
                slippage=pl.col("source_slippage_bps").mean(),
            )
            .sort("_q")
        )
        for q, value, slip in buckets.iter_rows():
            rows.append({"measure": "intents_share", "group": f"slippage q{q + 1}", "value": value})
            rows.append(
                {"measure": "source_slippage_bps", "group": f"slippage q{q + 1}", "value": slip}
            )
        x = quoted["source_slippage_bps"].to_numpy()
        y = quoted["intents"].cast(pl.Float64).to_numpy()
        # every user chose alike (or saw one slippage): no correlation to measure
        corr = np.corrcoef(x, y)[0, 1] if x.std() > 0 and y.std() > 0 else np.nan
        rows.append(
            {"measure": "correlation", "group": "slippage vs intents", "value": float(corr)}
        )
    extra = pl.DataFrame(
        rows, schema={"measure": pl.String, "group": pl.String, "value": pl.Float64}
    )
    return pl.concat([long, extra])
