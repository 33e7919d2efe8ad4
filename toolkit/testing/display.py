"""Plain-text tables that print the same on every machine, for regression notebooks."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import polars as pl

__all__ = ["format_frame"]


def _cell(value: object, decimals: int) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = f"{value:.{decimals}f}"
        # "-0.000" and "0.000" are the same number shown to this precision.
        return text[1:] if text.startswith("-") and float(text) == 0 else text
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, Decimal | int | str | dt.date | dt.time | dt.timedelta):
        return str(value)
    raise TypeError(f"format_frame: cannot show a value of type {type(value).__name__}")


def format_frame(frame: pl.DataFrame, *, decimals: int = 6) -> str:
    """``frame`` as a fixed-width text table, independent of polars' display settings.

    Floats are rounded to ``decimals`` places (``-0.0`` shows as ``0.0``), integers and amounts
    are exact, numbers are right-aligned and text left-aligned. Every row is shown. Regression
    notebooks print this rather than the frame's repr, which depends on ``pl.Config``, the
    environment and the polars version.

    >>> frame = pl.DataFrame({"pool": ["a", "bb"], "amount": [10**20, 5], "u": [0.5, 1 / 3]})
    >>> print(format_frame(frame, decimals=3))
    pool                 amount      u
    a     100000000000000000000  0.500
    bb                        5  0.333
    """
    if not isinstance(frame, pl.DataFrame):
        raise TypeError(f"frame: expected a polars DataFrame, got {type(frame).__name__}")
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= 17:
        raise ValueError(f"decimals: must be an integer from 0 to 17, got {decimals!r}")
    columns = []
    for name in frame.columns:
        series = frame[name]
        cells = [_cell(value, decimals) for value in series.to_list()]
        width = max([len(name), *map(len, cells)])
        right = series.dtype.is_numeric()
        align = str.rjust if right else str.ljust
        columns.append([align(name, width), *(align(cell, width) for cell in cells)])
    lines = ["  ".join(parts).rstrip() for parts in zip(*columns, strict=True)] if columns else []
    return "\n".join(lines)
