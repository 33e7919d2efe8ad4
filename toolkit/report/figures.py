"""The report's figures: matplotlib ``Figure`` objects drawn from the report's frames.

Figures are built with ``matplotlib.figure.Figure`` rather than ``pyplot``: no global state,
no GUI backend, and PNGs rendered by Agg whatever ``MPLBACKEND`` says. Sizes and dpi are fixed
so a figure has the same pixels on every machine; titles, axis labels with units, legends and
log axes come from :mod:`toolkit.report.style`, amounts are in whole tokens or USD
(:mod:`toolkit.report.units`).
"""

from __future__ import annotations

from typing import Any

import polars as pl
from matplotlib.figure import Figure

from toolkit.report.style import (
    DPI,
    FIGSIZE,
    chain_color,
    dress,
    new_figure,
    save,
    series_styles,
)
from toolkit.report.tables import ROUTE_KEYS
from toolkit.report.units import chain_name, token_decimals

__all__ = [
    "DPI",
    "FIGSIZE",
    "blocking_figure",
    "eta_validity_figure",
    "fee_curve_figure",
    "save",
]


def _unit(token: str, decimals: int) -> str:
    return token if decimals else f"{token} smallest units"


def fee_curve_figure(routes_obs: pl.DataFrame) -> Figure:
    """Median effective fee against amount (whole tokens, log x), one line per route, one
    panel per token; colour by source chain, line style by destination chain.

    Parameters
    ----------
    routes_obs : polars.DataFrame
        The 200 answers with ``effective_fee_bps`` (:func:`toolkit.models.effective_fee_bps`)
        and a ``route`` label.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not saved).

    Examples
    --------
    >>> from toolkit.models import effective_fee_bps
    >>> obs = pl.DataFrame({"src_chain": [1, 1], "dst_chain": [8453, 8453],
    ...     "token": ["USDC"] * 2, "quote_type": ["ExactInput"] * 2, "amount": [10**8, 10**9],
    ...     "status": [200, 200], "input_amount": [10**8, 10**9],
    ...     "output_amount": [99_900_000, 999_000_000]})
    >>> answered = effective_fee_bps(obs).with_columns(route=pl.lit("Ethereum→Base USDC"))
    >>> fee_curve_figure(answered).get_suptitle()
    'RFQ fees by quote size (200 answers of the sweep)'
    """
    points = (
        routes_obs.filter(pl.col("effective_fee_bps").is_not_null() & (pl.col("amount") > 0))
        .group_by([*ROUTE_KEYS, "route", "amount"])
        .agg(pl.col("effective_fee_bps").median().alias("fee"))
        .sort([*ROUTE_KEYS, "amount"])
    )
    tokens = points["token"].unique().sort().to_list()
    figure = new_figure()
    axes = figure.subplots(1, max(len(tokens), 1), squeeze=False)[0]
    for ax, token in zip(axes, tokens, strict=False):
        subset = points.filter(pl.col("token") == token)
        pairs = subset.select("src_chain", "dst_chain").unique(maintain_order=True).rows()
        styles = series_styles([(chain_name(a), chain_name(b)) for a, b in pairs])
        decimals = token_decimals(subset["dst_chain"][0], token)
        amounts_all: list[float] = []
        for src, dst in pairs:
            line = subset.filter((pl.col("src_chain") == src) & (pl.col("dst_chain") == dst))
            amounts = (line["amount"].cast(pl.Float64) / 10**decimals).to_list()
            amounts_all += amounts
            key = (chain_name(src), chain_name(dst))
            ax.plot(
                amounts,
                line["fee"].to_list(),
                ms=3,
                lw=1,
                label=f"{key[0]}→{key[1]}",
                **styles[key],
            )
        dress(
            ax,
            title=f"{token}: effective fee by amount",
            xlabel=f"amount ({_unit(token, decimals)})",
            ylabel="effective fee (bps, median per amount)",
            x=amounts_all,
        )
    handles: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    figure.legend(
        list(handles.values()),
        list(handles),
        loc="outside right upper",
        fontsize=7,
        title="colour: source\nstyle: destination",
        title_fontsize=7,
    )
    figure.suptitle("RFQ fees by quote size (200 answers of the sweep)")
    return figure


