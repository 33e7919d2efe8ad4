"""``summary.csv``: the report's headline figures as ``section, metric, value, n, ci95_low,
ci95_high`` rows, each estimated figure with its sample size and 95 % interval."""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from toolkit.models import effective_fee_bps
from toolkit.models.intervals import batch_means, clustered_share
from toolkit.report.load import ReportData
from toolkit.report.tables import (
    ROUTE_KEYS,
    Estimate,
    backtest_timeline,
    route_label,
    sweep_estimate,
)

__all__ = ["SUMMARY_COLUMNS", "summary_rows", "summary_table"]

#: The columns of ``summary.csv``.
SUMMARY_COLUMNS = ("section", "metric", "value", "n", "ci95_low", "ci95_high")


def _fmt(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        # Six significant digits, but never an exponent on a large amount: 28200000, not 2.82e+07.
        return f"{value:.0f}" if abs(value) >= 1e6 else f"{value:.6g}"
    return str(value)


Row = tuple[str, str, str, str, str, str]


def _clustered(frame: pl.DataFrame, hits: str, trials: str) -> Estimate:
    share, low, high = clustered_share(frame[hits].to_list(), frame[trials].to_list())
    return Estimate(share, int(frame[trials].sum()), low, high)


def _batch_mean(pools: pl.DataFrame) -> Estimate:
    """The mean utilization over every pool sample, its interval from the means of (about 20)
    consecutive time batches: successive samples of a pool are strongly correlated."""
    return Estimate(*batch_means(pools, "utilization"))


def _row(section: str, metric: str, value: object) -> Row:
    if isinstance(value, Estimate):
        return (
            section,
            metric,
            _fmt(value.value),
            str(value.n),
            _fmt(value.low),
            _fmt(value.high),
        )
    return (section, metric, _fmt(value), "", "", "")


def summary_rows(section: str, items: Sequence[tuple[str, object]]) -> list[Row]:
    """Rows of ``summary.csv`` for one section.

    Parameters
    ----------
    section : str
        The section's name.
    items : sequence of (str, object)
        Each metric's name and value; an :class:`~toolkit.report.tables.Estimate` fills its
        sample size and 95 % interval.

    Returns
    -------
    list of tuple
        ``section, metric, value, n, ci95_low, ci95_high`` as text (floats: 6 significant
        digits, from a million up as whole numbers).

    Examples
    --------
    >>> summary_rows("swap", [("routes", 12), ("median fee (bps)", Estimate(4.5, 30, 4.0, 5.1))])
    [('swap', 'routes', '12', '', '', ''), ('swap', 'median fee (bps)', '4.5', '30', '4', '5.1')]
    """
    return [_row(section, metric, value) for metric, value in items]


def summary_table(
    data: ReportData,
    routes: pl.DataFrame | None,
    extra: Sequence[tuple[str, ...]] = (),
) -> pl.DataFrame:
    """The report's headline figures: ``summary.csv``.

    Parameters
    ----------
    data : ReportData
        The frames the report is drawn from.
    routes : polars.DataFrame or None
        :func:`~toolkit.report.tables.route_table`'s frame (None without RFQ observations).
    extra : sequence of tuple, optional
        Rows of other sections (:func:`summary_rows`), placed last.

    Returns
    -------
    polars.DataFrame
        :data:`SUMMARY_COLUMNS`, text: runs by kind and status, the collector's RFQs, the
        market's, liquidity events, fee tiers and the latest backtest, each where stored;
        ``n`` and the interval set where the value is estimated.

    Examples
    --------
    >>> runs = pl.DataFrame({"kind": ["rfq", "rfq"], "status": ["completed", "failed"]})
    >>> empty = pl.DataFrame()
    >>> data = ReportData("demo", runs, empty, empty, empty, None, empty, empty)
    >>> summary_table(data, None).select("metric", "value").rows()
    [('runs', '2'), ('rfq runs completed', '1'), ('rfq runs failed', '1')]
    """
    runs = data.runs.group_by("kind", "status").agg(pl.len().alias("n")).sort("kind", "status")
    rows: list[tuple[str, ...]] = list(
        summary_rows(
            "runs",
            [("runs", data.runs.height)]
            + [(f"{kind} runs {status}", n) for kind, status, n in runs.iter_rows()],
        )
    )
    if data.observations.height:
        rows += _rfq_rows(data.observations, routes)
    rows += _market_rows(data.market) + _event_rows(data) + _backtest_rows(data)
    # Rows built elsewhere as (section, metric, value) get empty sample and interval cells.
    rows += [(*row, "", "", "")[:6] for row in extra]
    return pl.DataFrame(rows, schema=list(SUMMARY_COLUMNS), orient="row")


def _rfq_rows(obs: pl.DataFrame, routes: pl.DataFrame | None) -> list[Row]:
    """The collector's sweeps: attempts by status, their 404 share, fees, latency, span; and
    the median fee per route."""
    by_status = obs.group_by("status").agg(pl.len().alias("n")).sort("status")
    fees = effective_fee_bps(obs)
    first, last = obs["observed_at"].min(), obs["observed_at"].max()
    own = obs.filter(~pl.col("holds_orders")) if "holds_orders" in obs.columns else obs
    rows = summary_rows(
        "rfq (the collector's sweeps)",
        [
            ("attempts", obs.height),
            *[(f"attempts with status {s}", n) for s, n in by_status.iter_rows()],
            (
                "404 share of 200/404 answers (sweeps that opened no order; 95 % clustered "
                "by round, includes refusals the sweep's own quotes caused)",
                sweep_estimate(own),
            ),
            ("routes", 0 if routes is None else routes.height),
            ("median fee (bps)", Estimate.median(fees["effective_fee_bps"].to_list())),
            ("median latency (ms)", Estimate.median(obs["latency_ms"].to_list())),
            ("first attempt (UTC)", first.isoformat() if first is not None else None),  # type: ignore[union-attr]
            ("last attempt (UTC)", last.isoformat() if last is not None else None),  # type: ignore[union-attr]
        ],
    )
    answered = fees.filter(pl.col("effective_fee_bps").is_not_null())
    by_route = {
        key: Estimate.median(part["effective_fee_bps"].to_list())
        for key, part in answered.group_by(list(ROUTE_KEYS))
    }
    return rows + summary_rows(
        "median fee by route (bps)",
        [
            (route_label(*key), by_route[key])
            for key in sorted(by_route, key=lambda k: (k[0] or 0, k[1] or 0, str(k[2])))
        ],
    )


def _market_rows(market: pl.DataFrame) -> list[Row]:
    """Other users' RFQs answered 200 or 404, and their 404 share."""
    answered = market.filter(pl.col("status").is_in([200, 404])) if market.height else None
    if answered is None or not answered.height:
        return []
    return summary_rows(
        "market (other users' RFQs)",
        [
            ("requests answered 200 or 404", answered.height),
            (
                "404 share (Wilson 95 %: each request an independent trial)",
                Estimate.share_404(answered),
            ),
        ],
    )


def _event_rows(data: ReportData) -> list[Row]:
    """Liquidity events by kind and the pools they name; fee-tier snapshots."""
    rows: list[Row] = []
    events = data.events
    if events.height:
        liquidity = events.filter(pl.col("event") == "liquidity")
        pools = liquidity.select("source", "chain", "token", "pool_type").unique()
        rows += summary_rows(
            "liquidity events",
            [
                ("events", events.height),
                ("liquidity events", liquidity.height),
                ("fee events", events.height - liquidity.height),
                ("pools", pools.height),
            ],
        )
    if data.tiers.height:
        rows += summary_rows(
            "fee tiers",
            [
                ("snapshots", data.tiers["snapshot_id"].n_unique()),
                ("tiers", data.tiers.height),
            ],
        )
    return rows


def _backtest_rows(data: ReportData) -> list[Row]:
    """The latest backtest: requests by outcome, its 404 share and pool utilization."""
    if data.backtest_run is None or not data.backtest_requests.height:
        return []
    backtests = data.runs.filter(pl.col("kind") == "backtest").height
    requests = data.backtest_requests
    outcome = requests.group_by("outcome").agg(pl.len().alias("n")).sort("outcome")
    return summary_rows(
        "backtest",
        [
            ("backtest runs", backtests),
            ("latest run", data.backtest_run),
            ("requests", requests.height),
            *[(f"outcome {o}", n) for o, n in outcome.iter_rows()],
            (
                "404 share of requests (95 % clustered by time bin)",
                _clustered(backtest_timeline(data), "refused", "requests"),
            ),
            ("peak pool utilization", data.backtest_pools["utilization"].max()),
            (
                "mean pool utilization (95 %: batch means over time bins)",
                _batch_mean(data.backtest_pools),
            ),
        ],
    )
