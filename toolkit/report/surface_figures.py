"""Figures of the surfaces beyond RFQ and of the backtest's economics.

Same conventions as :mod:`toolkit.report.figures`: fixed-size ``Figure`` objects, titles and
axis labels with units from :mod:`toolkit.report.style`, amounts in USD.
"""

from __future__ import annotations

import textwrap

import polars as pl
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from toolkit.report.credit import HF_WATCH
from toolkit.report.economics import capital_assumptions, economics_assumptions
from toolkit.report.style import colors, dress, legend, new_figure, series_styles, usd_ticks

__all__ = [
    "borrow_figure",
    "capital_figure",
    "credit_figure",
    "economics_figure",
    "swap_figure",
]


def borrow_figure(points: pl.DataFrame) -> Figure:
    """Borrow fee (bps) against amount (USD, log x): every priced answer as a faint dot, the
    median per token and amount as a line; one colour per token.

    Parameters
    ----------
    points : polars.DataFrame
        :func:`toolkit.report.surfaces.borrow_points`'s frame.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not saved).

    Examples
    --------
    >>> points = pl.DataFrame({"pair": ["Ethereum→Base"] * 2, "destination": ["Base"] * 2,
    ...     "token": ["USDC"] * 2, "amount_usd": [100.0, 1000.0], "fee_bps": [12.0, 11.0]})
    >>> borrow_figure(points).axes[0].get_title()
    'Borrow quotes: fee by amount borrowed (dots: every 200 answer)'
    """
    figure = new_figure()
    ax = figure.subplots()
    tokens = points["token"].unique().sort().to_list()
    for color, token in zip(colors(len(tokens)), tokens, strict=True):
        subset = points.filter(pl.col("token") == token)
        ax.scatter(
            subset["amount_usd"].to_list(),
            subset["fee_bps"].to_list(),
            s=8,
            alpha=0.25,
            color=color,
        )
        median = subset.group_by("amount_usd").agg(pl.col("fee_bps").median()).sort("amount_usd")
        ax.plot(
            median["amount_usd"].to_list(),
            median["fee_bps"].to_list(),
            marker="o",
            ms=4,
            lw=1.5,
            color=color,
            label=f"{token} (median over routes)",
        )
    dress(
        ax,
        title="Borrow quotes: fee by amount borrowed (dots: every 200 answer)",
        xlabel="amount borrowed (USD at scenario prices)",
        ylabel="borrow fee (bps)",
        x=points["amount_usd"].to_list(),
    )
    usd_ticks(ax.xaxis)
    legend(ax, len(tokens))
    return figure


def swap_figure(impact: pl.DataFrame) -> Figure:
    """Swap price impact (bps, against the pair's smallest size) by trade size (USD, log x);
    colour by chain (:func:`toolkit.report.style.chain_color`), line style and marker by pair;
    symlog y (linear below 1 bps).

    Parameters
    ----------
    impact : polars.DataFrame
        :func:`toolkit.report.surfaces.swap_impact_table`'s frame.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not saved).

    Examples
    --------
    >>> impact = pl.DataFrame({"chain": ["Base"] * 2, "pair": ["USDC→WETH"] * 2,
    ...     "size_usd": [100.0, 10_000.0], "impact_bps": [0.0, 4.0]})
    >>> swap_figure(impact).axes[0].get_title()
    'Swap routes: price impact by trade size'
    """
    figure = new_figure()
    ax = figure.subplots()
    keys = impact.select("chain", "pair").unique(maintain_order=True).rows()
    styles = series_styles(keys)
    for network, pair in keys:
        line = impact.filter((pl.col("pair") == pair) & (pl.col("chain") == network))
        ax.plot(
            line["size_usd"].to_list(),
            line["impact_bps"].to_list(),
            ms=4,
            lw=1.2,
            label=f"{pair} ({network})",
            **styles[(network, pair)],
        )
    dress(
        ax,
        title="Swap routes: price impact by trade size",
        xlabel="trade size (USD at scenario prices)",
        ylabel="price impact vs the smallest size (bps, symlog)",
        x=impact["size_usd"].to_list(),
    )
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_ylim(bottom=0.0)
    usd_ticks(ax.xaxis)
    legend(ax, len(keys), title="colour: chain, style: pair")
    return figure


