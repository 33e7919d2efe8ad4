"""``sweep``: replay one flow over a grid of scenario variants through an executor.

Each grid point is an override mapping (see :mod:`toolkit.backtest.scenarios`); its replay is
one task submitted to a ``concurrent.futures.Executor``. The default is a process pool (spawned
workers: forking a process that runs polars threads can deadlock) with one worker per CPU,
or no pool at all for a single point. Any object with an ``Executor``-compatible ``submit``
works, such as ``ThreadPoolExecutor``, a Dask ``Client.get_executor()`` or Ray's executor.

Every replay uses the same seed (common random numbers), and rows come back in grid order,
so the frame does not depend on the executor or on which task finished first.

As with any spawned process pool, a script that calls :func:`sweep` with the default executor
must do so under ``if __name__ == "__main__":`` (notebooks need nothing).
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any

import polars as pl

from toolkit.backtest.replay import replay
from toolkit.backtest.scenarios import OVERRIDE_KEYS, apply_overrides
from toolkit.flows import check_flow
from toolkit.progress import progress_bar
from toolkit.resources.retry import RetryPolicy
from toolkit.scenario import Scenario, load_scenario

__all__ = ["SWEEP_METRICS", "grid_points", "run_points", "sweep", "sweep_frame", "sweep_point"]

#: Scalar metrics of every sweep row (plus ``fee_revenue_<TOKEN>`` and ``volume_<TOKEN>``).
SWEEP_METRICS: tuple[str, ...] = (
    "requests",
    "attempts",
    "filled",
    "expired",
    "no_capacity",
    "no_route",
    "fill_share",
    "no_capacity_share",
    "rfq_404_share",
    "mean_attempts",
    "peak_utilization",
    "mean_utilization",
    "transfers",
    "rebalancing_cost_usd",
    "rebalancing_cost_bps",
    "annualised_return_pct",
    "net_annualised_return_pct",
)


def _check_grid(grid: object) -> list[tuple[str, list[Any]]]:
    if not isinstance(grid, Mapping):
        raise ValueError("grid: must be a mapping of override name to a sequence of values")
    if not grid:
        raise ValueError(
            f"grid: is empty; give at least one of {', '.join(OVERRIDE_KEYS)} with values"
        )
    axes = []
    for key, values in grid.items():
        if key not in OVERRIDE_KEYS:
            raise ValueError(f"grid: unknown key {key!r}; known: {', '.join(OVERRIDE_KEYS)}")
        if isinstance(values, str | bytes) or not isinstance(values, Sequence):
            raise ValueError(f"grid[{key!r}]: must be a sequence of values")
        if not values:
            raise ValueError(f"grid[{key!r}]: is empty; give at least one value")
        axes.append((key, list(values)))
    return axes


def sweep_point(
    flow: pl.DataFrame,
    scenario: Scenario | str,
    overrides: Mapping[str, Any],
    seed: int = 0,
    retry: RetryPolicy | None = None,
) -> dict[str, Any]:
    """Replay one grid point and return its summary metrics as a flat dict (one sweep row).

    >>> from toolkit.backtest import generate_flow
    >>> row = sweep_point(generate_flow("single-pool", span_h=0.1, seed=1), "single-pool", {})
    >>> row["requests"] > 0, 0.0 <= row["fill_share"] <= 1.0
    (True, True)
    """
    s = replay(flow, scenario, seed=seed, retry=retry, overrides=overrides).summary
    # The sweep's columns keep their names (SWEEP_METRICS order) whatever the summary's fields.
    row: dict[str, Any] = {
        "requests": s.requests,
        "attempts": s.attempts,
        "filled": s.filled,
        "expired": s.expired,
        "no_capacity": s.no_capacity,
        "no_route": s.no_route,
        "fill_share": s.fill_share,
        "no_capacity_share": s.no_capacity_share,
        "rfq_404_share": s.rfq_404_share,
        "mean_attempts": s.mean_attempts,
    }
    peaks = list(s.peak_utilization_share.values())
    means = list(s.mean_utilization_share.values())
    row["peak_utilization"] = max(peaks) if peaks else 0.0
    row["mean_utilization"] = math.fsum(means) / len(means) if means else 0.0
    row["transfers"] = s.transfers
    row["rebalancing_cost_usd"] = s.rebalancing_cost_usd
    row["rebalancing_cost_bps"] = s.rebalancing_cost_bps
    row["annualised_return_pct"] = s.annualised_return_pct
    row["net_annualised_return_pct"] = s.net_annualised_return_pct
    for symbol in sorted(s.fee_revenue_by_token):
        row[f"fee_revenue_{symbol}"] = s.fee_revenue_by_token[symbol]
        row[f"volume_{symbol}"] = s.volume_by_token[symbol]
    return row


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity (macOS, Windows)
        return os.cpu_count() or 1


def _gather(futures: list[Any], bar: Any) -> list[dict[str, Any]]:
    """The futures' results in submission order, ticking ``bar`` as each one finishes."""
    for future in futures:
        future.add_done_callback(lambda _: bar.update(1))
    return [future.result() for future in futures]


