"""The report's figures: matplotlib ``Figure`` objects drawn from the report's frames.

Figures are built with ``matplotlib.figure.Figure`` rather than ``pyplot``: no global state,
no GUI backend, and PNGs rendered by Agg whatever ``MPLBACKEND`` says. Sizes and dpi are fixed
so a figure has the same pixels on every machine.
"""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
from matplotlib import colormaps
from matplotlib.figure import Figure

from toolkit.report.tables import ROUTE_KEYS, Timeline, chain_name, token_decimals

__all__ = [
    "DPI",
    "FIGSIZE",
    "backtest_figure",
    "blocking_figure",
    "capacity_figure",
    "eta_validity_figure",
    "fee_curve_figure",
    "save",
]

FIGSIZE: tuple[float, float] = (10.0, 5.5)
DPI = 100


def _colors(n: int) -> list[tuple[float, float, float, float]]:
    palette = colormaps["tab10" if n <= 10 else "tab20"]
    return [palette(k % palette.N) for k in range(n)]


def save(figure: Figure, path: Path) -> Path:
    """Write ``figure`` as PNG with fixed dpi and no version metadata."""
    figure.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path


def fee_curve_figure(routes_obs: pl.DataFrame) -> Figure:
    """Median effective fee against amount (log x), one line per route, one panel per token.

    ``routes_obs`` holds the 200 answers with ``effective_fee_bps`` and a ``route`` label.
    """
    points = (
        routes_obs.filter(pl.col("effective_fee_bps").is_not_null() & (pl.col("amount") > 0))
        .group_by([*ROUTE_KEYS, "route", "amount"])
        .agg(pl.col("effective_fee_bps").median().alias("fee"))
        .sort([*ROUTE_KEYS, "amount"])
    )
    tokens = points["token"].unique().sort().to_list()
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    axes = figure.subplots(1, max(len(tokens), 1), squeeze=False)[0]
    for ax, token in zip(axes, tokens, strict=False):
        subset = points.filter(pl.col("token") == token)
        routes = subset["route"].unique(maintain_order=True).to_list()
        decimals = token_decimals(subset["dst_chain"][0], token)
        for color, route in zip(_colors(len(routes)), routes, strict=True):
            line = subset.filter(pl.col("route") == route)
            amounts = (line["amount"].cast(pl.Float64) / 10**decimals).to_list()
            label = route.rsplit(" ", 1)[0]
            ax.plot(
                amounts, line["fee"].to_list(), marker="o", ms=3, lw=1, color=color, label=label
            )
        ax.set_xscale("log")
        ax.set_title(f"{token}: effective fee by amount")
        ax.set_xlabel(f"amount ({token})" if decimals else f"amount ({token} smallest units)")
        ax.set_ylabel("effective fee (bps, median per amount)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, ncols=2 if len(routes) > 6 else 1)
    return figure


def blocking_figure(windows: pl.DataFrame, window: str) -> Figure:
    """The 404 share of each route over the whole sweep, with its binomial standard error, as
    horizontal bars (most refused at the top).

    A sweep visits each route a few times per round, so per-window shares are too noisy to
    draw as lines; ``windows`` (per ``window``, in the CSV beside the figure) are summed here.
    """
    ranked = (
        windows.group_by("route")
        .agg(pl.col("blocked").sum(), pl.col("answered").sum())
        .filter(pl.col("answered") > 0)
        .with_columns(share=pl.col("blocked") / pl.col("answered"))
        .with_columns(error=(pl.col("share") * (1 - pl.col("share")) / pl.col("answered")).sqrt())
        .sort(["share", "answered", "route"], descending=[False, False, True])
    )
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    ax = figure.subplots()
    positions = list(range(ranked.height))
    ax.barh(
        positions,
        (100 * ranked["share"]).to_list(),
        xerr=(100 * ranked["error"]).to_list(),
        color="tab:red",
        alpha=0.8,
        capsize=2,
    )
    labels = [f"{r} (n={n})" for r, n in ranked.select("route", "answered").iter_rows()]
    ax.set_yticks(positions, labels, fontsize=6 if ranked.height > 12 else 8)
    ax.set_title(
        f"RFQ 404 share by route over the sweep (± one standard error; {window} windows in the CSV)"
    )
    ax.set_xlabel("404 share of 200/404 answers (%)")
    ax.set_xlim(0, 100)
    ax.grid(True, axis="x", alpha=0.3)
    return figure


def capacity_figure(steps: pl.DataFrame) -> Figure:
    """Each pool's utilization ``(reserved + outstanding) / total`` as a step function."""
    timeline = Timeline.of(steps["valid_from"])
    end = max(timeline.minutes(steps["valid_from"]))
    labels = steps["label"].unique(maintain_order=True).to_list()
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    ax = figure.subplots()
    for color, label in zip(_colors(len(labels)), labels, strict=True):
        pool = steps.filter(pl.col("label") == label)
        minutes = timeline.minutes(pool["valid_from"])
        values = pool["utilization"].fill_null(0.0).to_list()
        # Extend the last state to the end of the record so every pool spans the same axis.
        minutes.append(end)
        values.append(values[-1])
        ax.step(minutes, values, where="post", lw=1.2, color=color, label=label)
    ax.set_title("Pool utilization from the liquidity event stream")
    ax.set_xlabel(timeline.label)
    ax.set_ylabel("(reserved + outstanding) / total")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, ncols=2 if len(labels) > 6 else 1)
    return figure


