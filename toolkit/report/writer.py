"""``write_report``: read the store, compute the tables, draw the figures, write the files."""

from __future__ import annotations

import math
import os
from pathlib import Path

import polars as pl
from matplotlib.figure import Figure

from toolkit.models import effective_fee_bps, fee_curve
from toolkit.models.pricing import ROUTE
from toolkit.report import figures as figs
from toolkit.report.load import ReportData, display_path, load_data
from toolkit.report.result import ReportError, ReportResult
from toolkit.report.tables import (
    ROUTE_KEYS,
    backtest_timeline,
    blocking_windows,
    capacity_steps,
    route_label,
    route_table,
    summary_table,
)
from toolkit.store import Store

__all__ = ["REPORT_FILES", "write_report"]

#: Every file a report may write. Files from an earlier report that this one does not write
#: (its table is now empty) are removed, so the directory never mixes two reports.
REPORT_FILES: tuple[str, ...] = (
    "fee_curve.png",
    "blocking.png",
    "capacity_timeline.png",
    "eta_validity.png",
    "backtest.png",
    "summary.csv",
    "routes.csv",
    "fee_curve.csv",
    "blocking.csv",
    "capacity_timeline.csv",
    "eta_validity.csv",
    "backtest_timeline.csv",
    "summary.md",
)


class _Writer:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.figures: list[Path] = []
        self.tables: list[Path] = []
        self.skipped: list[str] = []

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

    ``store_or_path`` is an open :class:`toolkit.store.Store` (used as is, left open) or the
    path of a DuckDB file (opened read-only, then closed); pass the Store when this process
    already has the file open. ``out_dir`` is created if needed; report files from an earlier
    run that this one does not write are removed. Each section is written only when its table
    has rows; :attr:`ReportResult.skipped` says which were left out and why.
    """
    data = load_data(store_or_path)
    out = _out_dir(out_dir)
    writer = _Writer(out)
    try:
        routes = _rfq_sections(data, writer)
        _capacity_section(data, writer)
        _backtest_section(data, writer)
        summary = summary_table(data, routes)
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
        writer.table("fee_curve.csv", fee_curve(obs, by=ROUTE))
    else:
        writer.skipped.append("fee curve: rfq_observations holds no priced 200 answer")
    windows, window = blocking_windows(data)
    writer.figure("blocking.png", figs.blocking_figure(windows, window))
    writer.table("blocking.csv", windows)
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


def _capacity_section(data: ReportData, writer: _Writer) -> None:
    if data.events.filter(pl.col("event") == "liquidity").height == 0:
        writer.skipped.append("capacity timeline: no liquidity rows in liquidity_events")
        return
    steps = capacity_steps(data)
    writer.figure("capacity_timeline.png", figs.capacity_figure(steps))
    writer.table("capacity_timeline.csv", steps)


def _backtest_section(data: ReportData, writer: _Writer) -> None:
    if data.backtest_run is None or data.backtest_pools.height == 0:
        writer.skipped.append("backtest: no rows in backtest_pools")
        return
    timeline = backtest_timeline(data)
    figure = figs.backtest_figure(data.backtest_pools, timeline, data.backtest_run)
    writer.figure("backtest.png", figure)
    writer.table("backtest_timeline.csv", timeline)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.4g}"
    return str(value).replace("|", "\\|")


def markdown_table(frame: pl.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of ``frame`` (floats to 4 significant digits)."""
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
        f"# Toolkit report\n\nSource: `{data.where}`.\n",
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
            "fee_median_bps",
            "fit_bps_per_decade",
            "eta_median_s",
            "validity_mean_s",
        ]
        parts += ["\n## Routes\n", markdown_table(routes.select(columns))]
    if writer.figures:
        parts.append("\n## Figures\n")
        parts += [f"![{path.stem}]({path.name})\n" for path in writer.figures]
    parts.append("\n## Tables\n")
    parts += [f"- [{path.name}]({path.name})" for path in writer.tables]
    if writer.skipped:
        parts.append("\n## Left out\n")
        parts += [f"- {reason}" for reason in writer.skipped]
    return "\n".join(parts) + "\n"
