"""``write_report``: read the store, compute the tables, draw the figures, write the files."""

from __future__ import annotations

import math
import os
from pathlib import Path

import polars as pl
from matplotlib.figure import Figure

from toolkit.models import effective_fee_bps, fee_curve
from toolkit.models.bps import gain_bps
from toolkit.models.economics import capital_sweep, pool_economics
from toolkit.models.pricing import ROUTE
from toolkit.report import figures as figs
from toolkit.report import surface_figures as sfigs
from toolkit.report.economics import priced_pool_totals
from toolkit.report.load import ReportData, display_path, load_data
from toolkit.report.refusals import refusal_table
from toolkit.report.result import ReportError, ReportResult
from toolkit.report.style import simulated_titles
from toolkit.report.surfaces import (
    HF_WATCH,
    authorizations,
    borrow_points,
    borrow_table,
    credit_accounts_table,
    credit_book_table,
    credit_collateral_table,
    findings_table,
    swap_impact_table,
)
from toolkit.report.tables import (
    ROUTE_KEYS,
    Estimate,
    backtest_timeline,
    capacity_steps,
    route_label,
    route_table,
    summary_rows,
    summary_table,
)
from toolkit.report.units import format_usd, priced, utc_date, with_human_amounts
from toolkit.store import Store

#: What summary.md says when any run observed a simulated target.
_SIMULATED_NOTE = (
    "\n\n**Simulated data**: runs in this database observed the embedded (simulated) service "
    "or a backtest (`collection_runs.target_kind`); its prices are the scenario's."
)

__all__ = ["REPORT_FILES", "write_report"]

#: Every file a report may write. Files from an earlier report that this one does not write
#: (its table is now empty) are removed, so the directory never mixes two reports.
REPORT_FILES: tuple[str, ...] = (
    "fee_curve.png",
    "blocking.png",
    "capacity_timeline.png",
    "eta_validity.png",
    "backtest.png",
    "borrow.png",
    "swap_impact.png",
    "credit_health.png",
    "economics.png",
    "capital_404.png",
    "summary.csv",
    "routes.csv",
    "fee_curve.csv",
    "blocking.csv",
    "capacity_timeline.csv",
    "eta_validity.csv",
    "backtest_timeline.csv",
    "borrow.csv",
    "findings.csv",
    "swap_impact.csv",
    "credit_accounts.csv",
    "credit_collateral.csv",
    "economics.csv",
    "capital_404.csv",
    "summary.md",
)


class _Writer:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.figures: list[Path] = []
        self.tables: list[Path] = []
        self.skipped: list[str] = []
        self.summary: list[tuple[str, ...]] = []
        # (title, table, figures drawn for it): shown in this order in summary.md.
        self.sections: list[tuple[str, pl.DataFrame, tuple[str, ...]]] = []

    def figure(self, name: str, figure: Figure) -> None:
        self.figures.append(figs.save(figure, self.out / name))

    def table(self, name: str, frame: pl.DataFrame) -> None:
        path = self.out / name
        frame.write_csv(path, float_precision=6)
        self.tables.append(path)


def _out_dir(out_dir: object) -> Path:
    if not isinstance(out_dir, str | os.PathLike):
        raise TypeError(f"out_dir: must be a path, got {type(out_dir).__name__}")
    out = Path(out_dir).expanduser()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportError(
            f"{display_path(out)}: cannot create the report directory ({exc.strerror or exc})"
        ) from None
    return out


