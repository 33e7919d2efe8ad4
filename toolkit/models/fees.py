"""Quote fees from RFQ observations: the effective fee, a fitted fee curve, amount buckets."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from numbers import Integral

import numpy as np
import polars as pl

from toolkit.models.frames import ROUTE, Kind, aggregate, check_keys, prepare

_FEE_SPEC: dict[str, Kind] = {
    "status": "int",
    "input_amount": "amount",
    "output_amount": "amount",
}
_AMOUNT_SPEC: dict[str, Kind] = {**_FEE_SPEC, "amount": "amount"}
#: Decade edges 10^0 .. 10^38: every positive Int128 amount falls in one of them.
_DECADES = tuple(10**k for k in range(39))
_INT128_MAX = 2**127 - 1
_EXACT_SCALE_BELOW = 10**33


def fee_expr() -> pl.Expr:
    """``(input − output) / input × 10⁴`` for 200 rows with a positive input, else null.

    Computed in Int128 as a whole part and a remainder, ``q + r / input``, so the only float
    rounding comes last: a fee of a few wei on an amount above 2^63 is not lost to float
    cancellation, and a fee of whole or half basis points comes out exact. Beyond a
    difference of 10^33 (where ``difference × 10⁴`` could overflow Int128) it falls back to
    a float ratio.
    """
    input_amount = pl.col("input_amount")
    difference = input_amount - pl.col("output_amount")
    scaled = difference * pl.lit(10_000, pl.Int128)
    whole = scaled // input_amount
    remainder = scaled - whole * input_amount
    exact = whole.cast(pl.Float64) + remainder.cast(pl.Float64) / input_amount.cast(pl.Float64)
    approximate = difference.cast(pl.Float64) / input_amount.cast(pl.Float64) * 1e4
    fee = (
        pl.when(difference.abs() < pl.lit(_EXACT_SCALE_BELOW, pl.Int128))
        .then(exact)
        .otherwise(approximate)
    )
    answered = (pl.col("status") == 200) & (input_amount > 0)
    return pl.when(answered).then(fee).otherwise(None).cast(pl.Float64)


def effective_fee_bps(obs: pl.DataFrame) -> pl.DataFrame:
    """Add ``effective_fee_bps``: the fee each 200 answer charged, from its exact amounts.

    ``(input_amount − output_amount) / input_amount × 10⁴`` for both ``ExactInput`` and
    ``ExactOutput`` quotes (the formula is the same; only which side was requested differs).
    Null for any other status, a missing amount or a zero input. The difference is exact
    (Int128) before the division. It compares like with like only when the input and output
    tokens share a denomination (same symbol on both chains), as in ``rfq_observations``.

    Parameters
    ----------
    obs : polars.DataFrame
        RFQ observations: the store's rfq_observations as stored (extra columns are kept); the
        columns named above are required.

    Returns
    -------
    polars.DataFrame
        obs with an effective_fee_bps column (Float64).

    Examples
    --------
    >>> obs = pl.DataFrame(
    ...     {"status": [200, 404], "input_amount": [10**22, None],
    ...      "output_amount": [10**22 - 5 * 10**18, None]},
    ...     schema={"status": pl.Int32, "input_amount": pl.Int128, "output_amount": pl.Int128},
    ... )
    >>> effective_fee_bps(obs)["effective_fee_bps"].to_list()
    [5.0, None]
    """
    frame = prepare(obs, "effective_fee_bps", _FEE_SPEC)
    return frame.with_columns(fee_expr().alias("effective_fee_bps"))


def fee_curve(obs: pl.DataFrame, *, by: str | Sequence[str] = ROUTE) -> pl.DataFrame:
    """Least-squares fee curve per route: ``fee_bps = a + b·log10(amount) [+ c·utilization]``.

    Fitted with numpy on the 200 answers with a positive requested ``amount`` (smallest
    denomination, so ``a`` is the fee extrapolated to one wei and ``b`` the change per tenfold
    amount). When the frame has a ``utilization`` column (0..1), it enters as a third term
    and rows where it is null are left out. Columns: the ``by`` keys, ``n``, ``intercept``,
    ``log10_amount_coef``, ``utilization_coef`` (null without the column), ``r2``, ``rmse``,
    ``amount_min``, ``amount_max``, then the slope's goodness: its standard error
    ``log10_amount_coef_se``, its 95 % interval ``log10_amount_coef_lo`` / ``_hi`` (Student t
    on ``n`` − terms degrees of freedom) and ``size_dependence``, true only when that interval
    excludes 0 (false: no size dependence detected, whatever the point estimate). The
    coefficients are null when the group has fewer rows than terms or its amounts do not vary
    (the fit is not determined); ``r2`` is null when the fees do not vary, and the interval
    when no degree of freedom is left. An empty input gives an empty frame with these
    columns.

    Parameters
    ----------
    obs : polars.DataFrame
        RFQ observations: the store's rfq_observations as stored (extra columns are kept); the
        columns named above are required.
    by : str or sequence of str
        The grouping keys (default: source chain, destination chain, token, quote type); () for
        one group of all rows.

    Returns
    -------
    polars.DataFrame
        One row per group with the columns above.

    Examples
    --------
    >>> obs = pl.DataFrame(
    ...     {"status": [200] * 3, "amount": [10**6, 10**7, 10**8],
    ...      "input_amount": [10**6, 10**7, 10**8],
    ...      "output_amount": [10**6 - 300, 10**7 - 2_000, 10**8 - 10_000], "token": ["USDC"] * 3},
    ... )
    >>> fit = fee_curve(obs, by="token").row(0, named=True)
    >>> round(fit["intercept"], 9), round(fit["log10_amount_coef"], 9), fit["n"]
    (9.0, -1.0, 3)
    """
    func = "fee_curve"
    frame = prepare(obs, func, _AMOUNT_SPEC)
    keys = check_keys(frame, func, by)
    use_utilization = "utilization" in frame.columns
    if use_utilization:
        frame = prepare(frame, func, {"utilization": "float"})
    usable = frame.with_columns(fee_expr().alias("_fee")).filter(
        pl.col("_fee").is_not_null() & (pl.col("amount") > 0)
    )
    if use_utilization:
        usable = usable.filter(pl.col("utilization").is_not_null())
    utilization = pl.col("utilization") if use_utilization else pl.lit(None, pl.Float64)
    groups = aggregate(
        usable,
        keys,
        [
            pl.col("amount").cast(pl.Float64).log10().alias("_x"),
            utilization.alias("_u"),
            pl.col("_fee"),
            pl.col("amount").min().alias("amount_min"),
            pl.col("amount").max().alias("amount_max"),
        ],
    )
    fits = [
        _fit(
            np.asarray(x, dtype=float),
            np.asarray(u, dtype=float) if use_utilization else None,
            np.asarray(fee, dtype=float),
        )
        for x, u, fee in zip(groups["_x"], groups["_u"], groups["_fee"], strict=True)
    ]
    columns = ["n", "intercept", "log10_amount_coef", "utilization_coef", "r2", "rmse"]
    schema = {"n": pl.Int64, **{name: pl.Float64 for name in columns[1:]}}
    slope = {f"log10_amount_coef_{k}": pl.Float64 for k in ("se", "lo", "hi")}
    fitted = pl.DataFrame(
        fits, schema={**schema, **slope, "size_dependence": pl.Boolean}, orient="row"
    )
    return pl.concat(
        [
            groups.select(keys),
            fitted.select(columns),
            groups.select("amount_min", "amount_max"),
            fitted.select(*slope, "size_dependence"),
        ],
        how="horizontal",
    )


@functools.lru_cache(maxsize=256)
def t95(df: int) -> float:
    """The two-sided 95 % quantile of Student's t with ``df`` degrees of freedom, to 3 decimals:
    the 0.975 point of the t distribution, found by bisection on its CDF (Simpson's rule on
    the density, ``Γ((ν+1)/2) / (√(νπ) Γ(ν/2)) · (1 + x²/ν)^(−(ν+1)/2)``).

    >>> t95(1), t95(2), t95(4), t95(10), t95(10**6)
    (12.706, 4.303, 2.776, 2.228, 1.96)
    """
    nu = float(df)
    log_c = math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu * math.pi)

    def tail(t: float) -> float:  # P(0 < T < t), Simpson's rule on 4,000 panels
        x = np.linspace(0.0, t, 4_001)
        f = np.exp(log_c - (nu + 1) / 2 * np.log1p(x * x / nu))
        return float((f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum()) * t / 12_000)

    low, high = 1.9, 13.0
    for _ in range(50):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if tail(mid) < 0.475 else (low, mid)
    return round(0.5 * (low + high), 3)


def fee_by_amount_bucket(
    obs: pl.DataFrame,
    buckets: Sequence[int] | None = None,
    *,
    by: str | Sequence[str] = ROUTE,
) -> pl.DataFrame:
    """Fee distribution of the 200 answers per route and amount bucket.

    ``buckets`` are ascending lower edges in the smallest denomination: bucket ``i`` holds
    ``buckets[i] <= amount < buckets[i + 1]`` and the last one is open above. Amounts below
    the first edge fall in a bucket starting at 0. The default is decades (1, 10, 100, ...).
    Edges are compared exactly (Int128). Columns: the ``by`` keys, ``bucket_lo``,
    ``bucket_hi`` (null for the open bucket), ``n``, ``fee_median``, ``fee_p10``,
    ``fee_p90`` (linear interpolation), ``fee_mean``, ``fee_min``, ``fee_max``.

    Parameters
    ----------
    obs : polars.DataFrame
        RFQ observations: the store's rfq_observations as stored (extra columns are kept); the
        columns named above are required.
    buckets : sequence of int, optional
        Ascending lower edges in smallest units; decades when omitted.
    by : str or sequence of str
        The grouping keys (default: source chain, destination chain, token, quote type); () for
        one group of all rows.

    Returns
    -------
    polars.DataFrame
        One row per group and bucket with the columns above.

    Examples
    --------
    >>> obs = pl.DataFrame({"status": [200] * 3, "amount": [5, 50, 70],
    ...     "input_amount": [10_000] * 3, "output_amount": [9_990, 9_980, 9_970]})
    >>> fee_by_amount_bucket(obs, by=()).select("bucket_lo", "n", "fee_median").rows()
    [(1, 1, 10.0), (10, 2, 25.0)]
    """
    func = "fee_by_amount_bucket"
    frame = prepare(obs, func, _AMOUNT_SPEC)
    keys = check_keys(frame, func, by)
    edges = _check_edges(buckets)
    if edges[0] > 0:
        edges = [0, *edges]
    fee = pl.col("_fee")
    usable = frame.with_columns(fee_expr().alias("_fee")).filter(fee.is_not_null())
    index = sum(
        ((pl.col("amount") >= pl.lit(edge, pl.Int128)).cast(pl.Int64) for edge in edges[1:]),
        pl.lit(0, pl.Int64),
    )
    lower = pl.Series("lo", edges, dtype=pl.Int128)
    upper = pl.Series("hi", [*edges[1:], None], dtype=pl.Int128)
    bucketed = usable.with_columns(
        index.alias("_bucket"),
    ).with_columns(
        pl.col("_bucket").replace_strict(list(range(len(edges))), lower).alias("bucket_lo"),
        pl.col("_bucket").replace_strict(list(range(len(edges))), upper).alias("bucket_hi"),
    )
    return aggregate(
        bucketed,
        [*keys, "bucket_lo", "bucket_hi"],
        [
            pl.len().cast(pl.Int64).alias("n"),
            fee.median().alias("fee_median"),
            fee.quantile(0.1, interpolation="linear").alias("fee_p10"),
            fee.quantile(0.9, interpolation="linear").alias("fee_p90"),
            fee.mean().alias("fee_mean"),
            fee.min().alias("fee_min"),
            fee.max().alias("fee_max"),
        ],
    )


def _check_edges(buckets: Sequence[int] | None) -> list[int]:
    if buckets is None:
        return list(_DECADES)
    if isinstance(buckets, str | bytes) or not isinstance(buckets, Sequence) or not buckets:
        raise ValueError("buckets: must be a non-empty sequence of integer amounts")
    for k, edge in enumerate(buckets):
        if isinstance(edge, bool) or not isinstance(edge, Integral):
            raise TypeError(f"buckets[{k}]: must be an integer amount, got {type(edge).__name__}")
        if not 0 <= edge <= _INT128_MAX:
            raise ValueError(f"buckets[{k}]: must be between 0 and 2^127 − 1, got {edge}")
    if any(b <= a for a, b in itertools.pairwise(buckets)):
        raise ValueError("buckets: edges must be strictly ascending")
    return [int(edge) for edge in buckets]


_Fit = tuple[
    int, float | None, float | None, float | None, float | None, float | None,
    float | None, float | None, float | None, bool | None,
]  # fmt: skip


def _fit(x: np.ndarray, utilization: np.ndarray | None, fee: np.ndarray) -> _Fit:
    n = len(fee)
    columns = [np.ones(n), x] if utilization is None else [np.ones(n), x, utilization]
    design = np.column_stack(columns) if n else np.empty((0, len(columns)))
    if n < design.shape[1] or np.linalg.matrix_rank(design) < design.shape[1]:
        return n, None, None, None, None, None, None, None, None, None
    coef, *_ = np.linalg.lstsq(design, fee, rcond=None)
    residual = fee - design @ coef
    ss_res = float(residual @ residual)
    centred = fee - fee.mean()
    ss_tot = float(centred @ centred)
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else None
    rmse = float(np.sqrt(ss_res / n))
    c = float(coef[2]) if utilization is not None else None
    df = n - design.shape[1]
    if df < 1:
        return n, float(coef[0]), float(coef[1]), c, r2, rmse, None, None, None, None
    # the slope's standard error from the residual variance and (XᵀX)⁻¹
    covariance = ss_res / df * np.linalg.inv(design.T @ design)
    se = float(np.sqrt(max(covariance[1, 1], 0.0)))
    half = t95(df) * se
    lo, hi = float(coef[1]) - half, float(coef[1]) + half
    return n, float(coef[0]), float(coef[1]), c, r2, rmse, se, lo, hi, bool(lo > 0 or hi < 0)
