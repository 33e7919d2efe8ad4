"""The flows traffic plays, their rows fed to the traffic's scheduler as they fall due (each
frame is checked against the scenario and sorted by :mod:`toolkit.flows.checks`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from toolkit.scheduler import Scheduler

__all__ = ["feed_rows"]


def feed_rows(
    scheduler: Scheduler,
    start: float,
    frame: pl.DataFrame,
    handler: Callable[[float, dict[str, Any]], None],
) -> None:
    """Feed ``frame``'s rows (sorted by ``t``) to ``scheduler`` at ``start + t``: ``handler`` gets
    each row as a dict, read from the frame when its turn comes (a day of flow at scale is
    millions of rows: reading them all first would hold the start up for seconds).

    >>> from toolkit.scheduler import Scheduler
    >>> sched = Scheduler(100.0)
    >>> feed_rows(sched, 100.0, pl.DataFrame({"t": [0.0, 2.5], "x": [1, 2]}), print)
    >>> sched.run()
    100.0 {'t': 0.0, 'x': 1}
    102.5 {'t': 2.5, 'x': 2}
    """
    rows = frame.iter_rows(named=True)
    times = (frame["t"].cast(pl.Float64) + start).to_list()
    scheduler.feed(times, lambda at, _: handler(at, next(rows)))
