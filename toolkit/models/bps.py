"""The figures in basis points and shares every model and the report compute: defined once.

- :func:`shortfall_bps`: how far an outcome falls below its reference, in bps (price impact
  against a mid or a best rate, slippage against a quote, the all-in cost in USD);
- :func:`gain_bps`: how much better one route is than a base route, in bps of the base;
- :func:`answer_counts` and :func:`share_404`: RFQ and borrow answers counted by status, and
  the 404 (capacity refusal) share of the 200/404 answers.

Each works on Python numbers and on polars expressions alike, so a row-wise model and a
columnar one give the same figure to the last bit.

>>> round(shortfall_bps(996.0, 1000.0), 9), gain_bps(1004, 1000)
(40.0, 40.0)
"""

from __future__ import annotations

from typing import TypeVar, overload

import polars as pl

__all__ = ["BPS", "answer_counts", "gain_bps", "share_404", "shortfall_bps"]

#: Basis points in one: 1 bps is 0.01 %.
BPS = 1e4

_X = TypeVar("_X", float, pl.Expr)


def shortfall_bps(got: _X, reference: _X) -> _X:
    """How far ``got`` falls below ``reference``: ``(1 − got / reference) × 10 000``.

    Parameters
    ----------
    got : float or polars.Expr
        The outcome: an output amount, a rate, a USD value.
    reference : float or polars.Expr
        What it is measured against, in the same units: the output at the mid price, the
        best observed rate, the quoted output, the input's USD value.

    Returns
    -------
    float or polars.Expr
        Basis points; positive when ``got`` is below ``reference``, negative above.

    Examples
    --------
    >>> shortfall_bps(0.75, 1.0)
    2500.0
    >>> frame = pl.DataFrame({"amount_out": [996.0, 1_010.0], "mid_out": [1_000.0, 1_000.0]})
    >>> impact = shortfall_bps(pl.col("amount_out"), pl.col("mid_out")).round(6)
    >>> frame.select(impact).to_series().to_list()
    [40.0, -100.0]
    """
    return (1 - got / reference) * BPS


@overload
def gain_bps(better: int | None, base: int | None) -> float | None: ...
@overload
def gain_bps(better: pl.Expr, base: pl.Expr) -> pl.Expr: ...
def gain_bps(better: int | pl.Expr | None, base: int | pl.Expr | None) -> float | pl.Expr | None:
    """How much more ``better`` is than ``base``: ``(better − base) / base × 10 000``.

    Parameters
    ----------
    better, base : int, None or polars.Expr
        Two outputs of the same trade (exact integers) or expressions of them.

    Returns
    -------
    float, None or polars.Expr
        Basis points of ``base``; None for numbers when either is None or ``base`` is 0.

    Examples
    --------
    >>> gain_bps(10_050, 10_000), gain_bps(1, 0), gain_bps(None, 5)
    (50.0, None, None)
    """
    if isinstance(better, pl.Expr) or isinstance(base, pl.Expr):
        return (better - base) / base * BPS  # type: ignore[operator]
    if better is None or not base:
        return None
    return (better - base) / base * BPS


def answer_counts(status: str = "status") -> list[pl.Expr]:
    """Aggregations that count answers by HTTP status: ``attempts`` (every row), ``ok``
    (200: a quote) and ``blocked`` (404: refused for capacity), as Int64.

    Parameters
    ----------
    status : str
        The column holding the HTTP status.

    Returns
    -------
    list of polars.Expr
        For ``group_by(...).agg(...)``.

    Examples
    --------
    >>> frame = pl.DataFrame({"route": ["a"] * 4, "status": [200, 404, 404, 500]})
    >>> frame.group_by("route").agg(answer_counts()).with_columns(share_404()).row(0)
    ('a', 4, 1, 2, 0.6666666666666666)
    """
    column = pl.col(status)
    return [
        pl.len().cast(pl.Int64).alias("attempts"),
        (column == 200).sum().cast(pl.Int64).alias("ok"),
        (column == 404).sum().cast(pl.Int64).alias("blocked"),
    ]


def share_404(ok: str = "ok", blocked: str = "blocked", *, name: str = "share_404") -> pl.Expr:
    """The 404 share of the 200/404 answers, ``blocked / (ok + blocked)``: the capacity
    refusals among the answers that reached the pool (other statuses left out); null without
    any.

    Parameters
    ----------
    ok, blocked : str
        The columns counting 200 and 404 answers (:func:`answer_counts`).
    name : str
        The output column's name.

    Returns
    -------
    polars.Expr

    Examples
    --------
    >>> pl.DataFrame({"ok": [3, 0], "blocked": [1, 0]}).select(share_404())["share_404"].to_list()
    [0.25, None]
    """
    answered = pl.col(ok) + pl.col(blocked)
    return pl.when(answered > 0).then(pl.col(blocked) / answered).alias(name)
