"""The flows traffic plays merged into one time-ordered schedule as their rows fall due (each
frame is checked against the scenario and sorted by :mod:`toolkit.flows.checks`)."""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

import polars as pl

__all__ = ["merge_flows"]


def merge_flows(
    start: float, flow: pl.DataFrame, swaps: pl.DataFrame, credit: pl.DataFrame
) -> Iterator[tuple[float, int, str, Any]]:
    """The flows' rows as ``(due, 0, kind, row)`` in time order, times counted from ``start``,
    each read from its frame when its turn comes (a day of flow at scale is millions of rows:
    heaping them all first would hold the start up for seconds)."""

    def rows(kind: str, frame: pl.DataFrame) -> Iterator[tuple[float, int, str, Any]]:
        for row in frame.iter_rows(named=True):
            yield start + float(row["t"]), 0, kind, row

    streams = [rows("rfq", flow), rows("swap", swaps), rows("credit", credit)]
    return heapq.merge(*streams, key=lambda item: item[0])
