"""The report's sections beyond RFQ: each one's numbers, from a store with every surface."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import polars as pl
import pytest

from tests.report.conftest import BORROWS, HEALTH, SCALES, SWAPS
from toolkit.backtest import BacktestResult
from toolkit.models.economics import YEAR_S, pool_economics
from toolkit.report import ReportResult, write_report
from toolkit.report.economics import priced_pool_totals
from toolkit.report.load import load_data
from toolkit.report.prices import priced
from toolkit.report.writer import REPORT_FILES
from toolkit.scenario import load_scenario

Surfaces = tuple[Path, dict[str, BacktestResult]]


def intervals(report: ReportResult) -> dict[tuple[str, str], tuple[str, str, str]]:
    with (report.out_dir / "summary.csv").open(newline="", encoding="utf-8") as f:
        return {
            (row["section"], row["metric"]): (row["n"], row["ci95_low"], row["ci95_high"])
            for row in csv.DictReader(f)
        }


def summary(path: Path) -> dict[tuple[str, str], str]:
    with path.open(newline="", encoding="utf-8") as f:
        return {(row["section"], row["metric"]): row["value"] for row in csv.DictReader(f)}


@pytest.fixture(scope="module")
def report(surfaces_db: Surfaces, tmp_path_factory: pytest.TempPathFactory) -> ReportResult:
    return write_report(surfaces_db[0], tmp_path_factory.mktemp("surfaces"))


@pytest.fixture(scope="module")
def rows(report: ReportResult) -> dict[tuple[str, str], str]:
    return summary(report.out_dir / "summary.csv")


def test_every_file_is_written_when_every_surface_has_data(report: ReportResult) -> None:
    assert report.skipped == ()
    assert {p.name for p in report.paths} == set(REPORT_FILES)


def test_borrow_section_counts_quotes_fees_and_authorizations(
    report: ReportResult, rows: dict[tuple[str, str], str]
) -> None:
    fees = [fee for *_, status, fee in BORROWS if status == 200 and fee is not None]
    assert rows[("borrow", "attempts")] == str(len(BORROWS))
    assert rows[("borrow", "quotes (200)")] == str(len(fees))
    share = next(k for k in rows if k[0] == "borrow" and k[1].startswith("404 share"))
    assert float(rows[share]) == pytest.approx(1 / 4)
    # Sample size and Wilson interval beside the share (1 of 4).
    n, low, high = intervals(report)[share]
    assert (int(n), float(low), float(high)) == pytest.approx((4, 0.0456, 0.6994), abs=1e-4)
    assert float(rows[("borrow", "median fee (bps)")]) == pytest.approx(sorted(fees)[1])
    assert rows[("borrow", "loans authorized (liquidity events)")] == "1"
    table = pl.read_csv(report.out_dir / "borrow.csv")
    # The destination token is stored as its address; people read its symbol and USD.
    row = table.row(0, named=True)
    assert row["route"] == "Ethereum→Base USDC"
    assert (row["token"], row["attempts"], row["ok"], row["blocked"]) == ("USDC", 4, 3, 1)
    amounts = sorted(amount / 10**6 for _, _, amount, _, _ in BORROWS)
    assert row["amount_median_usd"] == pytest.approx((amounts[1] + amounts[2]) / 2)


def test_findings_are_counted_by_rule(
    report: ReportResult, rows: dict[tuple[str, str], str]
) -> None:
    table = pl.read_csv(report.out_dir / "findings.csv")
    assert table.select("rule", "severity", "count").rows() == [
        ("to", "error", 2),
        ("value", "warning", 1),
    ]
    assert table["example"][0] == "is not the escrow"
    assert rows[("calldata guard", "safe (no finding)")] == "1"
    assert rows[("calldata guard", "with findings")] == "2"


def test_swap_impact_is_in_bps_of_the_smallest_size_by_usd_size(
    report: ReportResult, rows: dict[tuple[str, str], str]
) -> None:
    table = pl.read_csv(report.out_dir / "swap_impact.csv")
    assert table["pair"].unique().to_list() == ["USDC→WETH"]
    assert table["size_usd"].to_list() == pytest.approx([usd for usd, _ in SWAPS])
    expected = [(1 - relative) * 10_000 for _, relative in SWAPS]
    assert table["impact_bps"].to_list() == pytest.approx(expected, abs=0.01)
    # At $3,000 per WETH the smallest swap's output is worth what went in (to rounding).
    assert table["cost_bps"][0] == pytest.approx(0.0, abs=0.5)
    assert float(rows[("swap", "impact at $1M: USDC→WETH (Ethereum) (bps)")]) == pytest.approx(
        expected[-1], abs=0.01
    )
    assert float(rows[("swap", "no route (404) share (Wilson 95 %)")]) == pytest.approx(1 / 4)


CREDIT = "credit (as of each account's latest observation)"


def test_credit_health_reads_the_latest_observation_of_each_account(
    report: ReportResult, rows: dict[tuple[str, str], str]
) -> None:
    finite = [float(h) for h in HEALTH if h is not None]
    assert rows[(CREDIT, "accounts")] == str(len(HEALTH))
    assert rows[(CREDIT, "USDC: accounts with debt")] == str(len(finite))
    assert rows[(CREDIT, "USDC: health factor below 1")] == str(sum(h < 1 for h in finite))
    assert rows[(CREDIT, "USDC: health factor below 1.3")] == str(sum(h < 1.3 for h in finite))
    assert float(rows[(CREDIT, "USDC: median health factor")]) == pytest.approx(sorted(finite)[1])
    # credit_rows: account i owes 1,000 x (i + 1) USDC unless it has no debt; 5,000 of collateral.
    debt = sum(1_000 * (i + 1) for i, hf in enumerate(HEALTH) if hf is not None)
    assert float(rows[(CREDIT, "USDC: total debt (USDC)")]) == debt
    accounts = pl.read_csv(report.out_dir / "credit_accounts.csv")
    assert accounts["band"].to_list() == ["< 1", "1 to 1.3", "≥ 1.3", "no debt"]
    assert accounts["health_factor"].to_list()[:3] == pytest.approx(finite)
    assert set(accounts["run_id"]) == {"credit-new"}
    assert accounts["debt_usd"].to_list() == pytest.approx(accounts["debt"].to_list())
    collateral = pl.read_csv(report.out_dir / "credit_collateral.csv")
    assert collateral.row(0) == ("Base", "yoUSD", 70.0, 80.0, 6.0, None)


def _usd_revenue(result: BacktestResult) -> tuple[float, float]:
    """Capital and fee revenue in USD, from the backtest's own summary."""
    scenario = load_scenario("default")
    prices = dict(scenario.pricing.prices_usd)
    capital = revenue = 0.0
    for pool in scenario.pools:
        price = float(prices[pool.token]) / 10 ** scenario.token(pool.chain, pool.token).decimals
        capital += result.pools.filter(pl.col("pool") == pool.id)["capacity"][0] * price
        revenue += result.summary.fee_revenue[pool.id] * price
    return capital, revenue


