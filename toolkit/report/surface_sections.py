"""The report's swap, credit and economics sections: swap price impact, the credit book's
health, the backtest's economics and capital against 404 rate. Each adds its files, summary
rows and Markdown section to the :class:`~toolkit.report.page.Page`, or says why it is left out."""

from __future__ import annotations

import polars as pl

from toolkit.models.bps import gain_bps
from toolkit.models.economics import capital_sweep, pool_economics
from toolkit.report import surface_figures as sfigs
from toolkit.report.credit import (
    HF_WATCH,
    credit_accounts_table,
    credit_book_table,
    credit_collateral_table,
)
from toolkit.report.economics import priced_pool_totals
from toolkit.report.load import ReportData
from toolkit.report.page import Page
from toolkit.report.summary import summary_rows
from toolkit.report.surfaces import swap_impact_table
from toolkit.report.tables import Estimate
from toolkit.report.text import format_usd, utc_date

__all__ = ["credit_section", "economics_section", "swap_section"]


def swap_section(data: ReportData, page: Page) -> None:
    """Swap price impact by trade size per pair and network, and how rates moved since the first
    swap-route run.

    Parameters
    ----------
    data : ReportData
        The frames the report is drawn from (its ``swaps``).
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
    >>> swap_section(data, page)
    >>> page.skipped
    ['swap routes: no rows in swap_routes']
    """
    swaps = data.swaps
    if swaps.height == 0:
        page.skipped.append("swap routes: no rows in swap_routes")
        return
    # Several swap-route runs watch a moving market: impact is the latest run's, and each pair's
    # rate at its smallest size is set against the first run's.
    runs = swaps.group_by("run_id").agg(pl.col("observed_at").min()).sort("observed_at")["run_id"]
    impact = swap_impact_table(swaps.filter(pl.col("run_id") == runs[-1]))
    page.table("swap_impact.csv", impact)
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
    page.summary += summary_rows(
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
        page.sections.append(
            ("Swap price impact (bps) by trade size", by_size, ("swap_impact.png",))
        )
        page.figure("swap_impact.png", sfigs.swap_figure(impact))
    else:
        page.skipped.append("swap figure: swap_routes holds no answered route")


def credit_section(data: ReportData, page: Page) -> None:
    """The credit book as last observed: health factors, debt against collateral, the collaterals
    accepted.

    Parameters
    ----------
    data : ReportData
        The frames the report is drawn from (its ``credit_accounts`` and ``credit_protocol``).
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
    >>> credit_section(data, page)
    >>> page.skipped
    ['credit health: no rows in credit_accounts']
    """
    if data.credit_accounts.height == 0:
        page.skipped.append("credit health: no rows in credit_accounts")
        return
    accounts = credit_accounts_table(data.credit_accounts)
    page.table("credit_accounts.csv", accounts)
    page.summary += summary_rows(
        "credit (as of each account's latest observation)", _book(accounts)
    )
    collateral = pl.DataFrame()
    if data.credit_protocol.height:
        collateral = credit_collateral_table(data.credit_protocol)
        page.table("credit_collateral.csv", collateral)
    page.sections.append(
        (
            "Credit book by credit asset (each account as last observed)",
            credit_book_table(accounts),
            (),
        )
    )
    page.sections.append(("Collateral accepted", collateral, ("credit_health.png",)))
    page.figure("credit_health.png", sfigs.credit_figure(accounts))


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


def economics_section(data: ReportData, page: Page) -> None:
    """The latest backtest's fee revenue and return on capital; capital against 404 rate when a
    pool_scale sweep is stored.

    Parameters
    ----------
    data : ReportData
        The frames the report is drawn from (its ``backtest_run``,
        ``backtest_pool_totals`` and ``backtest_runs``).
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
    >>> economics_section(data, page)
    >>> page.skipped
    ['economics: no rows in backtest_pools']
    """
    if data.backtest_run is None or data.backtest_pool_totals.height == 0:
        page.skipped.append("economics: no rows in backtest_pools")
        return
    priced = priced_pool_totals(data.backtest_pool_totals)
    costs = data.backtest_rebalancing
    rebalancing = costs if costs.height else None
    spent = (
        0.0
        if rebalancing is None
        else dict(costs.select("run_id", "rebalancing_cost_usd").rows()).get(data.backtest_run, 0.0)
    )
    pools = pool_economics(priced, data.backtest_run, rebalancing_cost_usd=float(spent or 0.0))
    page.table("economics.csv", pools)
    total = pools.row(pools.height - 1, named=True)
    page.summary += summary_rows(
        "economics",
        [
            ("backtest run", data.backtest_run),
            ("span (hours)", total["span_hours"]),
            ("pool capital (USD)", total["capital_usd"]),
            ("fee revenue (USD)", total["fee_revenue_usd"]),
            ("rebalancing policy", data.backtest_policy or "not recorded"),
            ("return on capital over the span (%)", total["return_pct"]),
            ("return on capital, annualised (%)", total["annualised_return_pct"]),
            ("rebalancing cost (USD)", total["rebalancing_cost_usd"]),
            ("return net of rebalancing, annualised (%)", total["net_annualised_return_pct"]),
        ],
    )
    page.sections.append(
        (
            f"Economics of the latest backtest (policy {data.backtest_policy or 'not recorded'})",
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
    page.figure("economics.png", sfigs.economics_figure(pools, data.backtest_run))
    sweep = capital_sweep(data.backtest_runs, priced, rebalancing)
    if sweep.height < 2:
        page.skipped.append(
            "capital against 404 rate: no pool_scale sweep stored (store backtests of one flow "
            "at two or more pool_scale overrides)"
        )
        return
    page.table("capital_404.csv", sweep)
    page.figure("capital_404.png", sfigs.capital_figure(sweep))
    page.sections.append(("Capital against 404 rate", sweep.drop("run_id"), ("capital_404.png",)))