def write_report(
    store_or_path: Store | str | os.PathLike[str], out_dir: str | os.PathLike[str]
) -> ReportResult:
    """Write the report's figures (PNG) and tables (CSV, Markdown) for a toolkit DuckDB file.

    Each section is written only when its table has rows; report files from an earlier run that
    this one does not write are removed. The figures come from :mod:`toolkit.models`; this
    package prices them (whole tokens, USD at the stored prices) and draws them.

    Parameters
    ----------
    store_or_path : toolkit.store.Store or path
        An open store (used as is, left open: pass it when this process already has the file
        open) or the path of a DuckDB file (opened read-only, then closed).
    out_dir : path
        Where the files go; created if needed.

    Returns
    -------
    ReportResult
        The figures and tables written, the Markdown summary, and ``skipped``: the sections
        left out and why. :class:`ReportError` (naming the path and what to run) for a missing
        file or a store without collection runs.

    Examples
    --------
    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     write_report(store, "unused")
    Traceback (most recent call last):
    ...
    toolkit.report.result.ReportError: no collection runs in an in-memory store: run ...
    """
    data = load_data(store_or_path)
    with priced(data.prices, data.tokens), simulated_titles(data.simulated):
        return _write(data, _out_dir(out_dir))


def _write(data: ReportData, out: Path) -> ReportResult:
    writer = _Writer(out)
    try:
        routes = _rfq_sections(data, writer)
        _capacity_section(data, writer)
        _backtest_section(data, writer)
        _borrow_section(data, writer)
        _findings_section(data, writer)
        _swap_section(data, writer)
        _credit_section(data, writer)
        _economics_section(data, writer)
        summary = summary_table(data, routes, writer.summary)
        writer.table("summary.csv", summary)
        markdown = out / "summary.md"
        markdown.write_text(_markdown(data, summary, routes, writer), encoding="utf-8")
    except OSError as exc:
        raise ReportError(
            f"{display_path(out)}: cannot write the report ({exc.strerror or exc})"
        ) from None
    written = {p.name for p in (*writer.figures, *writer.tables, markdown)}
    for name in REPORT_FILES:
        stale = out / name
        if name not in written and stale.is_file():
            stale.unlink()
    return ReportResult(
        out, tuple(writer.figures), tuple(writer.tables), markdown, tuple(writer.skipped)
    )


def _rfq_sections(data: ReportData, writer: _Writer) -> pl.DataFrame | None:
    obs = data.observations
    if obs.height == 0:
        writer.skipped.append("fee curve, 404 rate and eta/validity: no rows in rfq_observations")
        return None
    routes = route_table(data)
    writer.table("routes.csv", routes)
    answered = effective_fee_bps(obs).filter(pl.col("effective_fee_bps").is_not_null())
    if answered.height:
        labels = [
            route_label(s, d, t)
            for s, d, t in answered.select("src_chain", "dst_chain", "token").iter_rows()
        ]
        labelled = answered.with_columns(pl.Series("route", labels, dtype=pl.String))
        writer.figure("fee_curve.png", figs.fee_curve_figure(labelled))
        curves = fee_curve(obs, by=ROUTE)
        names = [route_label(s, d, t) for s, d, t in curves.select(ROUTE_KEYS).iter_rows()]
        writer.table("fee_curve.csv", curves.insert_column(0, pl.Series("route", names)))
    else:
        writer.skipped.append("fee curve: rfq_observations holds no priced 200 answer")
    _blocking_section(data, writer)
    if routes["eta_median_s"].drop_nulls().len():
        writer.figure("eta_validity.png", figs.eta_validity_figure(routes))
        writer.table(
            "eta_validity.csv",
            routes.select(
                "route",
                *ROUTE_KEYS,
                "eta_median_s",
                "eta_p90_s",
                "validity_mean_s",
                "validity_min_s",
                "validity_max_s",
            ),
        )
    else:
        writer.skipped.append("eta/validity: rfq_observations holds no 200 answer with an eta")
    return routes


def _blocking_section(data: ReportData, writer: _Writer) -> None:
    refusals = refusal_table(data)
    if refusals.height == 0:
        writer.skipped.append(
            "404 share: no market observations (runs of kind traffic) and no sweep that opened "
            "no order (a sweep that follows its quotes into orders holds each pool 60 s and "
            "measures its own refusals)"
        )
        return
    writer.figure("blocking.png", figs.blocking_figure(refusals))
    writer.table("blocking.csv", refusals)
    writer.sections.append(
        (
            "404 share by route (95 % intervals: market Wilson, sweep clustered by round)",
            refusals.select(
                "route",
                "source",
                "answered",
                "refused",
                "share_404",
                "ci95_low",
                "ci95_high",
                "own_hold_peak_pct",
            ),
            ("blocking.png",),
        )
    )