def test_capital_against_404_rate_comes_from_the_pool_scale_sweep(
    report: ReportResult, surfaces_db: Surfaces
) -> None:
    table = pl.read_csv(report.out_dir / "capital_404.csv")
    assert table["pool_scale"].to_list() == list(SCALES)
    results = surfaces_db[1]
    for row in table.iter_rows(named=True):
        result = results[row["run_id"]]
        capital, revenue = _usd_revenue(result)
        assert row["capital_usd"] == pytest.approx(capital)
        assert row["fee_revenue_usd"] == pytest.approx(revenue)
        assert row["requests"] == result.summary.requests
        # the CSV keeps six decimals
        assert row["share_404_pct"] == pytest.approx(
            100 * result.summary.no_capacity / result.summary.requests, abs=5e-7
        )
    assert table["capital_usd"][2] == pytest.approx(4 * table["capital_usd"][0], rel=1e-6)
    # More capital, fewer refusals: the point of the sweep.
    assert table["share_404_pct"][0] > table["share_404_pct"][2]


def test_economics_are_fee_revenue_and_annualised_return_in_usd(surfaces_db: Surfaces) -> None:
    path, results = surfaces_db
    data = load_data(path)
    result = results["bt-scale-1"]
    with priced(data.prices, data.tokens):  # the stored prices, as write_report uses them
        table = pool_economics(priced_pool_totals(data.backtest_pool_totals), "bt-scale-1")
    capital, revenue = _usd_revenue(result)
    total = table.row(table.height - 1, named=True)
    assert total["pool"] == "total"
    assert total["capital_usd"] == pytest.approx(capital)
    assert total["fee_revenue_usd"] == pytest.approx(revenue)
    assert revenue > 0
    span = float(result.pools["t"].max())  # type: ignore[arg-type]
    assert total["annualised_return_pct"] == pytest.approx(100 * revenue / capital * YEAR_S / span)
    weth = table.filter(pl.col("pool") == "1:WETH:aave_v2").row(0, named=True)
    assert weth["fee_revenue_tokens"] == pytest.approx(
        result.summary.fee_revenue["1:WETH:aave_v2"] / 10**18
    )
    assert weth["chain"] == "Ethereum"
    assert math.isclose(weth["capital_usd"], weth["capital_tokens"] * 3000.0)


