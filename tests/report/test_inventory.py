"""The report's inventory section on a stored backtest that rebalanced: the policy named, the
net flow and the transfers per chain adding up to the replay's own frames, the cost to its
summary, and the economics' return net of it."""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from toolkit.backtest import BacktestResult, generate_flow, replay
from toolkit.report import write_report
from toolkit.report.writer import ReportResult
from toolkit.store import Store

T0 = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BacktestResult]:
    # A tenth of the default capital over six busy hours: the threshold policy has to move it.
    flow = generate_flow("default", span_h=6.0, rate_per_s=0.2, seed=3)
    result = replay(flow, "default", seed=3, overrides={"pool_scale": 0.02}, interval_s=300.0)
    assert result.transfers.height > 0  # the section must have something to show
    path = tmp_path_factory.mktemp("inventory") / "toolkit.duckdb"
    with Store(path) as store:
        result.to_store(store, run_id="bt-threshold", started_at=T0)
    return path, result


@pytest.fixture(scope="module")
def report(
    stored: tuple[Path, BacktestResult], tmp_path_factory: pytest.TempPathFactory
) -> ReportResult:
    return write_report(stored[0], tmp_path_factory.mktemp("report"))


def _rows(path: Path) -> dict[tuple[str, str], str]:
    with path.open(newline="", encoding="utf-8") as f:
        return {(r["section"], r["metric"]): r["value"] for r in csv.DictReader(f)}


def test_the_section_names_the_policy_and_draws_the_inventory(report: ReportResult) -> None:
    assert "inventory.png" in [p.name for p in report.figures]
    text = report.markdown.read_text(encoding="utf-8")
    assert "Inventory and rebalancing of the latest backtest (policy threshold)" in text
    assert "Economics of the latest backtest (policy threshold)" in text
    rows = _rows(report.out_dir / "summary.csv")
    assert rows[("inventory", "rebalancing policy")] == "threshold"
    assert rows[("economics", "rebalancing policy")] == "threshold"


def test_transfers_and_net_flow_per_chain_add_up_to_the_replay(
    report: ReportResult, stored: tuple[Path, BacktestResult]
) -> None:
    result = stored[1]
    table = pl.read_csv(report.out_dir / "inventory.csv")
    assert int(table["transfers_in"].sum()) == result.transfers.height
    assert int(table["transfers_out"].sum()) == result.transfers.height
    # Counted out where sent and in (less the bridge's fee) where it arrived.
    sent = float(result.transfers["amount_usd"].sum())
    fees = float(result.transfers["fee_usd"].sum())
    assert float(table["rebalanced_usd"].sum()) == pytest.approx(2 * sent - fees, rel=1e-6)
    assert float(table["cost_usd"].sum()) == pytest.approx(result.summary.rebalancing_cost_usd)
    rows = _rows(report.out_dir / "summary.csv")
    assert int(rows[("inventory", "transfers")]) == result.summary.transfers
    # Every filled order counts on its origin and its destination.
    assert int(table["orders"].sum()) == 2 * result.summary.filled


def test_economics_return_is_net_of_the_rebalancing_cost(
    report: ReportResult, stored: tuple[Path, BacktestResult]
) -> None:
    rows = _rows(report.out_dir / "summary.csv")
    gross = float(rows[("economics", "return on capital, annualised (%)")])
    net = float(rows[("economics", "return net of rebalancing, annualised (%)")])
    cost = float(rows[("economics", "rebalancing cost (USD)")])
    assert cost == pytest.approx(stored[1].summary.rebalancing_cost_usd, rel=1e-5)
    assert 0 < net < gross
