"""The report's tables: the summary, one row per route, and the series behind the figures.

Everything here is a polars frame computed from :class:`ReportData` with the models of
:mod:`toolkit.models`; nothing is drawn or written.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from toolkit.models import (
    capacity_timeline,
    compare_with_tiers,
    effective_fee_bps,
    empirical_blocking,
    eta_validity_stats,
    fee_curve,
)
from toolkit.report.load import ReportData
from toolkit.report.units import chain_name, token_decimals

__all__ = [
    "ROUTE_KEYS",
    "Timeline",
    "backtest_timeline",
    "blocking_windows",
    "capacity_steps",
    "chain_name",
    "route_label",
    "route_table",
    "summary_rows",
    "summary_table",
    "token_decimals",
]

#: A route in the report: source chain, destination chain, token (quote types pooled).
ROUTE_KEYS: tuple[str, ...] = ("src_chain", "dst_chain", "token")

# Candidate window lengths for the 404-rate series, shortest first, in seconds.
_WINDOWS: tuple[tuple[str, int], ...] = (
    ("10s", 10),
    ("30s", 30),
    ("1m", 60),
    ("5m", 300),
    ("15m", 900),
    ("1h", 3600),
    ("6h", 21_600),
    ("1d", 86_400),
)
_BINS: tuple[int, ...] = (60, 300, 900, 1800, 3600, 7200, 21_600, 86_400)
_MAX_WINDOWS = 40


@dataclass(frozen=True)
class Timeline:
    """Datetimes as minutes since the earliest one, and that start as a label."""

    start_us: int

    @classmethod
    def of(cls, *columns: pl.Series) -> Timeline:
        """The timeline starting at the earliest value of the (non-empty) datetime columns."""
        starts = [int(c.dt.epoch("us").min()) for c in columns if c.drop_nulls().len()]  # type: ignore[arg-type]
        return cls(min(starts) if starts else 0)

    def minutes(self, column: pl.Series) -> list[float]:
        """Minutes from the start to each value of ``column``."""
        return ((column.dt.epoch("us") - self.start_us) / 60e6).to_list()

    @property
    def label(self) -> str:
        """``minutes since 2025-10-09 20:53:20 UTC``."""
        start = datetime.fromtimestamp(self.start_us / 1e6, UTC)
        return f"minutes since {start:%Y-%m-%d %H:%M:%S} UTC"


def route_label(src: int | None, dst: int | None, token: str | None) -> str:
    """``Ethereum→Base USDC``."""
    return f"{chain_name(src)}→{chain_name(dst)} {token or '?'}"


def _with_labels(frame: pl.DataFrame) -> pl.DataFrame:
    labels = [route_label(s, d, t) for s, d, t in frame.select(ROUTE_KEYS).iter_rows()]
    return frame.with_columns(pl.Series("route", labels, dtype=pl.String))


def route_table(data: ReportData) -> pl.DataFrame:
    """One row per route: attempts by outcome, fee quantiles, the fitted fee curve, timing."""
    obs = effective_fee_bps(data.observations)
    keys = list(ROUTE_KEYS)
    status, fee = pl.col("status"), pl.col("effective_fee_bps")
    counts = (
        obs.group_by(keys)
        .agg(
            pl.len().cast(pl.Int64).alias("attempts"),
            (status == 200).sum().cast(pl.Int64).alias("ok"),
            (status == 404).sum().cast(pl.Int64).alias("blocked"),
            fee.median().alias("fee_median_bps"),
            fee.quantile(0.1, interpolation="linear").alias("fee_p10_bps"),
            fee.quantile(0.9, interpolation="linear").alias("fee_p90_bps"),
            pl.col("latency_ms").median().alias("latency_p50_ms"),
        )
        .with_columns(
            (pl.col("attempts") - pl.col("ok") - pl.col("blocked")).alias("other"),
            pl.when(pl.col("ok") + pl.col("blocked") > 0)
            .then(pl.col("blocked") / (pl.col("ok") + pl.col("blocked")))
            .alias("share_404"),
        )
    )
    fits = fee_curve(data.observations, by=keys).select(
        *keys,
        pl.col("intercept").alias("fit_intercept_bps"),
        pl.col("log10_amount_coef").alias("fit_bps_per_decade"),
        pl.col("r2").alias("fit_r2"),
    )
    timing = eta_validity_stats(data.observations, by=keys).select(
        *keys,
        pl.col("eta_median").alias("eta_median_s"),
        pl.col("eta_p90").alias("eta_p90_s"),
        "validity_mean_s",
        "validity_min_s",
        "validity_max_s",
    )
    table = counts.join(fits, on=keys, how="left", nulls_equal=True).join(
        timing, on=keys, how="left", nulls_equal=True
    )
    if data.tiers.height:
        compared = compare_with_tiers(data.observations, data.tiers)
        premium = compared.group_by(keys).agg(
            pl.col("premium_bps").median().alias("tier_premium_median_bps")
        )
        table = table.join(premium, on=keys, how="left", nulls_equal=True)
    table = _with_labels(table.sort(keys, nulls_last=True))
    columns = ["route", *keys, "attempts", "ok", "blocked", "other", "share_404"]
    return table.select(columns + [c for c in table.columns if c not in columns])


def _window(seconds: float) -> tuple[str, int]:
    for name, length in _WINDOWS:
        if seconds / length <= _MAX_WINDOWS:
            return name, length
    return _WINDOWS[-1]


def blocking_windows(data: ReportData) -> tuple[pl.DataFrame, str]:
    """404 share per route and time window (:func:`empirical_blocking`), and the window used.

    The window is the shortest of 10 s, 30 s, 1 m, 5 m, 15 m, 1 h, 6 h, 1 d that splits the
    collection's span into at most 40 windows.
    """
    obs = data.observations
    micros = obs["observed_at"].dt.epoch("us")
    span = (int(micros.max()) - int(micros.min())) / 1e6 if obs.height else 0.0  # type: ignore[arg-type]
    name, _ = _window(span)
    frame = empirical_blocking(obs, by=list(ROUTE_KEYS), window=name)
    return _with_labels(frame), name


def capacity_steps(data: ReportData) -> pl.DataFrame:
    """Each pool's liquidity step function from the liquidity events, with a pool label."""
    steps = capacity_timeline(data.events)
    sources = steps["source"].unique().sort().to_list()
    labels = []
    for source, chain, token, pool_type in steps.select(
        "source", "chain", "token", "pool_type"
    ).iter_rows():
        label = f"{chain_name(chain)} {token} ({pool_type})"
        if len(sources) > 1:
            label += f" [source {sources.index(source) + 1}]"
        labels.append(label)
    return steps.with_columns(pl.Series("label", labels, dtype=pl.String))


