"""Frame assertions with tolerances, on top of ``polars.testing.assert_frame_equal``.

polars decides whether two frames are equal; this module prepares the frames (sorting by key
columns, dropping ignored ones, choosing which columns must match exactly) and, when polars
says they differ, finds the first differing column and row so that the failure reads
``column 'fee_bps', row 3 (run_id='r1', t=30.0): left 5.2 != right 5.0``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl
from polars.testing import assert_frame_equal

__all__ = ["assert_frame_close"]

_ROW = "__assert_frame_close_row__"


def _names(value: object, argument: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{argument}: must be a column name or a sequence of column names")
    if len(set(value)) != len(value):
        raise ValueError(f"{argument}: column names must be distinct, got {list(value)}")
    return tuple(value)


def _tolerance(value: object, argument: str) -> float:
    ok = not isinstance(value, bool) and isinstance(value, int | float)
    if not ok or not math.isfinite(value) or value < 0:  # type: ignore[operator, arg-type]
        raise ValueError(f"{argument}: must be a finite number >= 0, got {value!r}")
    return float(value)  # type: ignore[arg-type]


def _is_exact_type(dtype: pl.DataType) -> bool:
    # Amounts: integers of any width and scale-0 decimals are exact quantities.
    return dtype.is_integer() or isinstance(dtype, pl.Decimal)


def assert_frame_close(
    left: pl.DataFrame,
    right: pl.DataFrame,
    *,
    by: str | Sequence[str] | None = None,
    rel_tol: float = 1e-9,
    abs_tol: float = 0.0,
    exact: str | Sequence[str] | None = None,
    ignore: str | Sequence[str] | None = None,
    check_dtypes: bool = True,
) -> None:
    """Assert that two polars frames hold the same rows, floats within a tolerance.

    - ``by``: key columns; both frames are sorted by them first, so row order does not matter.
    - ``rel_tol``, ``abs_tol``: floats ``a`` and ``b`` match when
      ``|a − b| <= max(rel_tol · max(|a|, |b|), abs_tol)`` (``math.isclose``; NaN matches NaN,
      null matches null).
    - ``exact``: columns compared exactly. By default every integer (and decimal) column,
      i.e. the amounts. Given explicitly, only those columns are exact and integer columns left
      out are compared as floats within the tolerance.
    - ``ignore``: columns left out of the comparison (they may exist in one frame only).
    - ``check_dtypes``: also require the same dtypes (``Int64`` against ``Int128`` fails).

    Column order is not compared. Strings, booleans, dates and nested columns always compare
    exactly. The ``AssertionError`` names the first differing column and row (with its key
    values when ``by`` is given) and both values; polars' own report is chained to it.

    >>> left = pl.DataFrame({"route": ["a", "b"], "amount": [10, 20], "fee": [5.0, 3.0]})
    >>> right = pl.DataFrame({"route": ["b", "a"], "amount": [20, 10], "fee": [3.0 + 1e-12, 5.0]})
    >>> assert_frame_close(left, right, by="route")
    """
    for name, frame in (("left", left), ("right", right)):
        if not isinstance(frame, pl.DataFrame):
            raise TypeError(f"{name}: expected a polars DataFrame, got {type(frame).__name__}")
    keys = _names(by, "by")
    exact_names = None if exact is None else _names(exact, "exact")
    ignored = _names(ignore, "ignore")
    rel = _tolerance(rel_tol, "rel_tol")
    absolute = _tolerance(abs_tol, "abs_tol")
    left, right = _aligned(left, right, keys, exact_names, ignored, check_dtypes)
    if keys:
        left = left.sort(keys, nulls_last=True, maintain_order=True)
        right = right.sort(keys, nulls_last=True, maintain_order=True)
    _compare(left, right, keys, exact_names, rel, absolute)


def _aligned(
    left: pl.DataFrame,
    right: pl.DataFrame,
    keys: tuple[str, ...],
    exact_names: tuple[str, ...] | None,
    ignored: tuple[str, ...],
    check_dtypes: bool,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Both frames without the ignored columns and with the same column order, once the
    arguments name real columns and the frames have the same columns, height (and dtypes)."""
    unknown = [c for c in ignored if c not in left.columns and c not in right.columns]
    if unknown:
        raise ValueError(f"ignore: no column {unknown[0]!r} in either frame")
    left = left.drop([c for c in ignored if c in left.columns])
    right = right.drop([c for c in ignored if c in right.columns])
    for argument, names in (("by", keys), ("exact", exact_names or ())):
        for name in names:
            if name in ignored:
                raise ValueError(f"{argument}: column {name!r} is also in ignore")
            if name not in left.columns or name not in right.columns:
                side = "left" if name not in left.columns else "right"
                raise ValueError(f"{argument}: no column {name!r} in the {side} frame")

    only_left = [c for c in left.columns if c not in right.columns]
    only_right = [c for c in right.columns if c not in left.columns]
    if only_left or only_right:
        parts = []
        if only_left:
            parts.append(f"only in left: {', '.join(only_left)}")
        if only_right:
            parts.append(f"only in right: {', '.join(only_right)}")
        raise AssertionError(f"frames have different columns ({'; '.join(parts)})")
    right = right.select(left.columns)
    if left.height != right.height:
        raise AssertionError(
            f"frames have different heights: left {left.height} rows, right {right.height} rows"
        )
    if check_dtypes:
        for name in left.columns:
            if left.schema[name] != right.schema[name]:
                raise AssertionError(
                    f"column {name!r}: dtypes differ: left {left.schema[name]}, "
                    f"right {right.schema[name]}"
                )
    return left, right