def test_the_latest_backtest_economics_are_in_the_summary(
    rows: dict[tuple[str, str], str], surfaces_db: Surfaces
) -> None:
    result = surfaces_db[1]["bt-1"]
    assert rows[("economics", "backtest run")] == "bt-1"
    # single-pool: 15 x 1,000 USDC at $1 (the scenario prices USDC), no fee tiers above 0 bps.
    balance = result.summary.balance_start["8453:USDC:usdc"]
    assert float(rows[("economics", "pool capital (USD)")]) == pytest.approx(balance / 10**6)
    assert float(rows[("economics", "fee revenue (USD)")]) == pytest.approx(
        sum(result.summary.fee_revenue.values()) / 10**6
    )


def test_markdown_has_a_section_per_surface(report: ReportResult) -> None:
    text = report.markdown.read_text(encoding="utf-8")
    for title in (
        "## Borrow quotes",
        "## Calldata-guard findings by rule",
        "## Credit book by credit asset (each account as last observed)",
        "## Collateral accepted",
        "## Swap price impact (bps) by trade size",
        "## Economics of the latest backtest",
        "## Capital against 404 rate",
    ):
        assert title in text
    for name in ("borrow.png", "swap_impact.png", "credit_health.png", "economics.png"):
        assert f"]({name})" in text
    # Each figure sits under its section; the swap table has one column per USD size.
    assert text.index("## Capital against 404 rate") < text.index("](capital_404.png)")
    assert "| chain | pair | $100 | $10k | $1M |" in text
    assert "| Ethereum | USDC→WETH | 0 | 10 | 100 |" in text


def test_without_a_sweep_the_capital_section_says_so(full_db: Path, tmp_path: Path) -> None:
    result = write_report(full_db, tmp_path)
    assert any(
        reason.startswith("capital against 404 rate: no pool_scale sweep stored")
        for reason in result.skipped
    )
    assert "economics.png" in [p.name for p in result.figures]


def test_every_figure_has_a_title_and_labelled_axes(
    surfaces_db: Surfaces, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from matplotlib.figure import Figure

    import toolkit.report.figures as figs

    drawn: dict[str, Figure] = {}
    save = figs.save

    def keep(figure: Figure, path: Path) -> Path:
        drawn[path.name] = figure
        return save(figure, path)

    monkeypatch.setattr(figs, "save", keep)
    result = write_report(surfaces_db[0], tmp_path)
    assert sorted(drawn) == sorted(p.name for p in result.figures)
    assert len(drawn) == 11
    for name, figure in drawn.items():
        axes = figure.get_axes()
        # Every panel has a title (a twin axes, with no x axis of its own, shares its panel's).
        panels = [ax for ax in axes if ax.xaxis.get_visible()]
        assert all(ax.get_title() or figure.get_suptitle() for ax in panels), name
        assert all(ax.get_xlabel() for ax in axes if ax.xaxis.get_visible()), name
        assert any(ax.get_ylabel() for ax in axes), name
        # Amounts are never in raw smallest units on an axis people read.
        assert not any("smallest" in ax.get_xlabel() for ax in axes), name
