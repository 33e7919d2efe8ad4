"""The report's pool figures: each pool's utilization from the liquidity events, and the
latest backtest's utilization and 404 share over virtual time. Same conventions as
:mod:`toolkit.report.figures`."""

from __future__ import annotations

import polars as pl
from matplotlib.figure import Figure

from toolkit.report.style import dress, legend, new_figure, series_styles
from toolkit.report.tables import Timeline
from toolkit.report.units import chain_name

__all__ = ["backtest_figure", "capacity_figure"]


def _pool_key(chain: int | None, token: str | None, pool_type: str | None) -> tuple[str, str]:
    return chain_name(chain), f"{token or '?'} ({pool_type or '?'})"


def capacity_figure(steps: pl.DataFrame) -> Figure:
    """Each pool's utilization ``(reserved + outstanding) / total`` as a step function, in %;
    colour by chain, line style by token and pool type.

    Parameters
    ----------
    steps : polars.DataFrame
        :func:`toolkit.report.tables.capacity_steps`'s frame.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not saved).

    Examples
    --------
    >>> from datetime import UTC, datetime
    >>> from toolkit.report.load import ReportData
    >>> from toolkit.report.tables import capacity_steps
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> events = pl.DataFrame({"source": ["s"] * 2, "event_id": [1, 2],
    ...     "event": ["liquidity"] * 2, "received_at": [t, t], "chain": [8453] * 2,
    ...     "token": ["USDC"] * 2, "pool_type": ["intents"] * 2, "balance": [10**12] * 2,
    ...     "reserved": [0, 10**11], "outstanding": [0, 0]})
    >>> empty = pl.DataFrame()
    >>> steps = capacity_steps(ReportData("demo", empty, empty, events, empty, None, empty, empty))
    >>> capacity_figure(steps).axes[0].get_title()
    'Pool utilization from the liquidity event stream'
    """
    timeline = Timeline.of(steps["valid_from"])
    end = max(timeline.minutes(steps["valid_from"]))
    labels = steps["label"].unique(maintain_order=True).to_list()
    keys = {
        label: _pool_key(c, t, p)
        for label, c, t, p in steps.select("label", "chain", "token", "pool_type")
        .unique("label", maintain_order=True)
        .iter_rows()
    }
    styles = series_styles(list(keys.values()))
    figure = new_figure()
    ax = figure.subplots()
    for label in labels:
        pool = steps.filter(pl.col("label") == label)
        minutes = timeline.minutes(pool["valid_from"])
        values = (100 * pool["utilization"].fill_null(0.0)).to_list()
        # Extend the last state to the end of the record so every pool spans the same axis.
        minutes.append(end)
        values.append(values[-1])
        style = {k: v for k, v in styles[keys[label]].items() if k != "marker"}
        ax.step(minutes, values, where="post", lw=1.2, label=label, **style)
    dress(
        ax,
        title="Pool utilization from the liquidity event stream",
        xlabel=timeline.label,
        ylabel="utilization: (reserved + outstanding) / balance (%)",
    )
    ax.set_ylim(-2, 102)
    legend(ax, len(labels))
    return figure


def backtest_figure(pools: pl.DataFrame, timeline: pl.DataFrame, run: str) -> Figure:
    """The latest backtest: pool utilization over time (top, colour by chain, line style by
    token and pool type), 404 share per time bin (bottom).

    Parameters
    ----------
    pools : polars.DataFrame
        The run's ``backtest_pools`` samples (pool, chain, token, pool_type, ``t`` in virtual
        seconds, utilization).
    timeline : polars.DataFrame
        :func:`toolkit.report.tables.backtest_timeline`'s frame.
    run : str
        The backtest's run id (its first 8 characters go in the title).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not saved).

    Examples
    --------
    >>> from toolkit.report.load import ReportData
    >>> from toolkit.report.tables import backtest_timeline
    >>> requests = pl.DataFrame({"t": [0.0, 30.0, 90.0], "status": [200, 404, 200]})
    >>> pools = pl.DataFrame({"pool": ["p"] * 2, "chain": [8453] * 2, "token": ["USDC"] * 2,
    ...     "pool_type": ["intents"] * 2, "t": [0.0, 90.0], "utilization": [0.1, 0.4]})
    >>> empty = pl.DataFrame()
    >>> data = ReportData("demo", empty, empty, empty, empty, "bt-0123456789", requests, pools)
    >>> backtest_figure(pools, backtest_timeline(data), "bt-0123456789").axes[0].get_title()
    'Backtest bt-01234: pool utilization'
    """
    figure = new_figure(1.4)
    top, bottom = figure.subplots(2, 1, sharex=True)
    names = pools.select("pool", "chain", "token", "pool_type").unique().sort("pool").rows()
    styles = series_styles([_pool_key(c, t, p) for _, c, t, p in names])
    for name, chain, token, pool_type in names:
        series = pools.filter(pl.col("pool") == name)
        hours = [t / 3600.0 for t in series["t"].to_list()]
        key = _pool_key(chain, token, pool_type)
        style = {k: v for k, v in styles[key].items() if k != "marker"}
        top.plot(
            hours,
            (100 * series["utilization"]).to_list(),
            lw=1,
            label=f"{key[0]} {key[1]}",
            **style,
        )
    dress(
        top,
        title=f"Backtest {run[:8]}: pool utilization",
        xlabel="virtual time (hours)",
        ylabel="pool utilization (%)",
    )
    legend(top, len(names))
    width = int(timeline["bin_s"][0]) if timeline.height else 3600
    middles = [(t + width / 2) / 3600.0 for t in timeline["t_start"].to_list()]
    bottom.errorbar(
        middles,
        (100 * timeline["rate"]).to_list(),
        yerr=[
            [100 * max(0.0, r - lo) for r, lo, _ in _bands(timeline)],
            [100 * max(0.0, hi - r) for r, _, hi in _bands(timeline)],
        ],
        marker="o",
        ms=3,
        lw=1,
        capsize=2,
        color="black",
    )
    dress(
        bottom,
        title=f"Requests refused for capacity per {_duration(width)} (Wilson 95 % intervals)",
        xlabel="virtual time (hours)",
        ylabel="404 share of requests (%)",
    )
    bottom.set_ylim(bottom=-2, top=100 * max(0.05, *(hi for _, _, hi in _bands(timeline))) * 1.1)
    return figure


def _bands(timeline: pl.DataFrame) -> list[tuple[float, float, float]]:
    return [
        (float(r), float(lo if lo is not None else r), float(hi if hi is not None else r))
        for r, lo, hi in timeline.select("rate", "ci95_low", "ci95_high").iter_rows()
    ]


def _duration(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    return f"{seconds // 60} min"