def credit_figure(accounts: pl.DataFrame) -> Figure:
    """The credit book: health-factor histogram of accounts with debt (log bins, lines at 1
    and the watch level) and debt against collateral value per account, by band, in USD at the
    credit asset's price.

    Parameters
    ----------
    accounts : polars.DataFrame
        :func:`toolkit.report.credit.credit_accounts_table`'s frame (its ``*_usd`` columns).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not saved).

    Examples
    --------
    >>> from datetime import UTC, datetime
    >>> from toolkit.report.credit import credit_accounts_table
    >>> accounts = pl.DataFrame({"account": ["0xa", "0xb"], "asset": ["USDC"] * 2,
    ...     "debt": [900.0, 0.0], "total_collateral_value": [1000.0, 50.0],
    ...     "health_factor": [1.1, None], "run_id": ["c"] * 2,
    ...     "observed_at": [datetime(2026, 1, 1, tzinfo=UTC)] * 2})
    >>> credit_figure(credit_accounts_table(accounts)).axes[0].get_title()
    'Health factor of 1 accounts with debt'
    """
    import numpy as np

    figure = new_figure()
    left, right = figure.subplots(1, 2)
    indebted = accounts.filter(pl.col("health_factor").is_not_null() & (pl.col("debt") > 0))
    hf = indebted["health_factor"].to_numpy()
    if hf.size:
        low, high = max(min(hf.min(), 0.9), 1e-3), max(hf.max(), 2.0)
        bins = np.geomspace(low, high * 1.01, 30)
        left.hist(hf, bins=bins.tolist(), color="tab:blue", alpha=0.8)
        left.set_xscale("log")
    for level, color, text in (
        (1.0, "tab:red", "1: liquidatable"),
        (HF_WATCH, "tab:orange", f"{HF_WATCH:g}: watch"),
    ):
        left.axvline(level, color=color, ls="--", lw=1.2, label=text)
    dress(
        left,
        title=f"Health factor of {indebted.height} accounts with debt",
        xlabel="health factor (log scale)",
        ylabel="accounts",
    )
    legend(left, 2)
    bands = ["< 1", f"1 to {HF_WATCH:g}", f"≥ {HF_WATCH:g}"]
    # In USD at each credit asset's price: debts in different currencies are never put on one
    # axis without a rate, and an asset without a price is left out (and counted in the title).
    priced = indebted.filter(pl.col("debt_usd").is_not_null())
    for band, color in zip(bands, ("tab:red", "tab:orange", "tab:green"), strict=True):
        subset = priced.filter(pl.col("band") == band)
        right.scatter(
            subset["collateral_value_usd"].to_list(),
            subset["debt_usd"].to_list(),
            s=8,
            alpha=0.6,
            color=color,
            label=f"HF {band} ({subset.height})",
        )
    unpriced = indebted.height - priced.height
    dress(
        right,
        title="Debt against collateral value"
        + (f" ({unpriced} accounts in an unpriced asset left out)" if unpriced else ""),
        xlabel="collateral value (USD at the credit asset's price)",
        ylabel="debt (USD at the credit asset's price)",
        x=priced["collateral_value_usd"].to_list(),
        y=priced["debt_usd"].to_list(),
    )
    legend(right, 3)
    return figure


def economics_figure(pools: pl.DataFrame, run: str) -> Figure:
    """Per pool of the backtest: fee revenue (USD) and annualised return on capital (%).

    Parameters
    ----------
    pools : polars.DataFrame
        :func:`toolkit.models.economics.pool_economics`'s frame (its ``total`` row last).
    run : str
        The backtest's run id (its first 8 characters go in the title).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not saved), with the assumptions as a footnote.

    Examples
    --------
    >>> from toolkit.models.economics import pool_economics
    >>> pools = pl.DataFrame({"run_id": ["bt"], "pool": ["p"], "label": ["Base USDC (intents)"],
    ...     "chain": ["Base"], "token": ["USDC"], "pool_type": ["intents"],
    ...     "capital_tokens": [1e6], "capital_usd": [1e6], "fee_revenue_tokens": [80.0],
    ...     "fee_revenue_usd": [80.0], "start_t": [0.0], "end_t": [86_400.0],
    ...     "mean_utilization": [0.5]})
    >>> economics_figure(pool_economics(pools, "bt"), "bt").axes[0].get_title()
    'Backtest bt: fee revenue per pool'
    """
    table = pools.filter(pl.col("pool") != "total").sort("pool", descending=True)
    labels = table["label"].to_list()
    figure = new_figure()
    left, right = figure.subplots(1, 2, sharey=True)
    positions = list(range(table.height))
    left.barh(positions, table["fee_revenue_usd"].fill_null(0.0).to_list(), color="tab:green")
    left.set_yticks(positions, labels, fontsize=8)
    dress(
        left,
        title=f"Backtest {run[:8]}: fee revenue per pool",
        xlabel="fee revenue (USD at scenario prices)",
        ylabel="pool",
        grid="x",
    )
    usd_ticks(left.xaxis)
    right.barh(
        positions, table["annualised_return_pct"].fill_null(0.0).to_list(), color="tab:purple"
    )
    right.set_title("Return on pool capital, annualised (simple)")
    right.set_xlabel("fee revenue / starting balance, per year (%)")
    right.grid(True, axis="x", alpha=0.3)
    _footnote(figure, economics_assumptions(pools))
    return figure


