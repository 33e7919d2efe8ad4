"""Seeds, not a seed: run a backtest or a sweep over several seeds and report each metric's mean
with a confidence band.

One seed is one draw of the flow (arrivals, sizes, conversions) and of the replay's randomness;
a difference between two settings is only worth reporting when it is larger than the spread
across seeds. :func:`sweep_seeds` regenerates the flow for every seed and sweeps it (every
setting of one seed sees the same flow: common random numbers), and :func:`bands` reduces the
rows to the mean, the standard deviation and a Student-t confidence interval per setting.

Any ``concurrent.futures`` executor runs the replays (the default is a process pool, see
:func:`~toolkit.backtest.sweep`); threads suit a short example:

>>> from concurrent.futures import ThreadPoolExecutor
>>> with ThreadPoolExecutor(2) as pool:
...     frame = sweep_seeds("single-pool", {"pool_scale": [0.5, 2.0]}, seeds=[0, 1, 2],
...                         span_h=0.1, executor=pool, progress=False)
>>> summary = bands(frame, ["pool_scale"], ["rfq_404_share"])
>>> summary.columns[:4]
['pool_scale', 'seeds', 'rfq_404_share_mean', 'rfq_404_share_sd']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

import polars as pl

from toolkit.arguments import ArgumentError, number, whole
from toolkit.backtest.sweep import Task, grid_points, run_points, sweep_frame
from toolkit.flows import generate_flow
from toolkit.models.intervals import student_t
from toolkit.progress import progress_bar
from toolkit.scenario import Scenario, load_scenario

__all__ = ["bands", "student_t", "sweep_seeds"]


def sweep_seeds(
    scenario: Scenario | str,
    grid: Mapping[str, Sequence[Any]],
    *,
    seeds: Sequence[int],
    span_h: float = 24.0,
    rate_per_s: float = 1.0,
    executor: Executor | None = None,
    progress: bool = True,
) -> pl.DataFrame:
    """:func:`toolkit.backtest.sweep` of a freshly generated flow per seed; one row per seed
    and grid point, with a ``seed`` column first."""
    if not seeds:
        raise ArgumentError("seeds", "at least one seed", seeds)
    s = load_scenario(scenario)
    number(span_h, "span_h", above=0)
    checked = [whole(seed, "seed", minimum=0) for seed in seeds]
    points = grid_points(s, grid)
    flows = [generate_flow(s, span_h=span_h, rate_per_s=rate_per_s, seed=seed) for seed in checked]
    # Every (seed, point) replay goes to one executor at once: no pool per seed, no seed waiting
    # for the slowest point of the one before.
    tasks: list[Task] = [
        (flow, s, p, seed, None) for seed, flow in zip(checked, flows, strict=True) for p in points
    ]
    bar = progress_bar(total=len(tasks), desc="sweep seeds", unit="point", enabled=progress)
    rows = run_points(tasks, executor, bar)
    bar.close()
    n = len(points)
    frames = [
        sweep_frame(points, rows[k * n : (k + 1) * n]).select(pl.lit(seed).alias("seed"), pl.all())
        for k, seed in enumerate(checked)
    ]
    return pl.concat(frames, how="diagonal_relaxed")


def bands(frame: pl.DataFrame, keys: Sequence[str], metrics: Sequence[str]) -> pl.DataFrame:
    """Per setting (``keys``): the number of seeds, and per metric its mean, standard deviation
    and 95 % confidence interval of the mean (``_low``, ``_high``; Student t, so a handful of
    seeds gives an honest, wide band).

    >>> frame = pl.DataFrame({"k": [1, 1, 1], "m": [1.0, 2.0, 3.0]})
    >>> [round(v, 3) for v in bands(frame, ["k"], ["m"]).row(0)]
    [1, 3, 2.0, 1.0, -0.484, 4.484]
    """
    unknown = [c for c in (*keys, *metrics) if c not in frame.columns]
    if unknown:
        raise ArgumentError("keys/metrics", "columns of the frame", unknown)
    aggregations = [pl.len().alias("seeds")]
    for m in metrics:
        aggregations += [pl.col(m).mean().alias(f"{m}_mean"), pl.col(m).std().alias(f"{m}_sd")]
    summary = frame.group_by(keys, maintain_order=True).agg(aggregations)
    factor = pl.Series(
        "_factor", [student_t(max(1, n - 1)) / math.sqrt(n) for n in summary["seeds"]]
    )
    return (
        summary.with_columns(factor)
        .with_columns(
            [
                expr
                for m in metrics
                for expr in (
                    (pl.col(f"{m}_mean") - pl.col(f"{m}_sd") * pl.col("_factor")).alias(f"{m}_low"),
                    (pl.col(f"{m}_mean") + pl.col(f"{m}_sd") * pl.col("_factor")).alias(
                        f"{m}_high"
                    ),
                )
            ]
        )
        .drop("_factor")
    )
