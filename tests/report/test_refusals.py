"""The 404 shares the report shows: the market's (other users' requests, Wilson), the
collector's own sweep's (clustered by round), and never a sweep that held orders; the credit
book as of each account's latest observation."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from tests.report.conftest import SOURCE, T0, credit_rows, observation_rows
from toolkit.models.intervals import wilson
from toolkit.report import write_report
from toolkit.report.load import credit_book, load_data
from toolkit.report.refusals import refusal_table
from toolkit.store import Store

#: The market: 400 requests on Ethereum→Base USDC, 2 refused.
MARKET = (400, 2)


def market_rows(run_id: str) -> pl.DataFrame:
    total, refused = MARKET
    return pl.DataFrame(
        {
            "run_id": [run_id] * total,
            "attempt_id": [f"0:{i}:0" for i in range(total)],
            "observed_at": [T0 + dt.timedelta(seconds=i) for i in range(total)],
            "round": [0] * total,
            "retry": [0] * total,
            "src_chain": [1] * total,
            "dst_chain": [8453] * total,
            "token": ["USDC"] * total,
            "quote_type": ["ExactInput"] * total,
            "amount": pl.Series([10**9] * total, dtype=pl.Int128),
            "status": [404] * refused + [200] * (total - refused),
        }
    )


@pytest.fixture(scope="module")
def market_db(tmp_path_factory: pytest.TempPathFactory, fill: Callable[..., None]) -> Path:
    """``full_db``'s sweep, the market's requests, and a sweep that opened orders (all 404)."""
    path = tmp_path_factory.mktemp("db") / "market.duckdb"
    with Store(path) as store:
        fill(store, backtest=False)
        run = store.start_run("traffic", {"rfqs": MARKET[0]}, SOURCE, run_id="market")
        store.append("rfq_observations", market_rows(run))
        store.finish_run(run, "completed")
        held = store.start_run(
            "rfq", {"follow_transactions": True}, SOURCE, run_id="held", started_at=T0
        )
        rows = observation_rows(held).with_columns(pl.lit(404).alias("status"))
        store.append("rfq_observations", rows)
        store.finish_run(held, "completed")
    return path


def test_the_market_share_is_other_users_requests_with_a_wilson_interval(
    market_db: Path,
) -> None:
    table = refusal_table(load_data(market_db))
    market = table.filter(pl.col("source") == "market")
    assert market.select("route", "answered", "refused").rows() == [("Ethereum→Base USDC", *MARKET)]
    row = market.row(0, named=True)
    assert (row["ci95_low"], row["ci95_high"]) == pytest.approx(wilson(MARKET[1], MARKET[0]))
    assert row["interval"].startswith("Wilson")


def test_a_sweep_that_opened_orders_is_left_out_of_the_404_share(market_db: Path) -> None:
    data = load_data(market_db)
    # The held sweep's 90 refusals would make every route 100 % refused.
    sweep = refusal_table(data).filter(pl.col("source") == "collector sweep")
    assert sweep["answered"].sum() == 90
    assert sweep["refused"].sum() == 9
    assert data.observations.filter(pl.col("holds_orders")).height == 90
    assert data.market.height == MARKET[0]


def test_a_sweeps_interval_is_clustered_by_round_and_wider_than_wilsons(market_db: Path) -> None:
    sweep = refusal_table(load_data(market_db)).filter(
        (pl.col("source") == "collector sweep") & (pl.col("route") == "Ethereum→Base USDC")
    )
    row = sweep.row(0, named=True)
    low, high = wilson(row["refused"], row["answered"])
    # Odd rounds refuse the largest amount, even rounds none: the rounds disagree, so the
    # clustered interval is wider than the one that treats 30 RFQs as independent.
    assert row["ci95_high"] - row["ci95_low"] >= high - low
    assert row["ci95_low"] <= row["share_404"] <= row["ci95_high"]


def test_the_report_draws_both_and_summarises_the_market(market_db: Path, tmp_path: Path) -> None:
    result = write_report(market_db, tmp_path)
    assert "blocking.png" in {p.name for p in result.figures}
    text = result.markdown.read_text(encoding="utf-8")
    assert "| market (other users' RFQs) | requests answered 200 or 404 | 400 |" in text
    csv = pl.read_csv(tmp_path / "summary.csv")
    row = csv.filter(pl.col("section") == "market (other users' RFQs)").row(1, named=True)
    assert (float(row["value"]), int(row["n"])) == (0.005, 400)
    assert (float(row["ci95_low"]), float(row["ci95_high"])) == pytest.approx(
        wilson(2, 400), abs=1e-5
    )


def _credit(store: Store, run_id: str, at: dt.datetime, rows: pl.DataFrame) -> None:
    store.start_run("credit", {}, SOURCE, run_id=run_id, started_at=at)
    store.append("credit_accounts", rows)
    store.finish_run(run_id, "completed", ended_at=at)


def test_the_credit_book_is_each_accounts_latest_observation(tmp_path: Path) -> None:
    """A wide snapshot of 4 accounts, then a narrow one of the first account: the book still
    holds 4 accounts, the first from the newer run; EURe and USDC debt are never summed."""
    old = T0 - dt.timedelta(hours=1)
    wide = credit_rows("wide", old, (Decimal("1.1"), Decimal("2"), Decimal("3"), None))
    eure = wide.head(1).with_columns(
        pl.lit("EURE").alias("asset"), pl.lit(Decimal(700)).cast(wide.schema["debt"]).alias("debt")
    )
    narrow = credit_rows("narrow", T0, (Decimal("0.95"),))
    with Store(tmp_path / "credit.duckdb") as store:
        _credit(store, "wide", old, pl.concat([wide, eure]))
        _credit(store, "narrow", T0, narrow)
        book = credit_book(store)
        result = write_report(store, tmp_path / "report")
    usdc = book.filter(pl.col("asset") == "USDC").sort("account")
    assert usdc["account"].n_unique() == 4
    assert usdc["run_id"].to_list() == ["narrow", "wide", "wide", "wide"]
    assert float(usdc["health_factor"][0]) == pytest.approx(0.95)
    rows = pl.read_csv(result.out_dir / "summary.csv")
    values = dict(rows.select(pl.col("metric"), pl.col("value")).iter_rows())
    assert values["accounts"] == "4"
    assert values["USDC: health factor below 1"] == "1"
    assert values["USDC: total debt (USDC)"] == "6000"  # 1,000 (narrow) + 2,000 + 3,000
    assert values["EURE: total debt (EURE)"] == "700"
    assert not any("EURE/USDC" in m or "USDC/EURE" in m for m in rows["metric"])
    assert values["credit runs the latest observations come from"] == "2"