def _capacity_section(data: ReportData, writer: _Writer) -> None:
    if data.events.filter(pl.col("event") == "liquidity").height == 0:
        writer.skipped.append("capacity timeline: no liquidity rows in liquidity_events")
        return
    steps = capacity_steps(data)
    writer.figure("capacity_timeline.png", figs.capacity_figure(steps))
    amounts = ["available", "reserved", "outstanding", "total"]
    writer.table(
        "capacity_timeline.csv", with_human_amounts(steps, amounts, chain="chain", token="token")
    )


def _backtest_section(data: ReportData, writer: _Writer) -> None:
    if data.backtest_run is None or data.backtest_pools.height == 0:
        writer.skipped.append("backtest: no rows in backtest_pools")
        return
    timeline = backtest_timeline(data)
    figure = figs.backtest_figure(data.backtest_pools, timeline, data.backtest_run)
    writer.figure("backtest.png", figure)
    writer.table("backtest_timeline.csv", timeline)


def _borrow_section(data: ReportData, writer: _Writer) -> None:
    borrow = data.borrow
    if borrow.height == 0:
        writer.skipped.append("borrow quotes: no rows in borrow_quotes")
        return
    table = borrow_table(borrow)
    writer.table("borrow.csv", table)
    writer.summary += summary_rows(
        "borrow",
        [
            ("attempts", borrow.height),
            ("quotes (200)", int((borrow["status"] == 200).sum())),
            (
                "404 share of 200/404 answers (Wilson 95 %; consecutive requests of a sweep are "
                "not independent: read as a lower bound on the uncertainty)",
                Estimate.share_404(borrow),
            ),
            ("median fee (bps)", Estimate.median(borrow["fee_bps"].to_list())),
            ("loans authorized (liquidity events)", authorizations(data.events)),
        ],
    )
    writer.sections.append(
        (
            "Borrow quotes",
            table.select(
                "route",
                "attempts",
                "ok",
                "blocked",
                "share_404",
                "share_404_ci95_low",
                "share_404_ci95_high",
                "fee_median_bps",
            ),
            ("borrow.png",),
        )
    )
    points = borrow_points(borrow)
    if points.height:
        writer.figure("borrow.png", sfigs.borrow_figure(points))
    else:
        writer.skipped.append("borrow figure: borrow_quotes holds no priced 200 answer")


def _findings_section(data: ReportData, writer: _Writer) -> None:
    transactions = data.transactions
    if transactions.height == 0:
        writer.skipped.append("calldata-guard findings: no rows in transactions")
        return
    table = findings_table(transactions)
    writer.table("findings.csv", table)
    checked = transactions.filter(pl.col("findings").is_not_null())
    safe = int((checked["findings"] == "[]").sum())
    writer.summary += summary_rows(
        "calldata guard",
        [
            ("transactions fetched", transactions.height),
            ("checked by the guard", checked.height),
            ("safe (no finding)", safe),
            ("with findings", checked.height - safe),
            *[
                (f"findings: {rule} ({severity})", n)
                for rule, severity, n in table.select("rule", "severity", "count").rows()
            ],
        ],
    )
    if table.height:
        writer.sections.append(("Calldata-guard findings by rule", table, ()))


