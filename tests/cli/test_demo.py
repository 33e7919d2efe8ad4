"""``toolkit demo`` runs the whole main job offline and says where its results are."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from toolkit.cli import build_parser
from toolkit.cli.demo import BORROWERS, CREDIT_ACCOUNTS, POOL_SCALES, SWEEP_POLICIES, run
from toolkit.store import Store


def _args(tmp_path: Path, *extra: str) -> argparse.Namespace:
    return build_parser().parse_args(
        [
            "demo",
            "--db",
            str(tmp_path / "demo.duckdb"),
            "--out",
            str(tmp_path / "reports"),
            "--rounds",
            "1",
            "--minutes",
            "3",
            "--speed",
            "60",
            "--rate",
            "0.03",
            "--no-progress",
            *extra,
        ]
    )


def test_demo_fills_the_database_and_writes_the_report(tmp_path: Path) -> None:
    out = io.StringIO()
    assert run(_args(tmp_path), out=out) == 0
    text = out.getvalue()
    assert f"database: {(tmp_path / 'demo.duckdb').resolve()}" in text
    assert f"figures:  {(tmp_path / 'reports').resolve()}" in text
    assert (tmp_path / "reports" / "summary.md").is_file()
    for name in (
        "backtest.png",
        "inventory.png",
        "swap_impact.png",
        "credit_health.png",
        "capital_404.png",
    ):
        assert (tmp_path / "reports" / name).is_file(), name
    assert "fee curves, fee_bps = a + b * log10(amount)" in text
    assert "no size dependence detected (r² = " in text or "bps per tenfold size (95 % CI" in text
    assert "backtest of scenario default" in text
    # Which rebalancing policy the figures assume, and what rebalancing cost, are said.
    assert "rebalancing policy: threshold" in text
    assert "pool_scale sweep under threshold, requests refused for capacity" in text
    assert "pool_scale sweep under none, requests refused for capacity" in text
    assert "transfers (rebalancing cost): x0.003: " in text
    with Store(tmp_path / "demo.duckdb", read_only=True) as store:
        kinds = store.query("select kind, status from collection_runs order by kind")
        assert sorted(set(kinds["kind"].to_list())) == [
            "backtest",
            "borrow",
            "credit",
            "liquidity",
            "rfq",
            "snapshot",
            "swap",
            "traffic",
        ]
        assert set(kinds["status"].to_list()) == {"completed"}
        # The sweep the 404 shares read opened no order; only the calldata-guard run did, one
        # quote per route; the other users' RFQs are stored as the market's observations.
        rfq = [store.run_record(r)["parameters"] for r in store.runs("rfq")["run_id"]]
        assert [p["follow_transactions"] for p in rfq] == [False, True]
        assert len(rfq[1]["grid"]) == 24 and rfq[1]["rounds"] == 1
        market = store.query(
            "select count(*) as n from rfq_observations o join collection_runs r "
            "using (run_id) where r.kind = 'traffic'"
        )
        assert market["n"][0] > 0
        # The day's backtest and the pool_scale sweep, one run per scale and policy.
        assert (kinds["kind"] == "backtest").sum() == 1 + len(POOL_SCALES) * len(SWEEP_POLICIES)
        assert store.query("select count(*) as n from swap_routes")["n"][0] > 0
        credit = store.query("select count(distinct account) as n from credit_accounts")
        assert credit["n"][0] == CREDIT_ACCOUNTS + BORROWERS  # the traffic's borrowers too
        findings = store.query("select findings from transactions")
        assert findings.height > 0
        # The guard found nothing wrong in the embedded service's calldata.
        assert set(findings["findings"].to_list()) == {"[]"}


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--rounds", "0", "argument --rounds: must be an integer >= 1, got '0'"),
        ("--rate", "0", "argument --rate: must be a finite number > 0, got '0'"),
        ("--minutes", "inf", "argument --minutes: must be a finite number > 0"),
        ("--speed", "0", "argument --speed: must be a finite number > 0, got '0'"),
    ],
)
def test_bad_options_are_refused_before_anything_runs(
    tmp_path: Path, option: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        _args(tmp_path, option, value)
    assert info.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "demo.duckdb").exists()
