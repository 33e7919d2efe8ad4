"""The report's market sections: RFQ routes and fee curves, 404 shares, eta/validity, pool
capacity, the backtest, borrow quotes and calldata-guard findings. Each adds its files, summary
rows and Markdown section to the :class:`~toolkit.report.page.Page`, or says why it is left out."""

from __future__ import annotations

import polars as pl

from toolkit.models import effective_fee_bps, fee_curve
from toolkit.models.pricing import ROUTE
from toolkit.report import figures as figs
from toolkit.report import pool_figures
from toolkit.report import surface_figures as sfigs
from toolkit.report.load import ReportData
from toolkit.report.page import Page
from toolkit.report.refusals import refusal_table
from toolkit.report.summary import summary_rows
from toolkit.report.surfaces import authorizations, borrow_points, borrow_table, findings_table
from toolkit.report.tables import (
    ROUTE_KEYS,
    Estimate,
    backtest_timeline,
    capacity_steps,
    route_label,
    route_table,
)
from toolkit.report.units import with_human_amounts

__all__ = [
    "backtest_section",
    "blocking_section",
    "borrow_section",
    "capacity_section",
    "findings_section",
    "rfq_sections",
]


def rfq_sections(data: ReportData, page: Page) -> pl.DataFrame | None:
    """The RFQ sections: the route table, the fee curve, the 404 share and eta/validity.

    Parameters
    ----------
    data : ReportData
        The frames the report is drawn from (its ``observations`` and ``tiers``).
    page : Page
        The report being written: the section adds its files, summary rows and Markdown
        section to it, or the reason it is left out to ``page.skipped``.

    Returns
    -------
    polars.DataFrame or None
        The route table (:func:`~toolkit.report.tables.route_table`); None without RFQ
        observations.

    Examples
    --------
    >>> from pathlib import Path
    >>> from toolkit.report.load import ReportData
    >>> empty = pl.DataFrame()
    >>> data = ReportData("demo", empty, empty, empty, empty, None, empty, empty)
    >>> page = Page(Path("unused"))
    >>> rfq_sections(data, page) is None
    True
    >>> page.skipped
    ['fee curve, 404 rate and eta/validity: no rows in rfq_observations']
    """
    obs = data.observations
    if obs.height == 0:
        page.skipped.append("fee curve, 404 rate and eta/validity: no rows in rfq_observations")
        return None
    routes = route_table(data)
    page.table("routes.csv", routes)
    answered = effective_fee_bps(obs).filter(pl.col("effective_fee_bps").is_not_null())
    if answered.height:
        labels = [
            route_label(s, d, t)
            for s, d, t in answered.select("src_chain", "dst_chain", "token").iter_rows()
        ]
        labelled = answered.with_columns(pl.Series("route", labels, dtype=pl.String))
        page.figure("fee_curve.png", figs.fee_curve_figure(labelled))
        curves = fee_curve(obs, by=ROUTE)
        names = [route_label(s, d, t) for s, d, t in curves.select(ROUTE_KEYS).iter_rows()]
        page.table("fee_curve.csv", curves.insert_column(0, pl.Series("route", names)))
    else:
        page.skipped.append("fee curve: rfq_observations holds no priced 200 answer")
    blocking_section(data, page)
    if routes["eta_median_s"].drop_nulls().len():
        page.figure("eta_validity.png", figs.eta_validity_figure(routes))
        page.table(
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
        page.skipped.append("eta/validity: rfq_observations holds no 200 answer with an eta")
    return routes


def blocking_section(data: ReportData, page: Page) -> None:
    """404 share by route, the market's against the collector's own sweep.

    Parameters
    ----------
    data : ReportData
        The frames the report is drawn from (its ``market``, ``observations`` and ``pools``).
    page : Page
        The report being written: the section adds its files, summary rows and Markdown
        section to it, or the reason it is left out to ``page.skipped``.

    Returns
    -------
    None
        The section is added to ``page``.

    Examples
    --------
    >>> from pathlib import Path
    >>> from toolkit.report.load import ReportData
    >>> empty = pl.DataFrame()
    >>> obs = pl.DataFrame(schema=["run_id", "round", "status", "src_chain", "dst_chain",
    ...     "token", "holds_orders"])
    >>> data = ReportData("demo", empty, obs, empty, empty, None, empty, empty)
    >>> page = Page(Path("unused"))
    >>> blocking_section(data, page)
    >>> page.skipped[0].split(" (")[0]
    '404 share: no market observations'
    """
    refusals = refusal_table(data)
    if refusals.height == 0:
        page.skipped.append(
            "404 share: no market observations (runs of kind traffic) and no sweep that opened "
            "no order (a sweep that follows its quotes into orders holds each pool 60 s and "
            "measures its own refusals)"
        )
        return
    page.figure("blocking.png", figs.blocking_figure(refusals))
    page.table("blocking.csv", refusals)
    page.sections.append(
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


def capacity_section(data: ReportData, page: Page) -> None:
    """Each pool's utilization over time, from the liquidity events.

    Parameters
    ----------
    data : ReportData
        The frames the report is drawn from (its ``events``).
    page : Page
        The report being written: the section adds its files, summary rows and Markdown
        section to it, or the reason it is left out to ``page.skipped``.

    Returns
    -------
    None
        The section is added to ``page``.

    Examples
    --------
    >>> from pathlib import Path
    >>> from toolkit.report.load import ReportData
    >>> empty = pl.DataFrame()
    >>> fees_only = pl.DataFrame({"event": ["fee"]})
    >>> data = ReportData("demo", empty, empty, fees_only, empty, None, empty, empty)
    >>> page = Page(Path("unused"))
    >>> capacity_section(data, page)
    >>> page.skipped
    ['capacity timeline: no liquidity rows in liquidity_events']
    """
    if data.events.filter(pl.col("event") == "liquidity").height == 0:
        page.skipped.append("capacity timeline: no liquidity rows in liquidity_events")
        return
    steps = capacity_steps(data)
    page.figure("capacity_timeline.png", pool_figures.capacity_figure(steps))
    amounts = ["available", "reserved", "outstanding", "total"]
    page.table(
        "capacity_timeline.csv", with_human_amounts(steps, amounts, chain="chain", token="token")
    )


def backtest_section(data: ReportData, page: Page) -> None:
    """The latest backtest's pool utilization and 404 share over virtual time.

    Parameters
    ----------
    data : ReportData
        The frames the report is drawn from (its ``backtest_run``, ``backtest_requests``
        and ``backtest_pools``).
    page : Page
        The report being written: the section adds its files, summary rows and Markdown
        section to it, or the reason it is left out to ``page.skipped``.

    Returns
    -------
    None
        The section is added to ``page``.

    Examples
    --------
    >>> from pathlib import Path
    >>> from toolkit.report.load import ReportData
    >>> empty = pl.DataFrame()
    >>> data = ReportData("demo", empty, empty, empty, empty, None, empty, empty)
    >>> page = Page(Path("unused"))
    >>> backtest_section(data, page)
    >>> page.skipped
    ['backtest: no rows in backtest_pools']
    """
    if data.backtest_run is None or data.backtest_pools.height == 0:
        page.skipped.append("backtest: no rows in backtest_pools")
        return
    timeline = backtest_timeline(data)
    figure = pool_figures.backtest_figure(data.backtest_pools, timeline, data.backtest_run)
    page.figure("backtest.png", figure)
    page.table("backtest_timeline.csv", timeline)


def borrow_section(data: ReportData, page: Page) -> None:
    """Borrow fees by USD amount per route, their 404 share, and loans authorized.

    Parameters
    ----------
    data : ReportData
        The frames the report is drawn from (its ``borrow`` and ``events``).
    page : Page
        The report being written: the section adds its files, summary rows and Markdown
        section to it, or the reason it is left out to ``page.skipped``.

    Returns
    -------
    None
        The section is added to ``page``.

    Examples
    --------
    >>> from pathlib import Path
    >>> from toolkit.report.load import ReportData
    >>> empty = pl.DataFrame()
    >>> data = ReportData("demo", empty, empty, empty, empty, None, empty, empty)
    >>> page = Page(Path("unused"))
    >>> borrow_section(data, page)
    >>> page.skipped
    ['borrow quotes: no rows in borrow_quotes']
    """
    borrow = data.borrow
    if borrow.height == 0:
        page.skipped.append("borrow quotes: no rows in borrow_quotes")
        return
    table = borrow_table(borrow)
    page.table("borrow.csv", table)
    page.summary += summary_rows(
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
    page.sections.append(
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
        page.figure("borrow.png", sfigs.borrow_figure(points))
    else:
        page.skipped.append("borrow figure: borrow_quotes holds no priced 200 answer")


def findings_section(data: ReportData, page: Page) -> None:
    """Calldata-guard findings counted by rule and severity.

    Parameters
    ----------
    data : ReportData
        The frames the report is drawn from (its ``transactions``).
    page : Page
        The report being written: the section adds its files, summary rows and Markdown
        section to it, or the reason it is left out to ``page.skipped``.

    Returns
    -------
    None
        The section is added to ``page``.

    Examples
    --------
    >>> from pathlib import Path
    >>> from toolkit.report.load import ReportData
    >>> empty = pl.DataFrame()
    >>> data = ReportData("demo", empty, empty, empty, empty, None, empty, empty)
    >>> page = Page(Path("unused"))
    >>> findings_section(data, page)
    >>> page.skipped
    ['calldata-guard findings: no rows in transactions']
    """
    transactions = data.transactions
    if transactions.height == 0:
        page.skipped.append("calldata-guard findings: no rows in transactions")
        return
    table = findings_table(transactions)
    page.table("findings.csv", table)
    checked = transactions.filter(pl.col("findings").is_not_null())
    safe = int((checked["findings"] == "[]").sum())
    page.summary += summary_rows(
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
        page.sections.append(("Calldata-guard findings by rule", table, ()))