def _compare(
    left: pl.DataFrame,
    right: pl.DataFrame,
    keys: tuple[str, ...],
    exact_names: tuple[str, ...] | None,
    rel: float,
    absolute: float,
) -> None:
    if exact_names is None:
        exact_names = tuple(c for c in left.columns if _is_exact_type(left.schema[c]))
    exact_cols = [c for c in left.columns if c in exact_names]
    loose_cols = [c for c in left.columns if c not in exact_names]
    # Integer columns a caller chose not to compare exactly become floats, which polars
    # compares within the tolerance (it always compares integers exactly).
    casts = [
        pl.col(c).cast(pl.Float64)
        for c in loose_cols
        if _is_exact_type(left.schema[c]) or _is_exact_type(right.schema[c])
    ]
    loose_left = left.select(loose_cols).with_columns(casts)
    loose_right = right.select(loose_cols).with_columns(casts)
    try:
        assert_frame_equal(
            left.select(exact_cols), right.select(exact_cols), check_exact=True, check_dtypes=False
        )
        assert_frame_equal(
            loose_left,
            loose_right,
            check_exact=False,
            rel_tol=rel,
            abs_tol=absolute,
            check_dtypes=False,
        )
    except AssertionError as exc:
        found = _first_difference(left, right, exact_cols, loose_left, loose_right, rel, absolute)
        if found is None:
            raise AssertionError("frames differ (see polars' report below)") from exc
        name, row, count = found
        at = f"row {row}"
        if keys:
            at += " (" + ", ".join(f"{k}={left[k][row]!r}" for k in keys) + ")"
        how = (
            "compared exactly"
            if name in exact_cols
            else f"compared with rel_tol={rel!r}, abs_tol={absolute!r}"
        )
        message = (
            f"column {name!r}, {at}: left {left[name][row]!r} != right {right[name][row]!r} "
            f"({how}; {count} of {left.height} rows differ"
        )
        message += f"; rows sorted by {', '.join(keys)})" if keys else ")"
        raise AssertionError(message) from exc


def _first_difference(
    left: pl.DataFrame,
    right: pl.DataFrame,
    exact_cols: list[str],
    loose_left: pl.DataFrame,
    loose_right: pl.DataFrame,
    rel: float,
    absolute: float,
) -> tuple[str, int, int] | None:
    """The first column (in column order) that differs: its name, first row, rows differing."""
    for name in left.columns:
        if name in exact_cols:
            differs = _exact_mismatch(left[name], right[name])
        else:
            a, b = loose_left[name], loose_right[name]
            close = a.dtype.is_float() and b.dtype.is_float()
            differs = _close_mismatch(a, b, rel, absolute) if close else _exact_mismatch(a, b)
        count = int(differs.sum())
        if count:
            return name, int(differs.arg_max() or 0), count
    return None


def _exact_mismatch(a: pl.Series, b: pl.Series) -> pl.Series:
    frame = pl.DataFrame({"a": a, "b": b}, strict=False)
    differs = pl.col("a").ne_missing(pl.col("b"))
    if a.dtype.is_float() and b.dtype.is_float():
        differs = differs & ~(pl.col("a").is_nan() & pl.col("b").is_nan())
    return frame.select(differs.fill_null(True).alias("d"))["d"]


def _close_mismatch(a: pl.Series, b: pl.Series, rel: float, absolute: float) -> pl.Series:
    x, y = pl.col("a"), pl.col("b")
    bound = pl.max_horizontal(pl.max_horizontal(x.abs(), y.abs()) * rel, pl.lit(absolute))
    same = (
        (x.is_null() & y.is_null())
        | (x.is_nan() & y.is_nan())
        | (x == y)
        | ((x - y).abs() <= bound)
    )
    frame = pl.DataFrame({"a": a, "b": b})
    return frame.select((~same.fill_null(False)).alias("d"))["d"]
