"""The shocked world against its no-shock control over several seeds
(:func:`whole_flow_seeds`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any

import polars as pl

from toolkit.arguments import ArgumentError, whole
from toolkit.backtest.wholeflow.flow import whole_flow
from toolkit.backtest.wholeflow.result import interactions
from toolkit.backtest.wholeflow.settings import WHOLE_FLOW_METRICS, WholeFlow
from toolkit.progress import progress_bar
from toolkit.scenario import Scenario, load_scenario


def _seed_rows(settings: WholeFlow, scenario: Scenario | str, seed: int) -> list[dict[str, Any]]:
    rows = []
    variants = (
        ("shock", settings),
        ("shock, no liquidations", dataclasses.replace(settings, liquidations=False)),
        ("control", dataclasses.replace(settings, shock=0.0)),
    )
    for name, variant in variants:
        result = whole_flow(variant, scenario, seed=seed, progress=False)
        row: dict[str, Any] = {"run": name, "seed": seed}
        row.update({k: getattr(result.summary, k) for k in WHOLE_FLOW_METRICS})
        for measure, group, value in interactions(result).iter_rows():
            if group == "during" and measure in ("depth_2pct_usd", "swap_slippage_bps"):
                row[f"{measure}_during"] = value
        rows.append(row)
    return rows


def whole_flow_seeds(
    settings: WholeFlow | None = None,
    scenario: Scenario | str = "default",
    *,
    seeds: Sequence[int] = (0, 1, 2),
    executor: Executor | None = None,
    progress: bool = True,
) -> pl.DataFrame:
    """Three runs per seed (same seed: the same arrivals and base path): the shocked world
    (``shock``), the same shock with the liquidators off (``shock, no liquidations``: what their
    sales add is the difference) and the no-shock ``control``, through ``executor`` (anything
    with ``submit``; None runs here): one row per run and seed with the
    :data:`WHOLE_FLOW_METRICS` and the depth and slippage during the wave. :func:`bands` of it
    by ``run`` gives means with confidence bands, so the interaction is a measured difference
    between the runs.

    >>> from toolkit.backtest import bands
    >>> settings = WholeFlow(span_h=0.3, shock_at_share=0.2, shock_h=0.1)
    >>> frame = whole_flow_seeds(settings, seeds=[1, 2])
    >>> bands(frame, ["run"], ["liquidations"])["run"].to_list()
    ['shock', 'shock, no liquidations', 'control']
    """
    settings = WholeFlow() if settings is None else settings
    if not isinstance(settings, WholeFlow):
        raise ArgumentError("settings", "a WholeFlow", type(settings).__name__)
    if not seeds:
        raise ArgumentError("seeds", "at least one seed", seeds)
    checked = [whole(seed, "seeds[]", minimum=0) for seed in seeds]
    scenario = load_scenario(scenario)  # read once, not once per run
    if executor is None:
        bar = progress_bar(checked, desc="whole flow seeds", unit="seed", enabled=progress)
        rows = [row for seed in bar for row in _seed_rows(settings, scenario, seed)]
    else:
        futures = [executor.submit(_seed_rows, settings, scenario, seed) for seed in checked]
        rows = [row for future in futures for row in future.result()]
    order = {name: k for k, name in enumerate(("shock", "shock, no liquidations", "control"))}
    return pl.DataFrame(rows).sort(pl.col("run").replace_strict(order), "seed")
