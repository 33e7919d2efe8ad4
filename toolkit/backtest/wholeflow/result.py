"""What a whole-flow run returns (:class:`WholeFlowResult` with its :class:`WholeFlowSummary`)
and where its surfaces meet (:func:`interactions`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from toolkit.backtest.wholeflow.settings import WholeFlow
from toolkit.models.health.results import Row


@dataclass(frozen=True)
class WholeFlowSummary(Row):
    """The figures of one whole-flow run (amounts in USD unless the name says WETH; shares in
    [0, 1]):

    - the run: ``seed``, ``shock`` (the settings' price move, a fraction: -0.3 a 30 % drop),
      ``steps``;
    - intents: ``users`` arrived, ``intents_share`` of them choosing an intents route,
      ``rfqs``, ``rfq_404_share`` of them refused for capacity, ``fills``, ``fees_usd``;
    - swaps on the source: ``swaps``, ``swap_volume_usd``, ``swap_slippage_bps`` (mean per
      swap), ``depth_during_usd`` (mean 2 % depth during the shock);
    - card credit: ``draws``, ``declines``, ``opening_debt_usd``, ``drawn_usd``,
      ``repaid_usd``, ``end_debt_usd``, ``min_health_factor``, ``borrowed_usd`` (pool loans);
    - liquidations: ``liquidations`` (calls), ``accounts_liquidated``, ``liquidated_usd`` and
      ``debt_repaid_usd`` (the same debt repaid), ``bad_debt_usd``, ``collateral_seized_usd``,
      ``collateral_sold_usd`` and ``collateral_sold_weth`` (what liquidators sold on the
      source), ``inventory_end_weth`` (what they still hold), ``sales_impact_bps_max``;
    - ``shock_pct_end``: the reference price against the control at the last step, in percent;
    - the intents pools, by pool id in smallest units: ``pool_earned`` and
      ``pool_balance_change`` (equal under the ``instant-free`` policy once every order
      settled; otherwise a pool's balance also moves with settlements credited to it and
      transfers), and ``outstanding_end``;
    - inventory: the rebalancing ``policy``, ``transfers`` sent, ``rebalanced_volume_usd`` and
      ``rebalancing_cost_usd`` (bridge fees and source gas), and by token in smallest units
      ``inventory_change`` (the service's tokens on all chains, end less start),
      ``books_gain`` (what settlements booked beyond what was lent: input less output, or the
      fee earned under instant-free) and ``bridge_fees``: value is conserved when
      ``inventory_change == books_gain - bridge_fees``.

    :meth:`to_frame` gives the scalar figures as one row.

    >>> from toolkit.backtest.wholeflow import whole_flow
    >>> s = whole_flow(WholeFlow(span_h=0.5, shock_at_share=0.2, shock_h=0.1), seed=3).summary
    >>> s.steps, s.to_frame().columns[:3]
    (15, ['seed', 'shock', 'steps'])
    """

    seed: int
    shock: float
    steps: int
    users: int
    intents_share: float
    rfqs: int
    rfq_404_share: float
    fills: int
    fees_usd: float
    swaps: int
    swap_volume_usd: float
    swap_slippage_bps: float
    depth_during_usd: float
    draws: int
    declines: int
    opening_debt_usd: float
    drawn_usd: float
    repaid_usd: float
    liquidated_usd: float
    bad_debt_usd: float
    end_debt_usd: float
    liquidations: int
    accounts_liquidated: int
    debt_repaid_usd: float
    collateral_seized_usd: float
    collateral_sold_usd: float
    collateral_sold_weth: float
    inventory_end_weth: float
    shock_pct_end: float
    sales_impact_bps_max: float
    min_health_factor: float
    borrowed_usd: float
    pool_earned: dict[str, int]
    pool_balance_change: dict[str, int]
    outstanding_end: int
    policy: str
    transfers: int
    rebalanced_volume_usd: float
    rebalancing_cost_usd: float
    inventory_change: dict[str, int]
    books_gain: dict[str, int]
    bridge_fees: dict[str, int]

    def to_frame(self) -> pl.DataFrame:
        """The scalar figures as a one-row polars frame (the per-pool mappings left out)."""
        return pl.DataFrame([{k: v for k, v in self.as_dict().items() if not isinstance(v, dict)}])


@dataclass(frozen=True)
class WholeFlowResult:
    """Per-step frames per surface (``step``, ``hour`` first), one row per user, the summary;
    ``inventory`` (per step, per chain and token: the service's holding, the columns of
    :class:`toolkit.engine.Holding`) and ``transfers`` (the rebalancing transfers, as
    :mod:`toolkit.backtest.inventory` describes them)."""

    settings: WholeFlow
    seed: int
    intents: pl.DataFrame
    swaps: pl.DataFrame
    credit: pl.DataFrame
    borrow: pl.DataFrame
    liquidations: pl.DataFrame
    users: pl.DataFrame
    summary: WholeFlowSummary
    inventory: pl.DataFrame = field(default_factory=pl.DataFrame)
    transfers: pl.DataFrame = field(default_factory=pl.DataFrame)

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
    >>> run = whole_flow(WholeFlow(span_h=0.5, shock_at_share=0.2, shock_h=0.1), seed=3)
    >>> frame = run.interactions()
    >>> sorted(frame["measure"].unique().to_list())[:2]
    ['collateral_sold_usd', 'correlation']
    """
    extra = pl.DataFrame(
        _slippage_buckets(result.users),
        schema={"measure": pl.String, "group": pl.String, "value": pl.Float64},
    )
    return pl.concat([_by_phase(result), extra])


def _by_phase(result: WholeFlowResult) -> pl.DataFrame:
    """The per-phase measures of :func:`interactions`, in long form."""
    phase = pl.col("hour").map_elements(result.settings.phase, return_dtype=pl.String)
    phase = phase.alias("group")
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
    return phases.unpivot(index="group", variable_name="measure").select(
        "measure", "group", pl.col("value").cast(pl.Float64)
    )


def _slippage_buckets(users: pl.DataFrame) -> list[dict[str, Any]]:
    """The slippage-quartile rows of :func:`interactions` and the correlation (none with fewer
    than four users quoted)."""
    quoted = users.filter(pl.col("source_slippage_bps").is_not_nan())
    rows: list[dict[str, Any]] = []
    if quoted.height < 4:
        return rows
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
    rows.append({"measure": "correlation", "group": "slippage vs intents", "value": float(corr)})
    return rows
