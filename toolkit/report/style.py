"""Shared plotting helpers: fixed-size figures, titled and labelled axes, readable legends.

Every report figure is a ``matplotlib.figure.Figure`` (no pyplot state) of :data:`FIGSIZE`
inches at :data:`DPI`. :func:`dress` gives an axes its title, axis labels with units and a
grid, and switches an axis to log scale when its values span decades (:func:`spans_decades`).
:func:`series_styles` keeps many series apart with two channels instead of a dozen look-alike
colours: colour by one key (a chain) and line style and marker by another (a token).

>>> styles = series_styles([("Base", "USDC"), ("Base", "WETH"), ("Ethereum", "USDC")])
>>> styles[("Base", "USDC")]["color"] == styles[("Base", "WETH")]["color"]
True
>>> styles[("Base", "USDC")]["linestyle"] == styles[("Ethereum", "USDC")]["linestyle"]
True
>>> spans_decades([1.0, 5.0, 5_000.0]), spans_decades([10.0, 90.0]), spans_decades([])
(True, False, False)
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Hashable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from toolkit.report.units import format_usd

__all__ = [
    "DPI",
    "FIGSIZE",
    "LINESTYLES",
    "MARKERS",
    "colors",
    "dress",
    "legend",
    "new_figure",
    "save",
    "series_styles",
    "spans_decades",
    "usd_ticks",
]

FIGSIZE: tuple[float, float] = (10.0, 5.5)
DPI = 100
LINESTYLES: tuple[str, ...] = ("-", "--", ":", "-.")
MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P")
#: Values spanning this ratio (max / min of the positive ones) or more get a log axis.
DECADES_RATIO = 100.0


def new_figure(height: float = 1.0) -> Figure:
    """An empty figure of :data:`FIGSIZE` (height scaled by ``height``), constrained layout."""
    return Figure(figsize=(FIGSIZE[0], FIGSIZE[1] * height), layout="constrained")


def save(figure: Figure, path: Path) -> Path:
    """Write ``figure`` as PNG with fixed dpi and no version metadata."""
    figure.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path


def colors(n: int) -> list[tuple[float, float, float, float]]:
    """``n`` distinct colours of tab10 (tab20 past ten)."""
    palette = colormaps["tab10" if n <= 10 else "tab20"]
    return [palette(k % palette.N) for k in range(n)]


def series_styles(keys: Sequence[tuple[Hashable, Hashable]]) -> dict[Any, dict[str, Any]]:
    """Plot keywords per ``(colour key, style key)``: colour by the first, line style and
    marker by the second, each in order of first appearance."""
    firsts = list(dict.fromkeys(k[0] for k in keys))
    seconds = list(dict.fromkeys(k[1] for k in keys))
    palette = colors(len(firsts))
    return {
        key: {
            "color": palette[firsts.index(key[0])],
            "linestyle": LINESTYLES[seconds.index(key[1]) % len(LINESTYLES)],
            "marker": MARKERS[seconds.index(key[1]) % len(MARKERS)],
        }
        for key in keys
    }


def spans_decades(values: Iterable[float | None]) -> bool:
    """True when the positive finite ``values`` span :data:`DECADES_RATIO` or more."""
    positive = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    return bool(positive) and max(positive) / min(positive) >= DECADES_RATIO


#: Set while a report of simulated data is drawn: every figure's title says so.
_SIMULATED: ContextVar[bool] = ContextVar("simulated", default=False)


@contextlib.contextmanager
def simulated_titles(simulated: bool) -> Iterator[None]:
    """Prefix every figure title drawn inside the block with "Simulated: " when
    ``simulated`` (the data came from the embedded service or a backtest)."""
    mark = _SIMULATED.set(simulated)
    try:
        yield
    finally:
        _SIMULATED.reset(mark)


def dress(
    ax: Axes,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    x: Iterable[float | None] | None = None,
    y: Iterable[float | None] | None = None,
    grid: str = "both",
) -> Axes:
    """Title, axis labels (with units) and a light grid; an axis whose values (``x``, ``y``)
    span decades goes to log scale and its label says so."""
    if not title or not xlabel or not ylabel:
        raise ValueError("dress: every figure needs a title and both axis labels")
    if x is not None and spans_decades(x):
        ax.set_xscale("log")
        xlabel += ", log scale"
    if y is not None and spans_decades(y):
        ax.set_yscale("log")
        ylabel += ", log scale"
    ax.set_title(f"Simulated: {title}" if _SIMULATED.get() else title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, axis=grid, which="both", alpha=0.3)  # type: ignore[arg-type]
    return ax


def legend(ax: Axes, n: int, *, title: str | None = None) -> None:
    """A legend sized to ``n`` entries: inside for a few, outside on the right for many."""
    if n == 0:
        return
    if n <= 6:
        ax.legend(fontsize=8, title=title, title_fontsize=8)
    else:
        ax.legend(
            fontsize=7,
            title=title,
            title_fontsize=7,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            ncols=1 if n <= 16 else 2,
        )


def usd_ticks(axis: Axis) -> None:
    """Label ``axis`` (``ax.xaxis`` or ``ax.yaxis``) in dollars: ``$100``, ``$10k``, ``$1M``."""
    axis.set_major_formatter(FuncFormatter(lambda value, _: format_usd(value)))
