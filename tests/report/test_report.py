"""write_report: figures and tables per section with data, clear errors without data."""

from __future__ import annotations

import csv
import struct
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from toolkit.report import ReportError, ReportResult, write_report
from toolkit.report.figures import DPI, FIGSIZE
from toolkit.report.writer import REPORT_FILES
from toolkit.store import Store

ALL_FIGURES = [
    "fee_curve.png",
    "blocking.png",
    "eta_validity.png",
    "capacity_timeline.png",
    "backtest.png",
    "inventory.png",
]


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def summary(path: Path) -> dict[tuple[str, str], str]:
    with path.open(newline="", encoding="utf-8") as f:
        return {(row["section"], row["metric"]): row["value"] for row in csv.DictReader(f)}


@pytest.fixture(scope="module")
def full_report(full_db: Path, tmp_path_factory: pytest.TempPathFactory) -> ReportResult:
    return write_report(full_db, tmp_path_factory.mktemp("report"))


def test_every_rfq_section_is_written_when_its_tables_have_rows(full_report: ReportResult) -> None:
    assert [p.name for p in full_report.figures] == [*ALL_FIGURES, "economics.png"]
    assert [p.name for p in full_report.tables] == [
        "routes.csv",
        "fee_curve.csv",
        "blocking.csv",
        "eta_validity.csv",
        "capacity_timeline.csv",
        "backtest_timeline.csv",
        "inventory.csv",
        "economics.csv",
        "summary.csv",
    ]
    assert full_report.markdown.name == "summary.md"
    # The other surfaces have no rows here (tests/report/test_surfaces.py fills them).
    assert full_report.skipped == (
        "borrow quotes: no rows in borrow_quotes",
        "calldata-guard findings: no rows in transactions",
        "swap routes: no rows in swap_routes",
        "credit health: no rows in credit_accounts",
        "capital against 404 rate: no pool_scale sweep stored (store backtests of one flow "
        "at two or more pool_scale overrides)",
    )
    assert {p.name for p in full_report.paths} <= set(REPORT_FILES)
    assert all(p.is_file() and p.parent == full_report.out_dir for p in full_report.paths)


def test_figures_are_pngs_of_fixed_size(full_report: ReportResult) -> None:
    width, height = round(FIGSIZE[0] * DPI), round(FIGSIZE[1] * DPI)
    for path in full_report.figures:
        scale = {"backtest.png": 1.4, "inventory.png": 1.4, "blocking.png": 1.2}.get(path.name, 1.0)
        assert png_size(path) == (width, round(height * scale)), path.name


def test_summary_counts_runs_attempts_and_the_404_share(full_report: ReportResult) -> None:
    rows = summary(full_report.out_dir / "summary.csv")
    assert rows[("runs", "runs")] == "2"
    assert rows[("runs", "rfq runs completed")] == "1"
    assert rows[("runs", "backtest runs completed")] == "1"
    rfq = "rfq (the collector's sweeps)"
    assert rows[(rfq, "attempts")] == "90"
    assert rows[(rfq, "attempts with status 200")] == "81"
    assert rows[(rfq, "attempts with status 404")] == "9"
    share = next(k for k in rows if k[0] == rfq and k[1].startswith("404 share"))
    assert rows[share] == "0.1"
    assert "clustered by round" in share[1]
    assert rows[(rfq, "routes")] == "3"
    assert rows[(rfq, "median fee (bps)")] == "3.8"
    assert rows[("median fee by route (bps)", "Ethereum→Base USDC")] == "3.8"
    assert rows[("liquidity events", "pools")] == "1"
    assert rows[("fee tiers", "tiers")] == "1"
    assert rows[("backtest", "latest run")] == "bt-1"
    assert rows[(rfq, "first attempt (UTC)")] == "2025-03-01T12:00:00+00:00"


def test_routes_table_has_counts_fees_fit_and_timing(full_report: ReportResult) -> None:
    routes = pl.read_csv(full_report.out_dir / "routes.csv")
    assert routes["route"].to_list() == [
        "Ethereum→Optimism WETH",
        "Ethereum→Base USDC",
        "Base→Optimism USDC",
    ]
    row = routes.row(1, named=True)
    assert (row["attempts"], row["ok"], row["blocked"], row["other"]) == (30, 27, 3, 0)
    assert row["share_404"] == pytest.approx(0.1)
    assert row["fit_bps_per_decade"] == pytest.approx(-0.3, abs=1e-4)
    assert row["fee_median_bps"] == pytest.approx(3.8)
    assert row["eta_median_s"] == 12
    assert 14 <= row["validity_mean_s"] <= 15
    # Only the Ethereum→Base USDC route has published tiers (4 bps for every amount).
    assert row["tier_premium_median_bps"] == pytest.approx(-0.2, abs=1e-6)
    assert routes["tier_premium_median_bps"].null_count() == 2


def test_blocking_csv_has_the_sweeps_share_with_a_clustered_interval(
    full_report: ReportResult,
) -> None:
    table = pl.read_csv(full_report.out_dir / "blocking.csv")
    assert set(table["source"]) == {"collector sweep"}
    assert table["answered"].sum() == 90
    assert table["refused"].sum() == 9
    row = table.filter(pl.col("route") == "Ethereum→Base USDC").row(0, named=True)
    assert (row["answered"], row["refused"], row["share_404"]) == (30, 3, pytest.approx(0.1))
    assert row["ci95_low"] <= 0.1 <= row["ci95_high"]
    assert "not independent" in row["interval"]