def blocking_figure(refusals: pl.DataFrame) -> Figure:
    """The 404 share of each route with its 95 % interval, as horizontal bars.

    The market's (other users' requests, Wilson interval) in the colour of the destination
    chain, the collector's own sweep's (interval clustered by sweep round) in grey beside it,
    labelled with the peak share of the pool its own quotes held.

    Parameters
    ----------
    refusals : polars.DataFrame
        :func:`toolkit.report.refusals.refusal_table`'s frame.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not saved).

    Examples
    --------
    >>> from toolkit.report.load import ReportData
    >>> from toolkit.report.refusals import refusal_table
    >>> obs = pl.DataFrame({"run_id": ["r"] * 3, "round": [0, 0, 1], "src_chain": [1] * 3,
    ...     "dst_chain": [8453] * 3, "token": ["USDC"] * 3, "status": [200, 200, 404],
    ...     "holds_orders": [False] * 3})
    >>> empty = pl.DataFrame()
    >>> data = ReportData("demo", empty, obs, empty, empty, None, empty, empty)
    >>> blocking_figure(refusal_table(data)).axes[0].get_xlabel()
    '404 share of 200/404 answers (%)'
    """
    routes = (
        refusals.group_by("route")
        .agg(pl.col("share_404").max().alias("top"), pl.col("dst_chain").first())
        .sort(["top", "route"], descending=[False, True])
    )
    sources = [s for s in ("collector sweep", "market") if s in set(refusals["source"])]
    figure = new_figure(1.2)
    ax = figure.subplots()
    height = 0.8 / max(len(sources), 1)
    for k, source in enumerate(sources):
        part = routes.join(refusals.filter(pl.col("source") == source), on="route", how="left")
        positions = [i + (k - (len(sources) - 1) / 2) * height for i in range(part.height)]
        _refusal_bars(ax, part, positions, height, market=source == "market")
    ax.set_yticks(range(routes.height), routes["route"].to_list(), fontsize=7)
    dress(
        ax,
        title="RFQ 404 share by route: the market's, and the collector's own (95 % intervals)",
        xlabel="404 share of 200/404 answers (%)",
        ylabel="route (source→destination, token; colour: destination chain)",
        grid="x",
    )
    ax.set_xlim(0, 100)
    # A fixed place: "best" searches every bar and error bar (slow, and it warns).
    ax.legend(loc="lower right", fontsize=8)
    return figure


def _refusal_bars(
    ax: Any, part: pl.DataFrame, positions: list[float], height: float, *, market: bool
) -> None:
    """One source's bars of :func:`blocking_figure` with their intervals, and each route's
    sample size (and, for the sweep, the peak share of the pool its own quotes held)."""
    share = (100 * part["share_404"].fill_null(0.0)).to_list()
    low = (100 * part["ci95_low"].fill_null(0.0)).to_list()
    high = (100 * part["ci95_high"].fill_null(0.0)).to_list()
    ax.barh(
        positions,
        share,
        height=height,
        xerr=[
            [max(0.0, s - lo) for s, lo in zip(share, low, strict=True)],
            [max(0.0, hi - s) for s, hi in zip(share, high, strict=True)],
        ],
        color=[chain_color(c) for c in part["dst_chain"].to_list()] if market else "0.7",
        hatch=None if market else "//",
        alpha=0.85,
        capsize=2,
        error_kw={"lw": 0.8},
        label="market: other users' requests (Wilson 95 %)"
        if market
        else "collector's own sweep (95 % clustered by round; not independent)",
    )
    if market:
        # A share of 0 draws no bar: a marker shows where the estimate is.
        ax.scatter(
            share,
            positions,
            s=10,
            zorder=3,
            color=[chain_color(c) for c in part["dst_chain"].to_list()],
        )
    for y, n, held in zip(
        positions, part["answered"].to_list(), part["own_hold_peak_pct"].to_list(), strict=True
    ):
        if n is None:
            continue
        note = (
            f"market n={n}"
            if held is None
            else f"sweep n={n}; its own quotes held up to {held:.0f} % of the pool"
        )
        ax.text(101, y, note, va="center", fontsize=5.5, clip_on=False)


def eta_validity_figure(routes: pl.DataFrame) -> Figure:
    """Median quoted eta and mean validity window per route, as horizontal bars.

    Parameters
    ----------
    routes : polars.DataFrame
        :func:`toolkit.report.tables.route_table`'s frame (``eta_median_s``,
        ``validity_mean_s``).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not saved).

    Examples
    --------
    >>> routes = pl.DataFrame({"route": ["Ethereum→Base USDC"], "dst_chain": [8453],
    ...     "eta_median_s": [35.0], "eta_p90_s": [40.0], "validity_mean_s": [60.0],
    ...     "validity_min_s": [60.0], "validity_max_s": [60.0]})
    >>> eta_validity_figure(routes).axes[0].get_title()
    'Quoted fill time'
    """
    table = routes.filter(pl.col("eta_median_s").is_not_null()).sort("route", descending=True)
    names = table["route"].to_list()
    figure = new_figure()
    left, right = figure.subplots(1, 2, sharey=True)
    positions = list(range(len(names)))
    median, p90 = table["eta_median_s"].to_list(), table["eta_p90_s"].to_list()
    above = [high - mid for mid, high in zip(median, p90, strict=True)]
    left.barh(positions, median, xerr=[[0.0] * len(median), above], color="tab:blue", capsize=2)
    left.set_yticks(positions, names, fontsize=6 if len(names) > 12 else 8)
    dress(
        left,
        title="Quoted fill time",
        xlabel="eta (s): median, whisker to p90",
        ylabel="route",
        grid="x",
    )
    mean = table["validity_mean_s"].to_list()
    spread = [
        [m - low for m, low in zip(mean, table["validity_min_s"].to_list(), strict=True)],
        [high - m for m, high in zip(mean, table["validity_max_s"].to_list(), strict=True)],
    ]
    right.barh(positions, mean, xerr=spread, color="tab:orange", capsize=2)
    right.set_title("Quote validity window")
    right.set_xlabel("validUntil − observed (s): mean, whiskers min to max")
    right.grid(True, axis="x", alpha=0.3)
    return figure
