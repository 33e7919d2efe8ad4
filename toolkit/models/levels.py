"""What a holding refuses at each inventory level, and over time as its inventory walks.

- :class:`HoldingDemand`: what the orders ask of one (chain, token) holding, in USD;
- :func:`level_curves`: per inventory level, the refused share of RFQs (Kaufman-Roberts on the
  holds from the RFQ to the fill, :func:`toolkit.models.loss.kaufman_roberts_curve`; an RFQ
  larger than the level is always refused) and the share of the net flow's variance from orders
  that fit (orders larger than the holding are refused and move nothing);
- :func:`blocking_integral`: ``∫ E[B(X_t)] dt`` for the inventory ``X`` walking from a start
  level, reflected at 0 (:func:`toolkit.models.passage.reflected_cdf`), over Gauss-Legendre
  times (:func:`time_nodes`): the refusals a holding sees while it walks.

>>> import numpy as np
>>> d = HoldingDemand(1, "USDC", 0.0, 1e4, 1.0, 0.0, 0.0, 0.0, np.array([100.0]))
>>> c = level_curves(d, 1e5, units=1000)
>>> day = time_nodes((86_400.0,), 12)
>>> round(float(blocking_integral(c, np.array([1e3]), np.array([1e3]), d, day)[0] / 86_400), 4)
0.0052
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from toolkit.models.loss import kaufman_roberts_curve
from toolkit.models.passage import folded_cdf, reflected_cdf

__all__ = ["HoldingDemand", "LevelCurves", "blocking_integral", "level_curves", "time_nodes"]

Floats = npt.NDArray[np.float64]
# Inventory levels the reflected walk's law is read at.
_LEVELS = 256


@dataclass(frozen=True, eq=False)
class HoldingDemand:
    """What the orders ask of one (chain, token) holding, in USD.

    ``drain_usd_per_s`` and ``variance_usd2_per_s``: the drift (out less in: ``−net``) and
    variance rate of its net flow; ``delivered_usd_per_s``: what converted orders ask it to
    deliver; ``receivable_usd``: what settlements owe it on average (received × settlement
    delay); ``rfq_per_s`` and ``sizes_usd``: the RFQs it must deliver and a sample of their
    sizes; ``hold_s``: their mean reservation, from the RFQ to the fill or the quote's lapse."""

    chain: int
    token: str
    drain_usd_per_s: float
    variance_usd2_per_s: float
    delivered_usd_per_s: float
    receivable_usd: float
    rfq_per_s: float
    hold_s: float
    sizes_usd: Floats