def test_backtest_timeline_has_a_wilson_interval_per_bin(full_report: ReportResult) -> None:
    from toolkit.models.intervals import wilson

    timeline = pl.read_csv(full_report.out_dir / "backtest_timeline.csv")
    assert timeline.height > 1
    for requests, refused, low, high in timeline.select(
        "requests", "refused", "ci95_low", "ci95_high"
    ).iter_rows():
        assert (low, high) == pytest.approx(wilson(refused, requests), abs=1e-5)
    fees = pl.read_csv(full_report.out_dir / "fee_curve.csv")
    assert "Ethereum→Base USDC" in fees["route"].to_list()


def test_markdown_links_figures_and_holds_no_absolute_path(full_report: ReportResult) -> None:
    text = full_report.markdown.read_text(encoding="utf-8")
    # The fixture's runs observed the embedded service: the page says it is simulated.
    assert text.startswith("# Toolkit report (simulated)\n")
    assert "**Simulated data**" in text
    for name in ALL_FIGURES:
        assert f"]({name})" in text
    assert "| Ethereum→Base USDC | 30 | 27 | 3 | 0.1 | 0" in text
    # Links are relative to the page: the directory can be moved or committed as it is.
    assert str(full_report.out_dir) not in text


def test_the_same_database_gives_byte_identical_files(full_db: Path, tmp_path: Path) -> None:
    one = write_report(full_db, tmp_path / "one")
    two = write_report(full_db, tmp_path / "two")
    for a, b in zip(one.paths, two.paths, strict=True):
        assert a.name == b.name
        assert a.read_bytes() == b.read_bytes(), a.name


def test_sections_without_data_are_left_out_and_said_so(runs_only_db: Path, tmp_path: Path) -> None:
    result = write_report(runs_only_db, tmp_path)
    assert result.figures == ()
    assert [p.name for p in result.tables] == ["summary.csv"]
    assert result.skipped == (
        "fee curve, 404 rate and eta/validity: no rows in rfq_observations",
        "capacity timeline: no liquidity rows in liquidity_events",
        "backtest: no rows in backtest_pools",
        "inventory: no rows in backtest_inventory",
        "borrow quotes: no rows in borrow_quotes",
        "calldata-guard findings: no rows in transactions",
        "swap routes: no rows in swap_routes",
        "credit health: no rows in credit_accounts",
        "economics: no rows in backtest_pools",
    )
    assert summary(tmp_path / "summary.csv") == {
        ("runs", "runs"): "1",
        ("runs", "snapshot runs completed"): "1",
    }
    assert "## Left out" in result.markdown.read_text(encoding="utf-8")
    assert "skipped backtest: no rows in backtest_pools" in str(result)


def test_files_of_an_earlier_report_are_removed(
    full_db: Path, runs_only_db: Path, tmp_path: Path
) -> None:
    write_report(full_db, tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    write_report(runs_only_db, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "summary.csv", "summary.md"]


def test_an_open_store_is_read_and_left_open(tmp_path: Path, fill: Callable[..., None]) -> None:
    with Store(tmp_path / "open.duckdb") as store:
        fill(store, backtest=False)
        result = write_report(store, tmp_path / "out")
        assert not store.closed
        assert store.query("SELECT count(*) AS n FROM rfq_observations")["n"][0] == 90
        assert "backtest: no rows in backtest_pools" in result.skipped
        assert "fee_curve.png" in [p.name for p in result.figures]
        # A Store holds its file only while it reads or writes: the path reads too.
        again = write_report(tmp_path / "open.duckdb", tmp_path / "again")
        assert [p.name for p in again.figures] == [p.name for p in result.figures]


def test_a_path_is_opened_read_only_and_closed(full_db: Path, tmp_path: Path) -> None:
    write_report(full_db, tmp_path)
    with Store(full_db) as store:  # read-write open works: the report let the file go
        assert store.runs().height == 2


def test_a_missing_file_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ReportError) as info:
        write_report("data/toolkit.duckdb", "out")
    assert str(info.value) == (
        "data/toolkit.duckdb: no such DuckDB file; run toolkit collect or toolkit demo first"
    )
    assert not (tmp_path / "out").exists()


def test_a_database_without_runs_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Store(tmp_path / "data" / "toolkit.duckdb").close()
    with pytest.raises(ReportError) as info:
        write_report(tmp_path / "data" / "toolkit.duckdb", tmp_path / "out")
    assert str(info.value) == (
        "no collection runs in data/toolkit.duckdb: run toolkit collect or toolkit demo first"
    )


def test_a_file_that_is_not_duckdb_is_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database")
    with pytest.raises(ReportError, match=r"cannot read .*junk.duckdb as a toolkit database"):
        write_report(junk, tmp_path / "out")
    with pytest.raises(ReportError, match=r"is not a file \(expected a DuckDB database\)"):
        write_report(tmp_path, tmp_path / "out")


def test_an_out_dir_that_cannot_be_created_is_a_clear_error(full_db: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ReportError, match="cannot create the report directory"):
        write_report(full_db, blocker / "out")


def test_bad_argument_types_are_refused(full_db: Path) -> None:
    with pytest.raises(TypeError, match="store_or_path: must be a toolkit Store or a path"):
        write_report(3, "out")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="out_dir: must be a path, got NoneType"):
        write_report(full_db, None)  # type: ignore[arg-type]


def test_capacity_csv_keeps_exact_integers_beside_tokens_and_usd(full_report: ReportResult) -> None:
    steps = pl.read_csv(full_report.out_dir / "capacity_timeline.csv", infer_schema_length=None)
    # USDC on Base: 6 decimals, $1 in the default scenario.
    for column in ("available", "reserved", "total"):
        exact = steps[column].cast(pl.Float64) / 10**6
        assert steps[f"{column}_tokens"].to_list() == pytest.approx(exact.to_list())
        assert steps[f"{column}_usd"].to_list() == pytest.approx(exact.to_list())
    assert steps["total"].dtype == pl.Int64
