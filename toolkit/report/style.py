"""Shared plotting helpers: fixed-size figures, titled and labelled axes, readable legends.

Every report figure is a ``matplotlib.figure.Figure`` (no pyplot state) of :data:`FIGSIZE`
inches at :data:`DPI`. :func:`dress` gives an axes its title, axis labels with units and a
grid, and switches an axis to log scale when its values span decades (:func:`spans_decades`).
:func:`series_styles` keeps many series apart with two channels instead of a dozen look-alike
colours: colour by one key (a chain) and line style and marker by another (a token). A chain has
one colour in every figure and notebook (:func:`chain_color`, :data:`CHAIN_COLORS`).

>>> styles = series_styles([("Base", "USDC"), ("Base", "WETH"), ("Ethereum", "USDC")])
>>> styles[("Base", "USDC")]["color"] == styles[("Base", "WETH")]["color"]
True
>>> styles[("Base", "USDC")]["linestyle"] == styles[("Ethereum", "USDC")]["linestyle"]
True
>>> chain_color("Base") == chain_color(8453) == styles[("Base", "USDC")]["color"]
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

from toolkit.report.text import format_usd
from toolkit.report.units import chain_name

__all__ = [
    "CHAIN_COLORS",
    "DPI",
    "FIGSIZE",
    "LINESTYLES",
    "MARKERS",
    "chain_color",
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
#: One colour per chain, in every figure and notebook (chains not listed take the spare
#: colours in order of chain id).
CHAIN_COLORS: dict[str, str] = {
    "Ethereum": "tab:blue",
    "Optimism": "tab:red",
    "Base": "tab:purple",
    "Arbitrum": "tab:orange",
    "Unichain": "tab:pink",
}
_SPARE_COLORS = ("tab:brown", "tab:olive", "tab:cyan", "tab:gray", "tab:green")
#: Values spanning this ratio (max / min of the positive ones) or more get a log axis.
DECADES_RATIO = 100.0


def new_figure(height: float = 1.0) -> Figure:
    """An empty figure of :data:`FIGSIZE`, constrained layout.

    Parameters
    ----------
    height : float, optional
        A factor on :data:`FIGSIZE`'s height (default 1).

    Returns
    -------
    matplotlib.figure.Figure
        The figure, not attached to any pyplot state.

    Examples
    --------
    >>> new_figure(1.5).get_size_inches().tolist() == [FIGSIZE[0], FIGSIZE[1] * 1.5]
    True
    """
    return Figure(figsize=(FIGSIZE[0], FIGSIZE[1] * height), layout="constrained")


def save(figure: Figure, path: Path) -> Path:
    """Write ``figure`` as PNG with a fixed dpi and no version metadata (the same figure gives
    the same bytes on every run).

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        The figure.
    path : pathlib.Path
        The file to write.

    Returns
    -------
    pathlib.Path
        ``path``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = save(new_figure(), Path(folder) / "empty.png")
    ...     written.name, written.read_bytes()[1:4]
    ('empty.png', b'PNG')
    """
    figure.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path


def colors(n: int) -> list[tuple[float, float, float, float]]:
    """``n`` distinct colours of tab10 (tab20 past ten).

    Parameters
    ----------
    n : int
        How many colours.

    Returns
    -------
    list of tuple
        RGBA colours, each a tuple of four floats in [0, 1].

    Examples
    --------
    >>> len(colors(3)), colors(12)[0] == colors(12)[10]
    (3, False)
    """
    palette = colormaps["tab10" if n <= 10 else "tab20"]
    return [palette(k % palette.N) for k in range(n)]


def chain_color(chain: int | str | None) -> str:
    """The colour of a chain (its id or registry name) in every figure: :data:`CHAIN_COLORS`,
    else a spare colour picked by the chain id (grey when unknown).

    Parameters
    ----------
    chain : int, str or None
        A chain id or registry name.

    Returns
    -------
    str
        A matplotlib colour name.

    Examples
    --------
    >>> chain_color(1), chain_color("Optimism"), chain_color(None)
    ('tab:blue', 'tab:red', 'tab:gray')
    """
    name = chain_name(chain) if isinstance(chain, int) else chain
    if name in CHAIN_COLORS:
        return CHAIN_COLORS[str(name)]
    if isinstance(chain, int):
        return _SPARE_COLORS[chain % len(_SPARE_COLORS)]
    return "tab:gray"


def series_styles(keys: Sequence[tuple[Hashable, Hashable]]) -> dict[Any, dict[str, Any]]:
    """Plot keywords per ``(colour key, style key)``.

    Colour by the first key, line style and marker by the second, each in order of first
    appearance. When every colour key is a chain name, each chain gets its own colour
    (:func:`chain_color`).

    Parameters
    ----------
    keys : sequence of (hashable, hashable)
        The series' keys, in the order they are drawn.

    Returns
    -------
    dict
        Key -> ``color``, ``linestyle`` and ``marker`` keywords for ``Axes.plot``.

    Examples
    --------
    >>> styles = series_styles([("Base", "USDC"), ("Ethereum", "USDC"), ("Base", "WETH")])
    >>> styles[("Base", "WETH")]
    {'color': 'tab:purple', 'linestyle': '--', 'marker': 's'}
    """
    firsts = list(dict.fromkeys(k[0] for k in keys))
    seconds = list(dict.fromkeys(k[1] for k in keys))
    by_chain = all(isinstance(k, str) and k in CHAIN_COLORS for k in firsts)
    palette: list[Any] = (
        [chain_color(str(k)) for k in firsts] if by_chain else list(colors(len(firsts)))
    )
    return {
        key: {
            "color": palette[firsts.index(key[0])],
            "linestyle": LINESTYLES[seconds.index(key[1]) % len(LINESTYLES)],
            "marker": MARKERS[seconds.index(key[1]) % len(MARKERS)],
        }
        for key in keys
    }


def spans_decades(values: Iterable[float | None]) -> bool:
    """Whether ``values`` call for a log axis.

    Parameters
    ----------
    values : iterable of float or None
        The values (None, non-finite and non-positive ones are left out).

    Returns
    -------
    bool
        True when the positive finite values span :data:`DECADES_RATIO` or more.

    Examples
    --------
    >>> spans_decades([1.0, 50.0, None]), spans_decades([0.5, 100.0])
    (False, True)
    """
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
    span decades goes to log scale and its label says so.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel to dress.
    title, xlabel, ylabel : str
        Its title and axis labels (with units).
    x, y : iterable of float, optional
        The plotted values: an axis whose values span decades goes to log scale.
    grid : str
        Which grid lines to draw ('both', 'x', 'y').

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, dressed.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> dress(ax, title="Fee", xlabel="amount (USD)", ylabel="fee (bps)", x=[1e2, 1e6]).get_xscale()
    'log'
    >>> plt.close(fig)
    """
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
    """A legend sized to ``n`` entries: inside for a few, outside on the right for many.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel.
    n : int
        How many entries the legend has.
    title : str, optional
        The legend's title.

    Returns
    -------
    None
        The legend is drawn on ``ax``.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1], label="Base")
    >>> legend(ax, 1); ax.get_legend() is not None
    True
    >>> plt.close(fig)
    """
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
    """Label ``axis`` (``ax.xaxis`` or ``ax.yaxis``) in dollars: ``$100``, ``$10k``, ``$1M``.

    Parameters
    ----------
    axis : matplotlib.axis.Axis
        ``ax.xaxis`` or ``ax.yaxis``.

    Returns
    -------
    None
        The axis's tick labels are set.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> usd_ticks(ax.xaxis); ax.xaxis.get_major_formatter()(1e6, 0)
    '$1M'
    >>> plt.close(fig)
    """
    axis.set_major_formatter(FuncFormatter(lambda value, _: format_usd(value)))
