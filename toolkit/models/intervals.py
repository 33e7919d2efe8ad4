"""95 % intervals for the figures the toolkit estimates: shares, medians and means.

One definition of each, used by the report, the notebooks and the tests:

- :func:`wilson`: the Wilson score interval of a share of independent trials (Wilson 1927; the
  interval Brown, Cai & DasGupta 2001 recommend over the Wald ``p ± 1.96·se``, which collapses
  to a point at 0 or 1 and undercovers at small ``n``). :func:`wilson_exprs` is the same for
  polars columns.
- :func:`clustered_share`: a share whose trials come in correlated clusters (the consecutive
  RFQs of one sweep round at one pool, the time windows of a backtest): the ratio estimator's
  cluster-robust standard error with a Student-t quantile on ``clusters − 1`` degrees of
  freedom, so a handful of clusters gives the wide interval it should.
- :func:`median_ranks` / :func:`median_interval`: the distribution-free interval of a median
  from order statistics (binomial ranks, normal approximation).
- :func:`mean_interval`: a mean with a Student-t interval.

>>> [round(x, 4) for x in wilson(5, 10)]
[0.2366, 0.7634]
>>> [round(x, 4) for x in wilson(0, 10)]
[0.0, 0.2775]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import polars as pl

from toolkit.arguments import ArgumentError, whole

__all__ = [
    "Z95",
    "batch_means",
    "clustered_share",
    "mean_interval",
    "median_interval",
    "median_ranks",
    "student_t",
    "wilson",
    "wilson_exprs",
]

#: The two-sided 95 % quantile of the standard normal.
Z95 = NormalDist().inv_cdf(0.975)

# Two-sided 95 % Student-t quantiles by degrees of freedom (the normal's 1.96 beyond 30).
_T95 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
    10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
    18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060,
    26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042,
}  # fmt: skip


def student_t(df: int) -> float:
    """The two-sided 95 % quantile of Student's t with ``df`` degrees of freedom.

    >>> student_t(4), student_t(1_000)
    (2.776, 1.96)
    """
    return _T95.get(whole(df, "df", minimum=1), 1.96)


def _counts(hits: int, trials: int) -> tuple[int, int]:
    n = whole(trials, "trials", minimum=0)
    k = whole(hits, "hits", minimum=0)
    if k > n:
        raise ArgumentError("hits", f"at most trials ({n})", k)
    return k, n


def wilson(hits: int, trials: int) -> tuple[float, float]:
    """The 95 % Wilson score interval ``(low, high)`` of ``hits`` out of ``trials``
    independent trials; ``(0.0, 1.0)`` when there are no trials.

    >>> [round(x, 4) for x in wilson(1, 912)]
    [0.0002, 0.0062]
    >>> wilson(3, 2)
    Traceback (most recent call last):
    ...
    toolkit.arguments.ArgumentError: hits: must be at most trials (2), got 3
    """
    k, n = _counts(hits, trials)
    if n == 0:
        return 0.0, 1.0
    p, z2 = k / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # At 0 or n hits the bound is exactly 0 or 1; rounding must not put it a hair outside.
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


def wilson_exprs(hits: str, trials: str, prefix: str = "") -> list[pl.Expr]:
    """Polars expressions ``<prefix>ci95_low`` and ``<prefix>ci95_high``: :func:`wilson` of
    the ``hits`` and ``trials`` columns (null where ``trials`` is 0).

    >>> frame = pl.DataFrame({"k": [5, 0], "n": [10, 0]})
    >>> rows = frame.select(wilson_exprs("k", "n")).rows()
    >>> [tuple(None if v is None else round(v, 4) for v in r) for r in rows]
    [(0.2366, 0.7634), (None, None)]
    """
    k, n = pl.col(hits).cast(pl.Float64), pl.col(trials).cast(pl.Float64)
    z2 = Z95 * Z95
    p = k / n
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * (p * (1 - p) / n + z2 / (4 * n * n)).sqrt() / (1 + z2 / n)
    some = n > 0
    low = pl.when(some & (k == 0)).then(0.0).when(some).then((centre - half).clip(0.0, 1.0))
    high = pl.when(some & (k == n)).then(1.0).when(some).then((centre + half).clip(0.0, 1.0))
    return [low.alias(f"{prefix}ci95_low"), high.alias(f"{prefix}ci95_high")]


def clustered_share(
    hits: Sequence[int], trials: Sequence[int]
) -> tuple[float | None, float | None, float | None]:
    """``(share, low, high)`` of ``sum(hits) / sum(trials)`` when the trials come in clusters
    (``hits[i]`` of ``trials[i]`` in cluster ``i``) whose members are not independent.

    The ratio estimator's cluster-robust variance, ``k/(k−1) · Σ(hᵢ − p·nᵢ)² / (Σnᵢ)²`` over
    ``k`` clusters, with the Student-t quantile on ``k − 1`` degrees of freedom; clipped to
    [0, 1]. Fewer than two clusters cannot say how much clusters differ: the interval is then
    ``(0, 1)``. No trials at all give ``(None, None, None)``.

    >>> share, low, high = clustered_share([6, 0, 6], [12, 12, 12])
    >>> round(share, 3), round(low, 3), round(high, 3)
    (0.333, 0.0, 1.0)
    >>> [round(x, 3) for x in clustered_share([4, 4, 4, 4], [12, 12, 12, 12])]
    [0.333, 0.217, 0.475]
    """
    if len(hits) != len(trials):
        raise ArgumentError("hits", f"one count per cluster ({len(trials)})", len(hits))
    pairs = [_counts(h, n) for h, n in zip(hits, trials, strict=True)]
    total = sum(n for _, n in pairs)
    if total == 0:
        return None, None, None
    share = sum(h for h, _ in pairs) / total
    k = sum(1 for _, n in pairs if n > 0)
    if k < 2:
        return share, 0.0, 1.0
    spread = sum((h - share * n) ** 2 for h, n in pairs) * k / (k - 1)
    half = student_t(k - 1) * math.sqrt(spread) / total
    low, high = wilson(sum(h for h, _ in pairs), total)
    return share, max(0.0, min(low, share - half)), min(1.0, max(high, share + half))


def median_ranks(n: int) -> tuple[int, int] | None:
    """The 1-based ranks ``(j, k)`` of the sorted sample whose values bound a 95 % interval of
    the median of ``n`` values (binomial(n, ½), normal approximation; Conover, *Practical
    Nonparametric Statistics*, §3.2); None below 6 values, too few for a 95 % interval.

    >>> median_ranks(100), median_ranks(5)
    ((40, 61), None)
    """
    size = whole(n, "n", minimum=0)
    if size < 6:
        return None
    half = Z95 * math.sqrt(size) / 2
    low = max(1, math.floor(size / 2 - half))
    high = min(size, math.ceil(size / 2 + half) + 1)
    return low, high


def median_interval(values: Sequence[float]) -> tuple[float | None, float | None]:
    """The 95 % distribution-free interval of the median of ``values`` (:func:`median_ranks`);
    ``(None, None)`` for fewer than 6 values.

    >>> median_interval(list(range(1, 101)))
    (40, 61)
    """
    clean = sorted(v for v in values if v is not None and not math.isnan(v))
    ranks = median_ranks(len(clean))
    if ranks is None:
        return None, None
    return clean[ranks[0] - 1], clean[ranks[1] - 1]


def mean_interval(values: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    """``(mean, low, high)``: a Student-t 95 % interval of the mean of independent ``values``
    (``(mean, None, None)`` for one value, all None for none).

    >>> [round(x, 3) for x in mean_interval([1.0, 2.0, 3.0, 4.0])]
    [2.5, 0.446, 4.554]
    """
    clean = [float(v) for v in values if v is not None and not math.isnan(v)]
    if not clean:
        return None, None, None
    mean = sum(clean) / len(clean)
    if len(clean) < 2:
        return mean, None, None
    sd = math.sqrt(sum((v - mean) ** 2 for v in clean) / (len(clean) - 1))
    half = student_t(len(clean) - 1) * sd / math.sqrt(len(clean))
    return mean, mean - half, mean + half


def batch_means(
    frame: pl.DataFrame, value: str, *, time: str = "t", batches: int = 20
) -> tuple[float | None, int, float | None, float | None]:
    """The mean of a correlated time series with a 95 % interval from batch means.

    Successive samples of one series (a pool's utilization, say) are strongly correlated, so
    their plain standard error is far too narrow; the means of ``batches`` consecutive time
    slices are nearly independent, and :func:`mean_interval` of those gives the interval.

    Parameters
    ----------
    frame : polars.DataFrame
        The samples: a ``time`` column and a ``value`` column.
    value, time : str
        The columns of the figure and of its sampling time.
    batches : int
        How many equal slices of the span to average separately (20).

    Returns
    -------
    tuple
        ``(mean, n, low, high)``: the mean of every sample, the sample count and the batch
        means' interval; ``(None, 0, None, None)`` for no samples.

    Examples
    --------
    >>> frame = pl.DataFrame({"t": [float(t) for t in range(40)], "u": [0.5] * 40})
    >>> batch_means(frame, "u")
    (0.5, 40, 0.5, 0.5)
    """
    whole(batches, "batches", minimum=2)
    if frame.height == 0:
        return None, 0, None, None
    span = float(frame[time].max()) - float(frame[time].min()) or 1.0  # type: ignore[arg-type]
    sliced = frame.group_by((pl.col(time) - pl.col(time).min()) * batches // (span * 1.000001)).agg(
        pl.col(value).mean()
    )
    _, low, high = mean_interval(sliced[value].to_list())
    return float(frame[value].mean()), frame.height, low, high  # type: ignore[arg-type]