def _bin_width(span: float) -> int:
    for width in _BINS:
        if span / width <= 48:
            return width
    return _BINS[-1]


def backtest_timeline(data: ReportData) -> pl.DataFrame:
    """The backtest's requests per time bin: how many, how many got a 404, and that share.

    Columns: ``t_start`` (virtual seconds), ``bin_s``, ``requests``, ``refused``, ``rate``,
    ``std_error`` (binomial). A request counts as refused when its last RFQ attempt was a 404.
    """
    requests = data.backtest_requests
    end = float(requests.select(pl.col("t").max().fill_null(0.0)).item())
    width = _bin_width(end)
    return (
        requests.with_columns((pl.col("t") // width * width).alias("t_start"))
        .group_by("t_start")
        .agg(
            pl.len().cast(pl.Int64).alias("requests"),
            (pl.col("status") == 404).sum().cast(pl.Int64).alias("refused"),
        )
        .sort("t_start")
        .with_columns(
            pl.lit(width, pl.Int64).alias("bin_s"),
            (pl.col("refused") / pl.col("requests")).alias("rate"),
        )
        .with_columns(
            (pl.col("rate") * (1.0 - pl.col("rate")) / pl.col("requests")).sqrt().alias("std_error")
        )
        .select("t_start", "bin_s", "requests", "refused", "rate", "std_error")
    )


def _fmt(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        # Six significant digits, but never an exponent on a large amount: 28200000, not 2.82e+07.
        return f"{value:.0f}" if abs(value) >= 1e6 else f"{value:.6g}"
    return str(value)


def _rows(section: str, items: Sequence[tuple[str, object]]) -> list[tuple[str, str, str]]:
    return [(section, metric, _fmt(value)) for metric, value in items]


def summary_rows(section: str, items: Sequence[tuple[str, object]]) -> list[tuple[str, str, str]]:
    """``section, metric, value`` rows with values formatted as text (floats: 6 digits)."""
    return _rows(section, items)


def summary_table(
    data: ReportData,
    routes: pl.DataFrame | None,
    extra: Sequence[tuple[str, str, str]] = (),
) -> pl.DataFrame:
    """The headline figures as ``section, metric, value`` rows (values formatted as text);
    ``extra`` rows (other sections, :func:`summary_rows`) come last."""
    rows: list[tuple[str, str, str]] = []
    runs = data.runs.group_by("kind", "status").agg(pl.len().alias("n")).sort("kind", "status")
    rows += _rows(
        "runs",
        [("runs", data.runs.height)]
        + [(f"{kind} runs {status}", n) for kind, status, n in runs.iter_rows()],
    )
    obs = data.observations
    if obs.height:
        status = pl.col("status")
        by_status = obs.group_by("status").agg(pl.len().alias("n")).sort("status")
        answered = obs.filter(status.is_in([200, 404]))
        fees = effective_fee_bps(obs)["effective_fee_bps"]
        first, last = obs["observed_at"].min(), obs["observed_at"].max()
        rows += _rows(
            "rfq",
            [
                ("attempts", obs.height),
                *[(f"attempts with status {s}", n) for s, n in by_status.iter_rows()],
                (
                    "404 share of 200/404 answers",
                    (answered["status"] == 404).sum() / answered.height
                    if answered.height
                    else None,
                ),
                ("routes", 0 if routes is None else routes.height),
                ("median fee (bps)", fees.median()),
                ("median latency (ms)", obs["latency_ms"].median()),
                ("first attempt (UTC)", first.isoformat() if first is not None else None),  # type: ignore[union-attr]
                ("last attempt (UTC)", last.isoformat() if last is not None else None),  # type: ignore[union-attr]
            ],
        )
    if routes is not None and routes.height:
        rows += _rows(
            "median fee by route (bps)",
            list(zip(routes["route"].to_list(), routes["fee_median_bps"].to_list(), strict=True)),
        )
    events = data.events
    if events.height:
        liquidity = events.filter(pl.col("event") == "liquidity")
        pools = liquidity.select("source", "chain", "token", "pool_type").unique()
        rows += _rows(
            "liquidity events",
            [
                ("events", events.height),
                ("liquidity events", liquidity.height),
                ("fee events", events.height - liquidity.height),
                ("pools", pools.height),
            ],
        )
    if data.tiers.height:
        rows += _rows(
            "fee tiers",
            [
                ("snapshots", data.tiers["snapshot_id"].n_unique()),
                ("tiers", data.tiers.height),
            ],
        )
    backtests = data.runs.filter(pl.col("kind") == "backtest").height
    if data.backtest_run is not None and data.backtest_requests.height:
        requests = data.backtest_requests
        outcome = requests.group_by("outcome").agg(pl.len().alias("n")).sort("outcome")
        rows += _rows(
            "backtest",
            [
                ("backtest runs", backtests),
                ("latest run", data.backtest_run),
                ("requests", requests.height),
                *[(f"outcome {o}", n) for o, n in outcome.iter_rows()],
                ("404 share of requests", requests.select((pl.col("status") == 404).mean()).item()),
                ("peak pool utilization", data.backtest_pools["utilization"].max()),
                ("mean pool utilization", data.backtest_pools["utilization"].mean()),
            ],
        )
    rows += extra
    return pl.DataFrame(rows, schema=["section", "metric", "value"], orient="row")
