"""Observed quote fees against the published fee tiers."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from toolkit.arguments import number
from toolkit.models.fees import fee_expr
from toolkit.models.frames import ROUTE, Kind, aggregate, check_keys, prepare

_OBS_SPEC: dict[str, Kind] = {
    "observed_at": "datetime",
    "status": "int",
    "src_chain": "int",
    "dst_chain": "int",
    "token": "str",
    "amount": "amount",
    "input_amount": "amount",
    "output_amount": "amount",
}
_TIER_SPEC: dict[str, Kind] = {
    "snapshot_id": "str",
    "observed_at": "datetime",
    "src_chain": "int",
    "dst_chain": "int",
    "token": "str",
    "tier": "int",
    "fee_bps": "float",
    "min_amount": "amount",
    "max_amount": "amount",
}
_PAIR = ["src_chain", "dst_chain", "token"]
_ROW = "__row__"
_ADDED = ["effective_fee_bps", "snapshot_id", "tier", "tier_fee_bps", "premium_bps", "below_tier"]


def compare_with_tiers(
    obs: pl.DataFrame, tiers: pl.DataFrame, *, tolerance_bps: float = 1e-9
) -> pl.DataFrame:
    """Each 200 answer next to the published tier fee for its route and amount.

    Returns the 200 rows of ``obs`` with ``effective_fee_bps`` (see
    :func:`effective_fee_bps`), and from ``tiers`` (a ``fee_tiers`` frame): ``snapshot_id``,
    ``tier``, ``tier_fee_bps``; then ``premium_bps = effective_fee_bps − tier_fee_bps`` and
    ``below_tier`` (premium below ``−tolerance_bps``: a quote cheaper than published).

    Matching, per ``(src_chain, dst_chain, token)``: the snapshot is the latest one taken at
    or before the observation, or the earliest one after it when none precedes it. Within the
    snapshot the tier is the one with ``min_amount <= amount <= max_amount`` (a null bound is
    open); where two tiers share a boundary amount the higher tier (larger ``min_amount``)
    wins. Observations without a tier keep nulls in the tier columns. An empty input gives an
    empty frame with these columns.

    Parameters
    ----------
    obs : polars.DataFrame
        RFQ observations: the store's rfq_observations as stored (extra columns are kept); the
        columns named above are required.
    tiers : polars.DataFrame
        Published fee tiers: the store's fee_tiers as stored.
    tolerance_bps : float
        How far below the tier fee a quote may be before below_tier flags it.

    Returns
    -------
    polars.DataFrame
        The 200 rows of obs with the columns above.

    Examples
    --------
    >>> import datetime as dt
    >>> at = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    >>> route = {"src_chain": [1], "dst_chain": [10], "token": ["USDC"]}
    >>> obs = pl.DataFrame({**route, "observed_at": [at], "status": [200], "amount": [10**6],
    ...     "input_amount": [10**6], "output_amount": [10**6 - 600]})
    >>> tiers = pl.DataFrame({**route, "snapshot_id": ["s1"], "observed_at": [at], "tier": [1],
    ...     "fee_bps": [5.0], "min_amount": [0], "max_amount": [None]})
    >>> compare_with_tiers(obs, tiers).select("tier_fee_bps", "premium_bps").row(0)
    (5.0, 1.0)
    """
    func = "compare_with_tiers"
    frame = prepare(obs, func, _OBS_SPEC)
    table = prepare(tiers, func, _TIER_SPEC)
    tolerance = number(tolerance_bps, "tolerance_bps", minimum=0.0)
    quotes = (
        frame.filter(pl.col("status") == 200)
        .drop([name for name in _ADDED if name in frame.columns])
        .with_columns(fee_expr().alias("effective_fee_bps"))
        .with_row_index(_ROW)
    )
    snapshot = _snapshot_per_row(quotes, table)
    candidates = (
        snapshot.join(
            table.select(
                *_PAIR,
                "snapshot_id",
                "tier",
                pl.col("fee_bps").alias("tier_fee_bps"),
                "min_amount",
                "max_amount",
            ),
            on=[*_PAIR, "snapshot_id"],
            how="inner",
        )
        .filter(
            (pl.col("min_amount").is_null() | (pl.col("amount") >= pl.col("min_amount")))
            & (pl.col("max_amount").is_null() | (pl.col("amount") <= pl.col("max_amount")))
        )
        .sort([_ROW, "min_amount", "tier"], nulls_last=False)
        .group_by(_ROW)
        .agg(pl.col("tier").last(), pl.col("tier_fee_bps").last())
    )
    premium = pl.col("effective_fee_bps") - pl.col("tier_fee_bps")
    return (
        quotes.join(snapshot.select(_ROW, "snapshot_id"), on=_ROW, how="left")
        .join(candidates, on=_ROW, how="left")
        .sort(_ROW)
        .with_columns(premium.alias("premium_bps"))
        .with_columns((pl.col("premium_bps") < -tolerance).alias("below_tier"))
        .drop(_ROW)
    )


def tier_premium_summary(
    compared: pl.DataFrame, *, by: str | Sequence[str] = ROUTE
) -> pl.DataFrame:
    """Per-route premium over the tier fee, from a :func:`compare_with_tiers` frame.

    Columns: the ``by`` keys, ``n`` (answers), ``matched`` (with a tier and a fee),
    ``below`` (flagged below the tier), ``share_below`` (of matched), and ``premium_mean``,
    ``premium_median``, ``premium_min``, ``premium_max`` in basis points.

    Parameters
    ----------
    compared : polars.DataFrame
        The output of compare_with_tiers.
    by : str or sequence of str
        The grouping keys (default: source chain, destination chain, token, quote type); () for
        one group of all rows.

    Returns
    -------
    polars.DataFrame
        One row per group with the columns above.

    Examples
    --------
    >>> compared = pl.DataFrame({"token": ["USDC"] * 3, "premium_bps": [1.0, -0.5, None],
    ...     "below_tier": [False, True, None]})
    >>> tier_premium_summary(compared, by="token").select("matched", "below").row(0)
    (2, 1)
    """
    func = "tier_premium_summary"
    frame = prepare(compared, func, {"premium_bps": "float"})
    if "below_tier" not in frame.columns:
        raise ValueError(f"{func}: missing columns: below_tier")
    keys = check_keys(frame, func, by)
    premium = pl.col("premium_bps")
    matched = premium.is_not_null().sum().cast(pl.Int64)
    below = pl.col("below_tier").fill_null(False).cast(pl.Boolean).sum().cast(pl.Int64)
    return aggregate(
        frame,
        keys,
        [
            pl.len().cast(pl.Int64).alias("n"),
            matched.alias("matched"),
            below.alias("below"),
            pl.when(matched > 0).then(below / matched).alias("share_below"),
            premium.mean().alias("premium_mean"),
            premium.median().alias("premium_median"),
            premium.min().alias("premium_min"),
            premium.max().alias("premium_max"),
        ],
    )


def _snapshot_per_row(quotes: pl.DataFrame, table: pl.DataFrame) -> pl.DataFrame:
    """``snapshot_id`` per observation: the latest snapshot at or before it, else the next."""
    snapshots = (
        table.select(*_PAIR, "snapshot_id", pl.col("observed_at").alias("snapshot_at"))
        .unique()
        .sort(["snapshot_at", "snapshot_id"])
    )
    ordered = quotes.select(_ROW, *_PAIR, "amount", "observed_at").sort("observed_at")
    found = []
    for strategy in ("backward", "forward"):
        found.append(
            ordered.join_asof(
                snapshots,
                left_on="observed_at",
                right_on="snapshot_at",
                by=_PAIR,
                strategy=strategy,
                check_sortedness=False,
            ).select(_ROW, pl.col("snapshot_id").alias(f"_{strategy}"))
        )
    chosen = (
        found[0]
        .join(found[1], on=_ROW)
        .select(_ROW, pl.coalesce("_backward", "_forward").alias("snapshot_id"))
    )
    return ordered.join(chosen, on=_ROW).select(_ROW, *_PAIR, "amount", "snapshot_id")
