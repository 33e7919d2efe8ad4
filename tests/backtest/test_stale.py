"""The stale-route schedule: delays rounded up to blocks, trials quoted every stride, each
executed once per delay, clustered by overlap."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest

from toolkit.arguments import ArgumentError
from toolkit.backtest.stale import TrialPlan
from toolkit.resources import RouteResult


def test_delays_round_up_to_whole_blocks_and_the_stride_defaults_to_the_longest() -> None:
    plan = TrialPlan.of([1, 5, 12], 2.0, 3, None)
    assert dict(plan.steps) == {1: 1.0, 3: 5.0, 6: 12.0}
    assert (plan.stride, plan.longest, plan.blocks) == (6, 6, 18)
    assert TrialPlan.of([12], 12.0, 4, 2).stride == 2


@pytest.mark.parametrize(
    ("delays", "stride", "field"),
    [([2, 0], None, r"delays_s\[\]"), ([2], 0, "stride_blocks")],
)
def test_bad_delays_or_stride_name_their_field(
    delays: list[float], stride: int | None, field: str
) -> None:
    with pytest.raises(ArgumentError, match=field):
        TrialPlan.of(delays, 2.0, 3, stride)


def test_overlapping_trials_execute_once_per_delay_at_the_right_time() -> None:
    plan = TrialPlan.of([2, 6], 2.0, 4, 1)  # a trial every block, executed 1 and 3 blocks later
    clock = [0.0]
    quoted: list[float] = []

    def move() -> float:
        clock[0] += 2.0
        return clock[0]

    def quote() -> RouteResult:
        quoted.append(clock[0])
        return cast(RouteResult, SimpleNamespace(amount_out_int=100 + len(quoted)))

    def execute(route: RouteResult, now: float) -> int | None:
        return int(now)  # when it ran, to check the delay

    rows = plan.run(quote, move, execute)
    assert quoted == [0.0, 2.0, 4.0, 6.0]
    assert len(rows) == 8
    for row in rows:
        trial = int(str(row["trial"]))
        assert row["quoted_out"] == 101 + trial
        assert row["executed_out"] == quoted[trial] + float(str(row["delay_s"]))
        assert row["cluster"] == trial // 3  # quoted within one longest delay (3 blocks)