#: One replay of a sweep: the flow, the scenario, the point's overrides, the seed, the retry policy.
Task = tuple[pl.DataFrame, Scenario, Mapping[str, Any], int, RetryPolicy | None]


def grid_points(scenario: Scenario, grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The grid's points (its Cartesian product, in the grid's order), each checked against
    ``scenario`` here, in the caller, rather than inside a worker."""
    axes = _check_grid(grid)
    points = [
        dict(zip([k for k, _ in axes], combo, strict=True))
        for combo in itertools.product(*(values for _, values in axes))
    ]
    for point in points:
        apply_overrides(scenario, point)
    return points


def run_points(tasks: Sequence[Task], executor: Executor | None, bar: Any) -> list[dict[str, Any]]:
    """:func:`sweep_point` of every task, in the tasks' order: here for a single task, else
    through ``executor`` or, without one, through a single process pool for all of them (one
    pool, not one per sweep: a spawned worker costs about a second and a half of imports, more
    than a short replay)."""
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise ValueError("executor: must have a submit() method like concurrent.futures.Executor")
    if executor is None and len(tasks) == 1:
        rows = [sweep_point(*tasks[0])]
        bar.update(1)
        return rows
    if executor is not None:
        return _gather([executor.submit(sweep_point, *task) for task in tasks], bar)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(len(tasks), _cpus()), mp_context=context) as pool:
        return _gather([pool.submit(sweep_point, *task) for task in tasks], bar)


def sweep_frame(
    points: Sequence[Mapping[str, Any]], rows: Sequence[dict[str, Any]]
) -> pl.DataFrame:
    """One row per point: the grid's keys, then the :func:`sweep_point` metrics."""
    columns: dict[str, pl.Series] = {}
    for key in points[0]:
        columns[key] = pl.Series(key, [p[key] for p in points], strict=False)
    for name in rows[0]:
        values = [row[name] for row in rows]
        dtype = pl.Int128 if name.startswith(("fee_revenue_", "volume_")) else None
        columns[name] = pl.Series(name, values, dtype=dtype)
    return pl.DataFrame(list(columns.values()))


def sweep(
    flow: pl.DataFrame,
    scenario: Scenario | str,
    grid: Mapping[str, Sequence[Any]],
    *,
    executor: Executor | None = None,
    seed: int = 0,
    retry: RetryPolicy | None = None,
    progress: bool = True,
) -> pl.DataFrame:
    """Replay ``flow`` at every point of ``grid`` and return one row per point.

    ``grid`` maps override names (``pool_scale``, ``fee_scale``, ``quote_s``,
    ``order_s``, any other window, ``rebalancing.policy`` and the other ``rebalancing.*`` keys)
    to the values to try; points are the Cartesian
    product in the grid's order. A progress bar (``tqdm.auto``: terminal or notebook) counts
    the points as they finish; ``progress=False`` (or ``TQDM_DISABLE=1``) hides it. Columns:
    one per grid key, then :data:`SWEEP_METRICS` and
    ``fee_revenue_<TOKEN>`` / ``volume_<TOKEN>`` (smallest units).

    >>> from toolkit.backtest import generate_flow
    >>> flow = generate_flow("single-pool", span_h=0.5, rate_per_s=1.0, seed=5)
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(2) as pool:  # or no executor: a process pool, one worker per CPU
    ...     frame = sweep(flow, "single-pool", {"pool_scale": [0.5, 2.0]}, executor=pool)
    >>> frame["pool_scale"].to_list(), frame["no_capacity"][0] >= frame["no_capacity"][1]
    ([0.5, 2.0], True)
    """
    base = load_scenario(scenario)
    check_flow(flow, base)
    points = grid_points(base, grid)
    bar = progress_bar(total=len(points), desc="sweep", unit="point", enabled=progress)
    rows = run_points([(flow, base, p, seed, retry) for p in points], executor, bar)
    bar.close()
    return sweep_frame(points, rows)
