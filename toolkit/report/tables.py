"""The report's tables: the summary, one row per route, and the series behind the figures.

Everything here is a polars frame computed from :class:`ReportData` with the models of
:mod:`toolkit.models`; nothing is drawn or written.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from toolkit.models import (
    capacity_timeline,
    compare_with_tiers,
    effective_fee_bps,
    eta_validity_stats,
    fee_curve,
)
from toolkit.models.bps import answer_counts, share_404
from toolkit.models.intervals import median_interval, wilson, wilson_exprs
from toolkit.models.observed import sweep_refusal_share
from toolkit.report.load import ReportData
from toolkit.report.units import chain_name, token_decimals

__all__ = [
    "ROUTE_KEYS",
    "Estimate",
    "Timeline",
    "backtest_timeline",
    "capacity_steps",
    "chain_name",
    "route_label",
    "route_table",
    "sweep_estimate",
    "token_decimals",
]

#: A route in the report: source chain, destination chain, token (quote types pooled).
ROUTE_KEYS: tuple[str, ...] = ("src_chain", "dst_chain", "token")

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
    """A route's label for people: ``Ethereum→Base USDC``.

    Parameters
    ----------
    src : int or None
        The source chain id.
    dst : int or None
        The destination chain id.
    token : str or None
        The token's symbol (``?`` when None).

    Returns
    -------
    str
        Both chains' names and the token.

    Examples
    --------
    >>> route_label(1, 8453, "USDC"), route_label(8453, 10, None)
    ('Ethereum→Base USDC', 'Base→Optimism ?')
    """
    return f"{chain_name(src)}→{chain_name(dst)} {token or '?'}"


def _with_labels(frame: pl.DataFrame) -> pl.DataFrame:
    labels = [route_label(s, d, t) for s, d, t in frame.select(ROUTE_KEYS).iter_rows()]
    return frame.with_columns(pl.Series("route", labels, dtype=pl.String))


def route_table(data: ReportData) -> pl.DataFrame:
    """One row per route: attempts by outcome, fee quantiles, the fitted fee curve, timing.

    Parameters
    ----------
    data : ReportData
        Its ``observations`` (the store's ``rfq_observations``) and ``tiers``.

    Returns
    -------
    polars.DataFrame
        ``route``, the route's keys, attempts, ``ok`` (200), ``blocked`` (404), ``other``, the
        404 share with its 95 % interval clustered by sweep round, the median and 10th/90th
        percentile effective fee (bps), median latency (ms), the fee curve's fit, eta and
        validity (s), and the median premium over the fee tiers when tiers are stored.

    Examples
    --------
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> obs = pl.DataFrame({"run_id": ["r"] * 3, "round": [0, 0, 1], "observed_at": [t] * 3,
    ...     "src_chain": [1] * 3, "dst_chain": [8453] * 3, "token": ["USDC"] * 3,
    ...     "quote_type": ["ExactInput"] * 3, "amount": [10**8, 10**9, 10**9],
    ...     "status": [200, 200, 404], "latency_ms": [40.0, 35.0, 30.0], "eta": [30, 40, None],
    ...     "valid_until": [1767225660, 1767225660, None], "input_amount": [10**8, 10**9, None],
    ...     "output_amount": [99_900_000, 999_000_000, None]})
    >>> empty = pl.DataFrame()
    >>> data = ReportData("demo", empty, obs, empty, empty, None, empty, empty)
    >>> route_table(data).select("route", "attempts", "ok", "blocked", "fee_median_bps").row(0)
    ('Ethereum→Base USDC', 3, 2, 1, 10.0)
    """
    obs = effective_fee_bps(data.observations)
    keys = list(ROUTE_KEYS)
    fee = pl.col("effective_fee_bps")
    counts = (
        obs.group_by(keys)
        .agg(
            *answer_counts(),
            fee.median().alias("fee_median_bps"),
            fee.quantile(0.1, interpolation="linear").alias("fee_p10_bps"),
            fee.quantile(0.9, interpolation="linear").alias("fee_p90_bps"),
            pl.col("latency_ms").median().alias("latency_p50_ms"),
        )
        .with_columns(
            (pl.col("attempts") - pl.col("ok") - pl.col("blocked")).alias("other"),
            share_404(),
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
    table = table.with_columns(pl.col("src_chain", "dst_chain").cast(pl.Int64)).join(
        _route_intervals(data.observations), on=keys, how="left", nulls_equal=True
    )
    table = _with_labels(table.sort(keys, nulls_last=True))
    columns = [
        "route",
        *keys,
        "attempts",
        "ok",
        "blocked",
        "other",
        "share_404",
        "share_404_ci95_low",
        "share_404_ci95_high",
    ]
    return table.select(columns + [c for c in table.columns if c not in columns])


def _route_intervals(observations: pl.DataFrame) -> pl.DataFrame:
    """Each route's 404-share interval: the sweep's consecutive RFQs are not independent, so
    it is clustered by round (:func:`sweep_estimate`)."""
    return pl.DataFrame(
        [
            (*key, estimate.low, estimate.high)
            for key, part in observations.group_by(list(ROUTE_KEYS))
            for estimate in [sweep_estimate(part)]
        ],
        schema={
            "src_chain": pl.Int64,
            "dst_chain": pl.Int64,
            "token": pl.String,
            "share_404_ci95_low": pl.Float64,
            "share_404_ci95_high": pl.Float64,
        },
        orient="row",
    )


def capacity_steps(data: ReportData) -> pl.DataFrame:
    """Each pool's liquidity step function from the liquidity events, with a pool label.

    Parameters
    ----------
    data : ReportData
        Its ``events`` (the store's ``liquidity_events``).

    Returns
    -------
    polars.DataFrame
        :func:`toolkit.models.capacity_timeline`'s steps (available, reserved, outstanding,
        total, utilization from ``valid_from`` to ``valid_to``) with a ``label``: chain name,
        token and pool type (and the event source's number when there are several).

    Examples
    --------
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> events = pl.DataFrame({"source": ["s"] * 2, "event_id": [1, 2],
    ...     "event": ["liquidity"] * 2, "received_at": [t, t], "chain": [8453] * 2,
    ...     "token": ["USDC"] * 2, "pool_type": ["intents"] * 2, "balance": [10**12] * 2,
    ...     "reserved": [0, 10**11], "outstanding": [0, 0]})
    >>> empty = pl.DataFrame()
    >>> steps = capacity_steps(ReportData("demo", empty, empty, events, empty, None, empty, empty))
    >>> steps["label"][0], steps["utilization"].round(3).to_list()
    ('Base USDC (intents)', [0.0, 0.091])
    """
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

    A request counts as refused when its last RFQ attempt was a 404. The bin is the
    narrowest of 1 min to 1 day that gives at most 48 bins.

    Parameters
    ----------
    data : ReportData
        Its ``backtest_requests`` (``t`` in virtual seconds, ``status``).

    Returns
    -------
    polars.DataFrame
        ``t_start`` (virtual seconds), ``bin_s``, ``requests``, ``refused``, ``rate``,
        ``ci95_low``/``ci95_high`` (Wilson, the bin's requests taken as independent: within a
        bin they are not quite, a full pool refusing arrivals in a row).

    Examples
    --------
    >>> requests = pl.DataFrame({"t": [0.0, 30.0, 90.0], "status": [200, 404, 200]})
    >>> empty = pl.DataFrame()
    >>> data = ReportData("demo", empty, empty, empty, empty, "bt", requests, empty)
    >>> backtest_timeline(data).select("t_start", "bin_s", "requests", "refused").rows()
    [(0.0, 60, 2, 1), (60.0, 60, 1, 0)]
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
        .with_columns(wilson_exprs("refused", "requests"))
        .select("t_start", "bin_s", "requests", "refused", "rate", "ci95_low", "ci95_high")
    )


@dataclass(frozen=True)
class Estimate:
    """An estimated figure for the summary: its value, the sample it rests on (``n``) and its
    95 % interval (the metric's name says how the interval was computed when that matters)."""

    value: float | None
    n: int
    low: float | None
    high: float | None

    @classmethod
    def share(cls, hits: int, trials: int) -> Estimate:
        """A share of independent trials with its Wilson interval."""
        low, high = wilson(hits, trials)
        return cls(hits / trials if trials else None, trials, low, high)

    @classmethod
    def share_404(cls, answers: pl.DataFrame) -> Estimate:
        """The 404 share of the 200/404 answers of ``answers`` (a ``status`` column; other
        statuses left out), each answer taken as an independent trial (Wilson)."""
        counts = answers.select(answer_counts())
        ok, blocked = int(counts["ok"][0]), int(counts["blocked"][0])
        return cls.share(blocked, ok + blocked)

    @classmethod
    def median(cls, values: Sequence[float | None]) -> Estimate:
        """A median with its distribution-free interval."""
        clean = [float(v) for v in values if v is not None and not math.isnan(float(v))]
        low, high = median_interval(clean)
        middle = statistics.median(clean) if clean else None
        return cls(middle, len(clean), low, high)


def sweep_estimate(observations: pl.DataFrame) -> Estimate:
    """The 404 share of a sweep's 200/404 answers with its 95 % interval clustered by
    ``(run_id, round)`` (:func:`toolkit.models.observed.sweep_refusal_share`).

    Parameters
    ----------
    observations : polars.DataFrame
        A sweep's RFQ observations (run_id, round, status).

    Returns
    -------
    Estimate
        The share, the 200/404 answers it rests on (n) and its 95 % interval.

    Examples
    --------
    >>> obs = pl.DataFrame({"run_id": ["r"] * 4, "round": [0, 0, 1, 1],
    ...     "status": [200, 404, 200, 200]})
    >>> estimate = sweep_estimate(obs)
    >>> estimate.value, estimate.n
    (0.25, 4)
    """
    return Estimate(*sweep_refusal_share(observations))
