"""The report as it is written: the files, the summary rows and sections (:class:`Page`),
and ``summary.md`` made of them."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
from matplotlib.figure import Figure

from toolkit.report import figures as figs
from toolkit.report.load import ReportData

__all__ = ["SIMULATED_NOTE", "Page", "markdown_page", "markdown_table"]

#: What summary.md says when any run observed a simulated target.
SIMULATED_NOTE = (
    "\n\n**Simulated data**: runs in this database observed the embedded (simulated) service "
    "or a backtest (`collection_runs.target_kind`); its prices are the scenario's."
)


class Page:
    """The report being written: its files, its summary rows and its Markdown sections."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.figures: list[Path] = []
        self.tables: list[Path] = []
        self.skipped: list[str] = []
        self.summary: list[tuple[str, ...]] = []
        # (title, table, figures drawn for it): shown in this order in summary.md.
        self.sections: list[tuple[str, pl.DataFrame, tuple[str, ...]]] = []

    def figure(self, name: str, figure: Figure) -> None:
        """Save ``figure`` as ``name`` (PNG) in the report directory."""
        self.figures.append(figs.save(figure, self.out / name))

    def table(self, name: str, frame: pl.DataFrame) -> None:
        """Write ``frame`` as ``name`` (CSV) in the report directory."""
        path = self.out / name
        frame.write_csv(path, float_precision=6)
        self.tables.append(path)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}"
    return str(value).replace("|", "\\|")


def markdown_table(frame: pl.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of ``frame``.

    Parameters
    ----------
    frame : polars.DataFrame
        The rows to show.

    Returns
    -------
    str
        The table: floats to 4 significant digits, from 10,000 up as whole numbers with
        thousands separators; None and NaN as empty cells; ``|`` escaped.

    Examples
    --------
    >>> print(markdown_table(pl.DataFrame({"metric": ["fee | bps", "share"],
    ...     "value": [12345.678, 0.123456]})))
    | metric | value |
    |---|---|
    | fee \\| bps | 12,346 |
    | share | 0.1235 |
    """
    lines = [
        "| " + " | ".join(frame.columns) + " |",
        "|" + "|".join("---" for _ in frame.columns) + "|",
    ]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join(lines)


def markdown_page(
    data: ReportData, summary: pl.DataFrame, routes: pl.DataFrame | None, page: Page
) -> str:
    """``summary.md``: the summary, the routes, each section's table and figures in the order
    they were added, the remaining figures, the tables written, and what was left out.

    Parameters
    ----------
    data : ReportData
        The frames the report is drawn from (its source and whether it is simulated).
    summary : polars.DataFrame
        ``summary.csv``'s frame (:func:`toolkit.report.summary.summary_table`).
    routes : polars.DataFrame or None
        The route table; None without RFQ observations.
    page : Page
        The report written so far: its figures, tables, sections and skipped sections.

    Returns
    -------
    str
        The Markdown page.

    Examples
    --------
    >>> empty = pl.DataFrame()
    >>> data = ReportData("demo.duckdb", empty, empty, empty, empty, None, empty, empty)
    >>> summary = pl.DataFrame({"section": ["runs"], "metric": ["runs"], "value": ["1"]})
    >>> print(markdown_page(data, summary, None, Page(Path("unused"))))
    # Toolkit report
    <BLANKLINE>
    Source: `demo.duckdb`.
    <BLANKLINE>
    ## Summary
    <BLANKLINE>
    | section | metric | value |
    |---|---|---|
    | runs | runs | 1 |
    <BLANKLINE>
    ## Tables
    <BLANKLINE>
    """
    parts = [
        f"# Toolkit report{' (simulated)' if data.simulated else ''}\n\n"
        f"Source: `{data.where}`.{SIMULATED_NOTE if data.simulated else ''}\n",
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
    drawn = [path.name for path in page.figures]
    placed: set[str] = set()
    for title, frame, names in page.sections:
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
    parts += [f"- [{path.name}]({path.name})" for path in page.tables]
    if page.skipped:
        parts.append("\n## Left out\n")
        parts += [f"- {reason}" for reason in page.skipped]
    return "\n".join(parts) + "\n"
