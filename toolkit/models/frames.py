"""Input checks shared by the frame models: required columns, dtype families, group keys.

Every public model function calls :func:`prepare` first, so a frame with a missing or
mistyped column fails with a message naming the function and the columns, before polars
is asked to do anything with it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

import polars as pl

Kind = Literal["amount", "int", "float", "str", "datetime"]

#: Output dtype each kind is normalised to. Amounts are exact 128-bit integers; times are
#: UTC microseconds, as the store returns them.
KIND_DTYPE: dict[Kind, pl.DataType] = {
    "amount": pl.Int128(),
    "int": pl.Int64(),
    "float": pl.Float64(),
    "str": pl.String(),
    "datetime": pl.Datetime("us", "UTC"),
}

_KIND_RULE: dict[Kind, str] = {
    "amount": "exact integers (Int128, or Decimal with scale 0)",
    "int": "integers",
    "float": "numbers",
    "str": "strings",
    "datetime": "datetimes",
}

_ALL = "__all_rows__"

ROUTE: tuple[str, ...] = ("src_chain", "dst_chain", "token", "quote_type")
"""Default grouping of RFQ observations: one priced route and quote type."""


def prepare(frame: object, func: str, spec: Mapping[str, Kind]) -> pl.DataFrame:
    """Check that ``frame`` holds the columns of ``spec`` and normalise their dtypes.

    Columns outside ``spec`` are kept unchanged. All-null columns (``pl.Null``, as built from
    empty lists) are cast to the kind's dtype so empty inputs give typed empty outputs.
    """
    if not isinstance(frame, pl.DataFrame):
        raise TypeError(f"{func}: expected a polars DataFrame, got {type(frame).__name__}")
    missing = [name for name in spec if name not in frame.columns]
    if missing:
        raise ValueError(f"{func}: missing columns: {', '.join(missing)}")
    casts: list[pl.Expr] = []
    schema = frame.schema
    for name, kind in spec.items():
        dtype = schema[name]
        if not _accepts(kind, dtype):
            raise ValueError(f"{func}: column {name!r} must hold {_KIND_RULE[kind]}, got {dtype}")
        if dtype != KIND_DTYPE[kind]:  # a frame built with the models' dtypes needs no pass
            casts.append(_normalise(pl.col(name), kind, dtype))
    normalised = frame.with_columns(casts) if casts else frame
    amounts = [name for name, kind in spec.items() if kind == "amount"]
    if amounts and normalised.height:
        negative = normalised.select((pl.col(amounts) < 0).any())
        bad = [name for name in amounts if negative[name][0]]
        if bad:
            raise ValueError(f"{func}: column {bad[0]!r} must not hold negative amounts")
    return normalised


def check_keys(frame: pl.DataFrame, func: str, by: str | Sequence[str]) -> list[str]:
    """Validate a ``by=`` argument (one name or a sequence of names) against ``frame``."""
    keys = [by] if isinstance(by, str) else list(by)
    if not all(isinstance(key, str) for key in keys):
        raise TypeError(f"{func}: by: must be a column name or a sequence of column names")
    if len(set(keys)) != len(keys):
        raise ValueError(f"{func}: by: column names must be distinct, got {keys}")
    missing = [key for key in keys if key not in frame.columns]
    if missing:
        raise ValueError(f"{func}: missing columns: {', '.join(missing)} (named in by)")
    return keys


_DURATION_PART = re.compile(r"(\d+)(ns|us|ms|s|m|h|d|w)")
_DURATION = re.compile(r"(?:\d+(?:ns|us|ms|s|m|h|d|w))+")
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "w": 604800.0,
}


def duration_seconds(every: object, name: str, func: str) -> float:
    """Length in seconds of a polars duration string with fixed-length units only.

    Calendar units (``mo``, ``y``) are refused: their length varies, so a rate per window
    would depend on the month.
    """
    if not isinstance(every, str) or not _DURATION.fullmatch(every):
        raise ValueError(
            f"{func}: {name}: must be a duration such as '30s', '1m' or '1h30m' "
            f"(units ns, us, ms, s, m, h, d, w), got {every!r}"
        )
    parts = _DURATION_PART.findall(every)
    seconds = sum(int(count) * _UNIT_SECONDS[unit] for count, unit in parts)
    if seconds <= 0:
        raise ValueError(f"{func}: {name}: must be a positive duration, got {every!r}")
    return seconds


def aggregate(frame: pl.DataFrame, keys: list[str], aggs: Sequence[pl.Expr]) -> pl.DataFrame:
    """``group_by(keys).agg(aggs)`` sorted by the keys; no keys means one group of all rows.

    An empty frame gives an empty result (a plain ``select`` of aggregates would give one row
    of nulls), with the dtypes the aggregates have on data.
    """
    if keys:
        return frame.group_by(keys).agg(aggs).sort(keys, nulls_last=True)
    whole = frame.with_columns(pl.lit(0).alias(_ALL))
    return whole.group_by(_ALL).agg(aggs).drop(_ALL)


def epoch_seconds(column: str) -> pl.Expr:
    """Seconds since the Unix epoch of a UTC datetime column, as a float."""
    return pl.col(column).dt.epoch("us").cast(pl.Float64) / 1e6


def _accepts(kind: Kind, dtype: pl.DataType) -> bool:
    if dtype == pl.Null:
        return True
    if kind == "amount":
        return dtype.is_integer() or (isinstance(dtype, pl.Decimal) and dtype.scale == 0)
    if kind == "int":
        return dtype.is_integer()
    if kind == "float":
        return dtype.is_numeric()
    if kind == "str":
        return dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum)
    return isinstance(dtype, pl.Datetime)


def _normalise(expr: pl.Expr, kind: Kind, dtype: pl.DataType) -> pl.Expr:
    if kind == "datetime" and isinstance(dtype, pl.Datetime):
        # A naive datetime is taken as UTC (the store's convention); an aware one is converted.
        if dtype.time_zone is None:
            expr = expr.dt.replace_time_zone("UTC")
        else:
            expr = expr.dt.convert_time_zone("UTC")
        return expr.dt.cast_time_unit("us")
    # Integers go to Int64 (BIGINT) so that frames from different sources join on chain ids.
    return expr.cast(KIND_DTYPE[kind])
