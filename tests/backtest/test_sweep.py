"""Sweeps: one row per grid point, the same frame whatever executor runs the replays."""

from __future__ import annotations

from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from toolkit.backtest import Fixed, apply_overrides, generate_flow, sweep
from toolkit.scenario import load_scenario

UNIT = 1_000_000_000


def _flow() -> pl.DataFrame:
    return generate_flow(
        "single-pool", span_h=0.5, rate_per_s=0.8, seed=4, sizes={"USDC": Fixed(UNIT)},
        convert_probability=0.3,
    )  # fmt: skip


GRID: dict[str, list[Any]] = {"pool_scale": [0.5, 1.0, 2.0], "quote_s": [10, 30]}


def test_default_executor_and_thread_pool_give_identical_frames() -> None:
    flow = _flow()
    by_process = sweep(flow, "single-pool", GRID, seed=3)
    with ThreadPoolExecutor(max_workers=2) as pool:
        by_thread = sweep(flow, "single-pool", GRID, executor=pool, seed=3)
    assert_frame_equal(by_process, by_thread)
    assert by_process.height == 6
    assert by_process.columns[:2] == ["pool_scale", "quote_s"]
    assert by_process.select("pool_scale", "quote_s").rows() == [
        (0.5, 10), (0.5, 30), (1.0, 10), (1.0, 30), (2.0, 10), (2.0, 30),
    ]  # fmt: skip
    assert (by_process["requests"] == flow.height).all()


class _Recorder(Executor):
    """An inline executor that records what it ran (any submit()-compatible object works)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def submit(self, fn, /, *args, **kwargs):
        self.calls.append(args[2])
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


def test_injected_executor_runs_every_point_and_metrics_move_the_right_way() -> None:
    flow = _flow()
    recorder = _Recorder()
    frame = sweep(flow, "single-pool", GRID, executor=recorder)
    assert recorder.calls == [
        {"pool_scale": s, "quote_s": q} for s in (0.5, 1.0, 2.0) for q in (10, 30)
    ]
    # Larger pools and shorter quote windows refuse fewer RFQs.
    short = frame.filter(pl.col("quote_s") == 10)["rfq_404_share"].to_list()
    assert short[0] > short[1] >= short[2]
    for scale in (0.5, 1.0, 2.0):
        pair = frame.filter(pl.col("pool_scale") == scale)["no_capacity"].to_list()
        assert pair[0] <= pair[1]
    assert frame["fee_revenue_USDC"].dtype == pl.Int128


def test_single_point_runs_inline_and_fee_scale_changes_revenue() -> None:
    flow = generate_flow("default", span_h=0.5, rate_per_s=1.0, seed=2)
    one = sweep(flow, "default", {"fee_scale": [2.0]})
    base = sweep(flow, "default", {"fee_scale": [1.0]})
    assert one.height == 1
    assert one["fee_revenue_USDC"][0] > base["fee_revenue_USDC"][0]


def test_overrides_build_valid_variants() -> None:
    s = load_scenario("default")
    v = apply_overrides(s, {"pool_scale": 1.1, "fee_scale": 1.5, "order_s": 90})
    assert v.pools[0].balance == s.pools[0].balance * 11 // 10
    # 5 bps * 1.5 = 7.5, rounded half up; 3 * 1.5 = 4.5 -> 5.
    assert [t.fee_bps for t in v.routes[0].fee_tiers] == [8, 5]
    assert v.windows.order_s == 90 and v.windows.quote_s == 15
    assert apply_overrides(s, None) is s and apply_overrides(s, {}) is s


def test_a_sweep_on_a_local_dask_cluster_matches_the_single_process_run() -> None:
    from distributed import Client, LocalCluster

    flow = generate_flow("single-pool", span_h=0.3, rate_per_s=1.0, seed=5)
    grid = {"pool_scale": [0.5, 1.0, 2.0]}
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        on_dask = sweep(flow, "single-pool", grid, executor=client.get_executor())
    with ThreadPoolExecutor(1) as pool:
        local = sweep(flow, "single-pool", grid, executor=pool)
    assert_frame_equal(on_dask, local)


def test_a_sweep_shows_a_progress_bar_unless_told_not_to(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    monkeypatch.setenv("TOOLKIT_PROGRESS", "1")  # asked for: pytest's stderr is no terminal
    flow = generate_flow("single-pool", span_h=0.05, rate_per_s=1.0, seed=1)
    with ThreadPoolExecutor(1) as pool:
        sweep(flow, "single-pool", {"pool_scale": [1.0, 2.0]}, executor=pool)
        assert "sweep" in capsys.readouterr().err
        sweep(flow, "single-pool", {"pool_scale": [1.0, 2.0]}, executor=pool, progress=False)
        assert capsys.readouterr().err == ""