def _footnote(figure: Figure, text: str) -> None:
    """The figure's assumptions under it, wrapped to the figure's width."""
    lines = textwrap.wrap(text, 160)
    figure.text(0.01, 0.005, "\n".join(lines), fontsize=7, va="bottom")
    engine = figure.get_layout_engine()
    if isinstance(engine, ConstrainedLayoutEngine):  # keep the axes clear of the note
        engine.set(rect=(0.0, 0.035 * len(lines), 1.0, 1.0 - 0.035 * len(lines)))


def capital_figure(sweep: pl.DataFrame) -> Figure:
    """Capital against 404 rate: the share of requests refused (left axis) and the annualised
    return net of rebalancing (right axis) at each ``pool_scale`` of a stored sweep, one line
    per rebalancing policy, capital in USD (log x).

    Parameters
    ----------
    sweep : polars.DataFrame
        :func:`toolkit.models.economics.capital_sweep`'s frame.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not saved), with the assumptions as a footnote.

    Examples
    --------
    >>> sweep = pl.DataFrame({"policy": ["none"] * 2, "pool_scale": [1.0, 2.0],
    ...     "run_id": ["a", "b"], "capital_usd": [1e6, 2e6], "requests": [100, 100],
    ...     "refused": [20, 5], "share_404_pct": [20.0, 5.0], "fee_revenue_usd": [80.0, 95.0],
    ...     "annualised_return_pct": [2.92, 1.73], "net_annualised_return_pct": [2.9, 1.7]})
    >>> capital_figure(sweep).axes[0].get_title()
    'Capital against 404 rate (backtests of one flow at several pool_scale values)'
    """
    figure = new_figure()
    ax = figure.subplots()
    twin = ax.twinx()
    policies = sweep["policy"].unique(maintain_order=True).to_list()
    marks = ("o", "s", "^", "D")
    for i, policy in enumerate(policies):
        rows = sweep.filter(pl.col("policy") == policy)
        capital = rows["capital_usd"].to_list()
        ax.plot(capital, rows["share_404_pct"].to_list(), marker=marks[i % 4], color="tab:red",
                label=f"404 share ({policy})")  # fmt: skip
        for x, y, scale in rows.select("capital_usd", "share_404_pct", "pool_scale").rows():
            ax.annotate(f"×{scale:g}", (x, y), textcoords="offset points", xytext=(4, 4),
                        fontsize=8)  # fmt: skip
        twin.plot(capital, rows["net_annualised_return_pct"].to_list(), marker=marks[i % 4],
                  ls="--", color="tab:purple", label=f"net return ({policy})")  # fmt: skip
    dress(
        ax,
        title="Capital against 404 rate (backtests of one flow at several pool_scale values)",
        xlabel="pool capital (USD at scenario prices)",
        ylabel="requests refused for capacity (%)",
        x=sweep["capital_usd"].to_list(),
    )
    usd_ticks(ax.xaxis)
    twin.set_ylabel("return on capital net of rebalancing, annualised (%)")
    # The 404 line in front of the return line (a twin axes draws on top by default).
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)
    handles = ax.get_legend_handles_labels()
    more = twin.get_legend_handles_labels()
    ax.legend(handles[0] + more[0], handles[1] + more[1], fontsize=8)
    _footnote(figure, capital_assumptions(sweep))
    return figure
