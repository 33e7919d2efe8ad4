"""``write_report``: read the store, compute the tables, draw the figures, write the files."""

from __future__ import annotations

import os
from pathlib import Path

from toolkit.report.inventory import inventory_section
from toolkit.report.load import ReportData, display_path, load_data
from toolkit.report.page import Page, markdown_page
from toolkit.report.prices import priced
from toolkit.report.result import ReportError, ReportResult
from toolkit.report.sections import (
    backtest_section,
    borrow_section,
    capacity_section,
    findings_section,
    rfq_sections,
)
from toolkit.report.style import simulated_titles
from toolkit.report.summary import summary_table
from toolkit.report.surface_sections import credit_section, economics_section, swap_section
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
    "inventory.png",
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
    "inventory.csv",
    "borrow.csv",
    "findings.csv",
    "swap_impact.csv",
    "credit_accounts.csv",
    "credit_collateral.csv",
    "economics.csv",
    "capital_404.csv",
    "summary.md",
)


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
    page = Page(out)
    try:
        routes = rfq_sections(data, page)
        capacity_section(data, page)
        backtest_section(data, page)
        inventory_section(data, page)
        borrow_section(data, page)
        findings_section(data, page)
        swap_section(data, page)
        credit_section(data, page)
        economics_section(data, page)
        summary = summary_table(data, routes, page.summary)
        page.table("summary.csv", summary)
        markdown = out / "summary.md"
        markdown.write_text(markdown_page(data, summary, routes, page), encoding="utf-8")
    except OSError as exc:
        raise ReportError(
            f"{display_path(out)}: cannot write the report ({exc.strerror or exc})"
        ) from None
    written = {p.name for p in (*page.figures, *page.tables, markdown)}
    for name in REPORT_FILES:
        stale = out / name
        if name not in written and stale.is_file():
            stale.unlink()
    return ReportResult(out, tuple(page.figures), tuple(page.tables), markdown, tuple(page.skipped))