def _swap_section(data: ReportData, writer: _Writer) -> None:
    swaps = data.swaps
    if swaps.height == 0:
        writer.skipped.append("swap routes: no rows in swap_routes")
        return
    # Several swap-route runs watch a moving market: impact is the latest run's, and each pair's
    # rate at its smallest size is set against the first run's.
    runs = swaps.group_by("run_id").agg(pl.col("observed_at").min()).sort("observed_at")["run_id"]
    impact = swap_impact_table(swaps.filter(pl.col("run_id") == runs[-1]))
    writer.table("swap_impact.csv", impact)
    moved: list[tuple[str, object]] = []
    if runs.len() > 1:
        keys = ["chain", "pair", "size_usd"]
        first = swap_impact_table(swaps.filter(pl.col("run_id") == runs[0]))
        change = (
            impact.filter(pl.col("size_usd") == pl.col("size_usd").min().over("chain", "pair"))
            .join(first.select(*keys, pl.col("rate").alias("rate_first")), on=keys)
            .filter(pl.col("rate_first") > 0)
            .sort("chain", "pair")
        )
        moved = [
            (f"rate change since the first run: {pair} ({network}) (bps)", round(bps, 2))
            for network, pair, bps in change.select(
                "chain", "pair", gain_bps(pl.col("rate"), pl.col("rate_first"))
            ).rows()
        ]
    largest = impact.filter(pl.col("size_usd") == pl.col("size_usd").max().over("chain", "pair"))
    writer.summary += summary_rows(
        "swap",
        [
            ("route requests", swaps.height),
            ("swap-route runs", runs.len()),
            ("routes (200)", int((swaps["status"] == 200).sum())),
            ("no route (404) share (Wilson 95 %)", Estimate.share_404(swaps)),
            ("pairs × chains", impact.select("chain", "pair").n_unique()),
            *[
                (f"impact at {format_usd(size)}: {pair} ({network}) (bps)", bps)
                for network, pair, size, bps in largest.select(
                    "chain", "pair", "size_usd", "impact_bps"
                ).rows()
            ],
            *moved,
        ],
    )
    if impact.height:
        by_size = (
            impact.with_columns(
                pl.col("size_usd").map_elements(format_usd, return_dtype=pl.String).alias("size")
            )
            .pivot(on="size", index=["chain", "pair"], values="impact_bps", sort_columns=False)
            .sort("chain", "pair")
        )
        writer.sections.append(
            ("Swap price impact (bps) by trade size", by_size, ("swap_impact.png",))
        )
        writer.figure("swap_impact.png", sfigs.swap_figure(impact))
    else:
        writer.skipped.append("swap figure: swap_routes holds no answered route")


def _credit_section(data: ReportData, writer: _Writer) -> None:
    if data.credit_accounts.height == 0:
        writer.skipped.append("credit health: no rows in credit_accounts")
        return
    accounts = credit_accounts_table(data.credit_accounts)
    writer.table("credit_accounts.csv", accounts)
    writer.summary += summary_rows(
        "credit (as of each account's latest observation)", _book(accounts)
    )
    collateral = pl.DataFrame()
    if data.credit_protocol.height:
        collateral = credit_collateral_table(data.credit_protocol)
        writer.table("credit_collateral.csv", collateral)
    writer.sections.append(
        (
            "Credit book by credit asset (each account as last observed)",
            credit_book_table(accounts),
            (),
        )
    )
    writer.sections.append(("Collateral accepted", collateral, ("credit_health.png",)))
    writer.figure("credit_health.png", sfigs.credit_figure(accounts))


def _book(accounts: pl.DataFrame) -> list[tuple[str, object]]:
    """The book's headline rows: accounts, where their observations came from, and per credit
    asset (never summed across currencies) the debt, health bands and median health factor."""
    runs = accounts.select("run_id").n_unique()
    first, last = accounts["observed_at"].min(), accounts["observed_at"].max()
    rows: list[tuple[str, object]] = [
        ("accounts", accounts["account"].n_unique()),
        ("credit runs the latest observations come from", runs),
        ("oldest latest observation (UTC)", utc_date(first)),  # type: ignore[arg-type]
        ("newest observation (UTC)", utc_date(last)),  # type: ignore[arg-type]
    ]
    hf = pl.col("health_factor")
    for (asset,), part in accounts.sort("asset").group_by("asset", maintain_order=True):
        indebted = part.filter(hf.is_not_null() & (pl.col("debt") > 0))
        rows += [
            (f"{asset}: accounts with debt", indebted.height),
            (f"{asset}: health factor below 1", indebted.filter(hf < 1).height),
            (f"{asset}: health factor below {HF_WATCH:g}", indebted.filter(hf < HF_WATCH).height),
            (
                f"{asset}: median health factor",
                Estimate.median(indebted["health_factor"].to_list()),
            ),
            (f"{asset}: total debt ({asset})", part["debt"].sum()),
        ]
    return rows