def eta_validity_figure(routes: pl.DataFrame) -> Figure:
    """Median quoted eta and mean validity window per route, as horizontal bars."""
    table = routes.filter(pl.col("eta_median_s").is_not_null()).sort("route", descending=True)
    names = table["route"].to_list()
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    left, right = figure.subplots(1, 2, sharey=True)
    positions = list(range(len(names)))
    median, p90 = table["eta_median_s"].to_list(), table["eta_p90_s"].to_list()
    above = [high - mid for mid, high in zip(median, p90, strict=True)]
    left.barh(positions, median, xerr=[[0.0] * len(median), above], color="tab:blue", capsize=2)
    left.set_yticks(positions, names, fontsize=6 if len(names) > 12 else 8)
    left.set_xlabel("eta (s): median, whisker to p90")
    left.set_title("Quoted fill time")
    mean = table["validity_mean_s"].to_list()
    spread = [
        [m - low for m, low in zip(mean, table["validity_min_s"].to_list(), strict=True)],
        [high - m for m, high in zip(mean, table["validity_max_s"].to_list(), strict=True)],
    ]
    right.barh(positions, mean, xerr=spread, color="tab:orange", capsize=2)
    right.set_xlabel("validUntil − observed (s): mean, whiskers min to max")
    right.set_title("Quote validity window")
    for ax in (left, right):
        ax.grid(True, axis="x", alpha=0.3)
    return figure


def backtest_figure(pools: pl.DataFrame, timeline: pl.DataFrame, run: str) -> Figure:
    """The latest backtest: pool utilization over time (top), 404 share per time bin (bottom)."""
    figure = Figure(figsize=(FIGSIZE[0], FIGSIZE[1] * 1.4), layout="constrained")
    top, bottom = figure.subplots(2, 1, sharex=True)
    names = pools.select("pool", "chain", "token", "pool_type").unique().sort("pool").rows()
    for color, (name, chain, token, pool_type) in zip(_colors(len(names)), names, strict=True):
        series = pools.filter(pl.col("pool") == name)
        hours = [t / 3600.0 for t in series["t"].to_list()]
        label = f"{chain_name(chain)} {token} ({pool_type})"
        top.plot(hours, series["utilization"].to_list(), lw=1, color=color, label=label)
    top.set_ylabel("pool utilization")
    top.set_title(f"Backtest {run[:8]}: pool utilization")
    top.grid(True, alpha=0.3)
    top.legend(fontsize=7, ncols=2 if len(names) > 6 else 1)
    width = int(timeline["bin_s"][0]) if timeline.height else 3600
    middles = [(t + width / 2) / 3600.0 for t in timeline["t_start"].to_list()]
    bottom.errorbar(
        middles,
        timeline["rate"].to_list(),
        yerr=timeline["std_error"].to_list(),
        marker="o",
        ms=3,
        lw=1,
        capsize=2,
        color="tab:red",
    )
    bottom.set_ylabel("404 share of requests")
    bottom.set_xlabel("virtual time (hours)")
    bottom.set_title(f"Requests refused for capacity per {_duration(width)} (± one standard error)")
    bottom.set_ylim(bottom=-0.02, top=max(0.05, *(r + e for r, e in _pairs(timeline))) * 1.1)
    bottom.grid(True, alpha=0.3)
    return figure


def _pairs(timeline: pl.DataFrame) -> list[tuple[float, float]]:
    return [
        (float(r), 0.0 if e is None or math.isnan(e) else float(e))
        for r, e in timeline.select("rate", "std_error").iter_rows()
    ]


def _duration(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    return f"{seconds // 60} min"
