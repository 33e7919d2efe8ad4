"""404 shares per route: the market's, and the collector's own sweep's, with the right intervals.

A sweep's quotes reserve the pools it measures (15 s each, 60 s more for an order it opens), so
the refusals it meets are partly its own; and consecutive RFQs of one sweep round at one pool
are not independent trials (a full pool refuses them in a row). The report therefore shows:

- ``market``: other users' requests and the service's answers (runs of kind ``traffic``), each
  request one trial: the Wilson 95 % interval (:func:`toolkit.models.intervals.wilson`);
- ``collector sweep``: the sweeps' own 200/404 answers, from sweeps that did not open orders,
  with an interval clustered by sweep round (:func:`toolkit.report.tables.sweep_estimate`),
  and the largest share of the destination pool the sweep's own quotes held while it measured
  (:func:`toolkit.models.observer_share`): a share near 100 % means the 404s are its own.
"""

from __future__ import annotations

import polars as pl

from toolkit.models import observer_share
from toolkit.models.bps import answer_counts, share_404
from toolkit.models.intervals import wilson_exprs
from toolkit.report.load import ReportData
from toolkit.report.tables import ROUTE_KEYS, route_label, sweep_estimate

__all__ = ["INTERVALS", "MARKET", "SWEEP", "refusal_table"]

MARKET = "market"
SWEEP = "collector sweep"
#: How each source's interval was computed, for the CSV and the figure.
INTERVALS = {
    MARKET: "Wilson: each user's request an independent trial",
    SWEEP: "clustered by sweep round: consecutive RFQs of a sweep are not independent",
}
_COLUMNS = {
    "route": pl.String,
    "src_chain": pl.Int64,
    "dst_chain": pl.Int64,
    "token": pl.String,
    "source": pl.String,
    "answered": pl.Int64,
    "refused": pl.Int64,
    "share_404": pl.Float64,
    "ci95_low": pl.Float64,
    "ci95_high": pl.Float64,
    "interval": pl.String,
    "own_hold_peak_pct": pl.Float64,
}

_SWEEP_COLUMNS = (
    "src_chain",
    "dst_chain",
    "token",
    "answered",
    "refused",
    "share_404",
    "ci95_low",
    "ci95_high",
)


def _answered(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(pl.col("status").is_in([200, 404]))


def _market(market: pl.DataFrame) -> pl.DataFrame:
    keys = list(ROUTE_KEYS)
    return (
        _answered(market)
        .group_by(keys)
        .agg(answer_counts())
        .with_columns(
            (pl.col("ok") + pl.col("blocked")).alias("answered"),
            pl.col("blocked").alias("refused"),
            share_404(),
        )
        .with_columns(
            *wilson_exprs("refused", "answered"),
            pl.lit(MARKET).alias("source"),
            pl.lit(INTERVALS[MARKET]).alias("interval"),
            pl.lit(None, pl.Float64).alias("own_hold_peak_pct"),
        )
    )


def _sweep(observations: pl.DataFrame, pools: pl.DataFrame) -> pl.DataFrame:
    swept = observations.filter(~pl.col("holds_orders")) if observations.height else observations
    rows = []
    for (src, dst, token), part in _answered(swept).group_by(list(ROUTE_KEYS)):
        estimate = sweep_estimate(part)
        answered, refused = estimate.n, int((part["status"] == 404).sum())
        low, high = estimate.low, estimate.high
        rows.append(
            {
                "src_chain": src,
                "dst_chain": dst,
                "token": token,
                "answered": answered,
                "refused": refused,
                "share_404": refused / answered,
                "ci95_low": low,
                "ci95_high": high,
            }
        )
    frame = pl.DataFrame(rows, schema={k: _COLUMNS[k] for k in _SWEEP_COLUMNS})
    frame = frame.with_columns(
        pl.lit(SWEEP).alias("source"), pl.lit(INTERVALS[SWEEP]).alias("interval")
    )
    held = _held(swept, pools)
    return frame.join(held, on=["dst_chain", "token"], how="left")


def _held(swept: pl.DataFrame, pools: pl.DataFrame) -> pl.DataFrame:
    empty = pl.DataFrame(
        schema={"dst_chain": pl.Int64, "token": pl.String, "own_hold_peak_pct": pl.Float64}
    )
    if swept.height == 0 or pools.height == 0:
        return empty
    shares = observer_share(swept, pools)
    if shares.height == 0:
        return empty
    return shares.select(
        pl.col("dst_chain").cast(pl.Int64),
        "token",
        (100 * pl.col("held_peak_share")).alias("own_hold_peak_pct"),
    )


def refusal_table(data: ReportData) -> pl.DataFrame:
    """The 404 share by route, the market's against the collector's own sweep's.

    Parameters
    ----------
    data : ReportData
        Its ``market`` (other users' RFQs), ``observations`` (the collector's; sweeps that
        opened orders are left out: they hold the pools they measure) and ``pools``.

    Returns
    -------
    polars.DataFrame
        One row per route and source (``market``, ``collector sweep``): the 200/404 answers,
        the 404s, their share and its 95 % interval (how it was computed in ``interval``) and,
        for the sweep, the peak share of the destination pool its own quotes held (%).

    Examples
    --------
    >>> from datetime import UTC, datetime
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> obs = pl.DataFrame({"run_id": ["r"] * 3, "round": [0, 0, 1], "observed_at": [t] * 3,
    ...     "src_chain": [1] * 3, "dst_chain": [8453] * 3, "token": ["USDC"] * 3,
    ...     "status": [200, 200, 404], "holds_orders": [False] * 3})
    >>> empty = pl.DataFrame()
    >>> data = ReportData("demo", empty, obs, empty, empty, None, empty, empty)
    >>> refusal_table(data).select("route", "source", "answered", "refused").row(0)
    ('Ethereum→Base USDC', 'collector sweep', 3, 1)
    """
    parts = []
    if data.market.height:
        parts.append(_market(data.market))
    if data.observations.height:
        parts.append(_sweep(data.observations, data.pools))
    columns = [c for c in _COLUMNS if c != "route"]
    frames = [p.select([pl.col(c).cast(_COLUMNS[c]) for c in columns]) for p in parts]
    table = pl.concat(frames) if frames else pl.DataFrame(schema=columns)
    table = table.filter(pl.col("answered") > 0).sort([*ROUTE_KEYS, "source"])
    labels = [route_label(s, d, t) for s, d, t in table.select(ROUTE_KEYS).iter_rows()]
    return table.insert_column(0, pl.Series("route", labels, dtype=pl.String))
