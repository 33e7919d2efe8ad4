"""Quote timing from RFQ observations: eta and validity, fee drift over a run, latency."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from toolkit.models.fees import fee_expr
from toolkit.models.frames import (
    ROUTE,
    Kind,
    aggregate,
    check_keys,
    duration_seconds,
    epoch_seconds,
    prepare,
)

_ETA_SPEC: dict[str, Kind] = {
    "observed_at": "datetime",
    "status": "int",
    "eta": "int",
    "valid_until": "int",
}
_DRIFT_SPEC: dict[str, Kind] = {
    "run_id": "str",
    "observed_at": "datetime",
    "status": "int",
    "amount": "amount",
    "input_amount": "amount",
    "output_amount": "amount",
}
_LATENCY_SPEC: dict[str, Kind] = {"status": "int", "latency_ms": "float"}


def eta_validity_stats(obs: pl.DataFrame, *, by: str | Sequence[str] = ROUTE) -> pl.DataFrame:
    """Per route: the quoted fill ``eta`` and the validity window of the 200 answers.

    The validity window is ``valid_until − observed_at`` in seconds (``valid_until`` is a
    Unix time in whole seconds, so a 15 s reservation reads between 14 and 15 s plus the
    response latency). Columns: the ``by`` keys, ``n``, ``eta_mean``, ``eta_median``,
    ``eta_p90`` (seconds, linear interpolation), ``validity_mean_s``, ``validity_min_s``,
    ``validity_max_s``. An empty input gives an empty frame with these columns.

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
    >>> import datetime as dt
    >>> at = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    >>> obs = pl.DataFrame({"observed_at": [at, at], "status": [200, 200], "eta": [10, 20],
    ...     "valid_until": [int(at.timestamp()) + 15] * 2, "token": ["USDC"] * 2})
    >>> eta_validity_stats(obs, by="token").select("eta_median", "validity_max_s").row(0)
    (15.0, 15.0)
    """
    func = "eta_validity_stats"
    frame = prepare(obs, func, _ETA_SPEC)
    keys = check_keys(frame, func, by)
    eta = pl.col("eta").cast(pl.Float64)
    validity = pl.col("valid_until").cast(pl.Float64) - epoch_seconds("observed_at")
    answered = frame.filter(pl.col("status") == 200).with_columns(validity.alias("_validity"))
    window = pl.col("_validity")
    return aggregate(
        answered,
        keys,
        [
            pl.len().cast(pl.Int64).alias("n"),
            eta.mean().alias("eta_mean"),
            eta.median().alias("eta_median"),
            eta.quantile(0.9, interpolation="linear").alias("eta_p90"),
            window.mean().alias("validity_mean_s"),
            window.min().alias("validity_min_s"),
            window.max().alias("validity_max_s"),
        ],
    )


def price_drift(
    obs: pl.DataFrame, *, every: str = "1m", by: str | Sequence[str] = ROUTE
) -> pl.DataFrame:
    """How the fee of each route and amount moved within each run, in time buckets.

    The effective fee (:func:`effective_fee_bps`) of the 200 answers is averaged per
    ``run_id``, ``by`` keys, requested ``amount`` and ``every``-long bucket
    (``window_start``, aligned to the epoch). Columns: the keys, ``amount``,
    ``window_start``, ``n``, ``fee_bps_mean``, ``fee_bps_min``, ``fee_bps_max``; then per
    run, route and amount: ``first_fee_bps`` and ``last_fee_bps`` (the first and last
    buckets' means), ``change_bps`` (last − first) and, per bucket, ``drift_bps`` (its mean
    − first). An empty input gives an empty frame with these columns.

    Parameters
    ----------
    obs : polars.DataFrame
        RFQ observations: the store's rfq_observations as stored (extra columns are kept); the
        columns named above are required.
    every : str
        The bucket length, a fixed-length polars duration ('30s', '1m').
    by : str or sequence of str
        The grouping keys (default: source chain, destination chain, token, quote type); () for
        one group of all rows.

    Returns
    -------
    polars.DataFrame
        One row per run, group, amount and bucket with the columns above.

    Examples
    --------
    >>> import datetime as dt
    >>> at = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    >>> obs = pl.DataFrame({"run_id": ["r"] * 2, "observed_at": [at, at + dt.timedelta(minutes=1)],
    ...     "status": [200] * 2, "amount": [10_000] * 2, "input_amount": [10_000] * 2,
    ...     "output_amount": [9_995, 9_990], "token": ["USDC"] * 2})
    >>> price_drift(obs, by="token")["drift_bps"].to_list()
    [0.0, 5.0]
    """
    func = "price_drift"
    frame = prepare(obs, func, _DRIFT_SPEC)
    keys = check_keys(frame, func, by)
    duration_seconds(every, "every", func)
    series = ["run_id", *keys, "amount"]
    if len(set(series)) != len(series):
        raise ValueError(f"{func}: by: must not repeat run_id or amount, got {keys}")
    fee = pl.col("_fee")
    buckets = aggregate(
        frame.with_columns(fee_expr().alias("_fee"))
        .filter(fee.is_not_null())
        .with_columns(pl.col("observed_at").dt.truncate(every).alias("window_start")),
        [*series, "window_start"],
        [
            pl.len().cast(pl.Int64).alias("n"),
            fee.mean().alias("fee_bps_mean"),
            fee.min().alias("fee_bps_min"),
            fee.max().alias("fee_bps_max"),
        ],
    ).sort([*series, "window_start"], nulls_last=True)
    mean = pl.col("fee_bps_mean")
    first = mean.first().over(series, order_by="window_start")
    last = mean.last().over(series, order_by="window_start")
    return buckets.with_columns(
        first.alias("first_fee_bps"),
        last.alias("last_fee_bps"),
    ).with_columns(
        (pl.col("last_fee_bps") - pl.col("first_fee_bps")).alias("change_bps"),
        (mean - pl.col("first_fee_bps")).alias("drift_bps"),
    )


def latency_stats(obs: pl.DataFrame, *, by: str | Sequence[str] = ()) -> pl.DataFrame:
    """Response latency per HTTP status (0 = transport failure), optionally per more keys.

    Columns: the ``by`` keys, ``status``, ``n`` (attempts), ``latency_mean_ms``,
    ``latency_p50_ms``, ``latency_p90_ms``, ``latency_p99_ms`` (linear interpolation) and
    ``latency_max_ms``; rows with a null latency count in ``n`` but not in the figures.

    Parameters
    ----------
    obs : polars.DataFrame
        RFQ observations: the store's rfq_observations as stored (extra columns are kept); the
        columns named above are required.
    by : str or sequence of str
        More grouping keys besides status (default: none).

    Returns
    -------
    polars.DataFrame
        One row per group and status with the columns above.

    Examples
    --------
    >>> obs = pl.DataFrame({"status": [200, 200, 404], "latency_ms": [10.0, 30.0, 5.0]})
    >>> latency_stats(obs).select("status", "n", "latency_p50_ms").rows()
    [(200, 2, 20.0), (404, 1, 5.0)]
    """
    func = "latency_stats"
    frame = prepare(obs, func, _LATENCY_SPEC)
    keys = check_keys(frame, func, by)
    if "status" in keys:
        raise ValueError(f"{func}: by: status is always a key; do not repeat it")
    latency = pl.col("latency_ms")
    return aggregate(
        frame,
        [*keys, "status"],
        [
            pl.len().cast(pl.Int64).alias("n"),
            latency.mean().alias("latency_mean_ms"),
            latency.quantile(0.5, interpolation="linear").alias("latency_p50_ms"),
            latency.quantile(0.9, interpolation="linear").alias("latency_p90_ms"),
            latency.quantile(0.99, interpolation="linear").alias("latency_p99_ms"),
            latency.max().alias("latency_max_ms"),
        ],
    )
