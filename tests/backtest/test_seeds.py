"""Seeds, not a seed: one sweep per seed's flow, and means with Student-t bands."""

from __future__ import annotations

import math
import statistics
from concurrent.futures import ThreadPoolExecutor

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from toolkit.arguments import ArgumentError
from toolkit.backtest import generate_flow, sweep
from toolkit.backtest.seeds import bands, student_t, sweep_seeds


def test_sweep_seeds_is_one_sweep_per_seed_of_that_seeds_flow() -> None:
    # Threads, not the default spawned process pool (three pools of fresh interpreters): the
    # frame does not depend on the executor (tests/backtest/test_sweep.py proves that).
    with ThreadPoolExecutor(2) as pool:
        frame = sweep_seeds(
            "single-pool", {"pool_scale": [0.5, 2.0]}, seeds=[3, 4], span_h=0.2, executor=pool
        )
        flow = generate_flow("single-pool", span_h=0.2, seed=4)
        alone = sweep(flow, "single-pool", {"pool_scale": [0.5, 2.0]}, seed=4, executor=pool)
    assert frame.columns[:2] == ["seed", "pool_scale"]
    assert frame.height == 4
    assert_frame_equal(frame.filter(seed=4).drop("seed"), alone)


def test_bands_are_the_mean_and_a_student_t_interval() -> None:
    frame = pl.DataFrame({"k": ["a"] * 4 + ["b"] * 2, "m": [1.0, 2.0, 4.0, 5.0, 10.0, 10.0]})
    a, b = bands(frame, ["k"], ["m"]).iter_rows(named=True)
    sd = statistics.stdev([1.0, 2.0, 4.0, 5.0])
    half = 3.182 * sd / math.sqrt(4)
    assert (a["seeds"], a["m_mean"]) == (4, 3.0)
    assert a["m_sd"] == pytest.approx(sd)
    assert (a["m_low"], a["m_high"]) == (pytest.approx(3.0 - half), pytest.approx(3.0 + half))
    assert (b["m_low"], b["m_high"]) == (10.0, 10.0)  # no spread, no band
    assert student_t(1) == 12.706 and student_t(30) == 2.042 and student_t(31) == 1.96


def test_bad_input_names_the_field() -> None:
    with pytest.raises(ArgumentError, match="keys/metrics: must be columns of the frame"):
        bands(pl.DataFrame({"k": [1]}), ["k"], ["nope"])
    with pytest.raises(ArgumentError, match="seeds: must be at least one seed"):
        sweep_seeds("single-pool", {"pool_scale": [1.0]}, seeds=[])