@dataclass(frozen=True, eq=False)
class LevelCurves:
    """Per inventory level ``0, unit_usd, 2·unit_usd, ...``: the refused share of RFQs
    (``blocking``) and the share of the net flow's variance from orders that fit (``fits``)."""

    unit_usd: float
    blocking: Floats
    fits: Floats

    def index(self, level_usd: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """The grid index at or below ``level_usd`` (clipped to the grid)."""
        index = np.floor(np.maximum(np.asarray(level_usd, dtype=np.float64), 0) / self.unit_usd)
        return np.minimum(index, len(self.blocking) - 1).astype(np.int64)

    @functools.cached_property
    def walk_points(self) -> npt.NDArray[np.int64]:
        """The grid indices :func:`blocking_integral` reads the walk at: 0 and 256 geometric
        steps to the top, a few % apart at every scale."""
        last = len(self.blocking) - 1
        points = np.unique(np.rint(np.geomspace(1, last, _LEVELS)).astype(np.int64))
        return np.concatenate([np.zeros(1, dtype=np.int64), points])

    def at(self, level_usd: npt.ArrayLike) -> Floats:
        """The refused share of RFQs at inventory ``level_usd``."""
        return np.asarray(self.blocking[self.index(level_usd)])


def level_curves(demand: HoldingDemand, max_usd: float, *, units: int = 4096) -> LevelCurves:
    """Refusals and the fitting orders' variance share at every level from 0 to ``max_usd``.

    Sizes are rounded up to ``max_usd / units`` (a conservative unit); the holds' loads are
    ``rfq_per_s × hold_s`` split by the sizes' shares (Kaufman-Roberts); without holds an RFQ is
    refused only when it asks more than the level.

    Parameters
    ----------
    demand : HoldingDemand
        The holding's RFQs (``rfq_per_s``, ``hold_s``, ``sizes_usd``).
    max_usd : float
        The largest level (USD).
    units : int
        Steps in the grid.

    Returns
    -------
    LevelCurves
        The curves.

    Examples
    --------
    >>> import numpy as np
    >>> d = HoldingDemand(1, "USDC", 0.0, 0.0, 0.0, 0.0, 0.01, 15.0, np.array([5e3, 5e4]))
    >>> c = level_curves(d, 1e5, units=100)
    >>> [round(float(x), 3) for x in c.at([4e4, 6e4, 1e5])]  # the 50k RFQs need 50k free
    [0.5, 0.035, 0.005]
    """
    unit = float(max_usd) / units
    sizes = np.asarray(demand.sizes_usd, dtype=np.float64)
    steps = np.clip(np.ceil(sizes / unit), 1, units + 1).astype(np.int64)
    counts = np.bincount(steps, minlength=units + 2)
    squares = np.bincount(steps, weights=sizes * sizes, minlength=units + 2)
    total = float(squares.sum())
    fits = np.cumsum(squares)[: units + 1] / total if total > 0 else np.ones(units + 1)
    if sizes.size == 0:
        return LevelCurves(unit, np.zeros(units + 1), fits)
    if demand.rfq_per_s <= 0 or demand.hold_s <= 0:
        blocking = 1.0 - np.cumsum(counts)[: units + 1] / sizes.size
        return LevelCurves(unit, blocking, fits)
    classes = np.flatnonzero(counts)
    load = demand.rfq_per_s * demand.hold_s
    loads = [load * counts[b] / sizes.size for b in classes]
    curve = kaufman_roberts_curve(loads, [int(b) for b in classes], units)
    return LevelCurves(unit, curve, fits)


@functools.lru_cache(maxsize=64)
def time_nodes(lengths: tuple[float, ...], order: int) -> tuple[Floats, Floats]:
    """Gauss-Legendre times and weights for the mean over ``lengths`` (equally likely) of the
    integral from 0 to each length.

    Parameters
    ----------
    lengths : tuple of float
        Window lengths (seconds), equally likely.
    order : int
        Nodes per window.

    Returns
    -------
    tuple of numpy.ndarray
        ``(times, weights)``; ``Σ weights·f(times)`` ≈ the mean over windows of ``∫ f``.

    Examples
    --------
    >>> t, w = time_nodes((10.0, 20.0), 3)
    >>> round(float(w.sum()), 9), round(float((w * t).sum()), 9)  # E[L], E[L²]/2
    (15.0, 125.0)
    """
    x, w = np.polynomial.legendre.leggauss(order)
    counts = Counter(lengths)  # equal lengths are read once, weighted by how many they are
    times = np.concatenate([0.5 * length * (x + 1.0) for length in counts])
    weights = np.concatenate([0.5 * length * w * n / len(lengths) for length, n in counts.items()])
    return times, weights


def blocking_integral(
    levels: LevelCurves,
    starts: Floats,
    caps: Floats,
    demand: HoldingDemand,
    nodes: tuple[Floats, Floats],
    memo: dict[int, float] | None = None,
    *,
    ceiling_ratio: float | None = None,
) -> Floats:
    """``∫ E[B(X_t)] dt`` over ``nodes`` for the inventory walking from each of ``starts``.

    The walk drifts by the demand's drain and has the variance of the orders that fit each of
    ``caps`` (``fits``); it is reflected at 0. Levels are read at 0 and 256 geometric steps up
    to the curves' top, ``B`` at the grid level below, and starts are snapped down to the grid
    (all err towards refusing).

    Parameters
    ----------
    levels : LevelCurves
        The holding's curves (:func:`level_curves`).
    starts, caps : numpy.ndarray
        Start levels and the capital each option truncates the variance at (USD), same shape.
    demand : HoldingDemand
        The holding's flow.
    nodes : tuple of numpy.ndarray
        Times and weights (:func:`time_nodes`).
    memo : dict, optional
        Integrals already computed with these ``nodes`` (and ratio), by grid pair; filled as
        it goes (a search asks the same pairs again).
    ceiling_ratio : float, optional
        Keep the walk below ``ceiling_ratio × cap`` too (:func:`~toolkit.models.passage.
        folded_cdf`); None: no ceiling.

    Returns
    -------
    numpy.ndarray
        The integral (seconds × share) per start; divide by the window for the mean share.

    Examples
    --------
    See the module docstring.
    """
    points = levels.walk_points
    grid = points * levels.unit_usd
    blocking = levels.blocking[points]
    start_at = np.searchsorted(points, levels.index(starts), side="right") - 1
    width = len(levels.fits) + 1
    keys = start_at * width + levels.index(caps)
    unique, back = np.unique(keys, return_inverse=True)
    known = {} if memo is None else memo
    missing = np.array([k for k in unique.tolist() if k not in known], dtype=np.int64)
    if missing.size:
        variance = demand.variance_usd2_per_s * levels.fits[missing % width]
        times, weights = nodes
        walk = (
            grid[None, None, :],
            grid[missing // width][:, None, None],
            demand.drain_usd_per_s,
            variance[:, None, None],
            times[None, :, None],
        )
        if ceiling_ratio is None:
            cdf = reflected_cdf(*walk)
        else:
            caps_at = (missing % width) * levels.unit_usd
            top = np.maximum(caps_at * ceiling_ratio, levels.unit_usd)[:, None, None]
            cdf = folded_cdf(*walk, top)
        # P(X in (grid_j, grid_j+1]) weighs B(grid_j); the atom at 0 and the tail past the grid.
        mass = np.diff(cdf, axis=-1, append=1.0)
        expected = cdf[..., 0] * blocking[0] + np.sum(mass * blocking[None, None, :], axis=-1)
        known.update(zip(missing.tolist(), (expected @ weights).tolist(), strict=True))
    values = np.array([known[k] for k in unique.tolist()], dtype=np.float64)
    return np.asarray(values[back.reshape(np.shape(starts))], dtype=np.float64)