def _economics_section(data: ReportData, writer: _Writer) -> None:
    if data.backtest_run is None or data.backtest_pool_totals.height == 0:
        writer.skipped.append("economics: no rows in backtest_pools")
        return
    priced = priced_pool_totals(data.backtest_pool_totals)
    pools = pool_economics(priced, data.backtest_run)
    writer.table("economics.csv", pools)
    total = pools.row(pools.height - 1, named=True)
    writer.summary += summary_rows(
        "economics",
        [
            ("backtest run", data.backtest_run),
            ("span (hours)", total["span_hours"]),
            ("pool capital (USD)", total["capital_usd"]),
            ("fee revenue (USD)", total["fee_revenue_usd"]),
            ("return on capital over the span (%)", total["return_pct"]),
            ("return on capital, annualised (%)", total["annualised_return_pct"]),
        ],
    )
    writer.sections.append(
        (
            "Economics of the latest backtest",
            pools.select(
                pl.col("label").alias("pool"),
                "capital_usd",
                "fee_revenue_usd",
                "return_pct",
                "annualised_return_pct",
                "mean_utilization_pct",
            ),
            ("economics.png",),
        )
    )
    writer.figure("economics.png", sfigs.economics_figure(pools, data.backtest_run))
    sweep = capital_sweep(data.backtest_runs, priced)
    if sweep.height < 2:
        writer.skipped.append(
            "capital against 404 rate: no pool_scale sweep stored (store backtests of one flow "
            "at two or more pool_scale overrides)"
        )
        return
    writer.table("capital_404.csv", sweep)
    writer.figure("capital_404.png", sfigs.capital_figure(sweep))
    writer.sections.append(("Capital against 404 rate", sweep.drop("run_id"), ("capital_404.png",)))


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}"
    return str(value).replace("|", "\\|")


def markdown_table(frame: pl.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of ``frame`` (floats to 4 significant digits, from
    10,000 up as whole numbers with thousands separators)."""
    lines = [
        "| " + " | ".join(frame.columns) + " |",
        "|" + "|".join("---" for _ in frame.columns) + "|",
    ]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join(lines)


def _markdown(
    data: ReportData, summary: pl.DataFrame, routes: pl.DataFrame | None, writer: _Writer
) -> str:
    parts = [
        f"# Toolkit report{' (simulated)' if data.simulated else ''}\n\n"
        f"Source: `{data.where}`.{_SIMULATED_NOTE if data.simulated else ''}\n",
        "## Summary\n",
        markdown_table(summary),
    ]
    if routes is not None and routes.height:
        columns = [
            "route",
            "attempts",
            "ok",
            "blocked",
            "share_404",
            "share_404_ci95_low",
            "share_404_ci95_high",
            "fee_median_bps",
            "fit_bps_per_decade",
            "eta_median_s",
            "validity_mean_s",
        ]
        parts += ["\n## Routes\n", markdown_table(routes.select(columns))]
    drawn = [path.name for path in writer.figures]
    placed: set[str] = set()
    for title, frame, names in writer.sections:
        parts.append(f"\n## {title}\n")
        if frame.width:
            parts.append(markdown_table(frame))
        for name in names:
            if name in drawn:
                parts.append(f"\n![{name.removesuffix('.png')}]({name})\n")
                placed.add(name)
    rest = [name for name in drawn if name not in placed]
    if rest:
        parts.append("\n## Figures\n")
        parts += [f"![{name.removesuffix('.png')}]({name})\n" for name in rest]
    parts.append("\n## Tables\n")
    parts += [f"- [{path.name}]({path.name})" for path in writer.tables]
    if writer.skipped:
        parts.append("\n## Left out\n")
        parts += [f"- {reason}" for reason in writer.skipped]
    return "\n".join(parts) + "\n"
