"""Writing results to DuckDB, and the ``toolkit backtest`` command."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from toolkit.backtest import RetryPolicy, generate_flow, replay
from toolkit.cli import main
from toolkit.store import Store


def test_to_store_writes_requests_pools_and_a_run() -> None:
    flow = generate_flow("default", hours=0.3, rate=1.0, seed=3)
    result = replay(flow, "default", seed=3, retry=RetryPolicy(capacity_retries=1))
    started = datetime(2024, 5, 1, tzinfo=UTC)
    with Store(":memory:") as store:
        run = result.to_store(store, run_id="bt-test", started_at=started)
        assert run == "bt-test"
        info = store.run(run)
        assert (info["kind"], info["status"]) == ("backtest", "completed")
        assert info["parameters"]["scenario"] == "default"
        assert info["parameters"]["retry"]["capacity_retries"] == 1
        assert info["target_url"] == "backtest://default"
        assert info["rows_written"] == result.requests.height + result.pools.height
        stored = store.query(
            "SELECT request_id, amount, outcome, filled_at, attributes FROM backtest_requests "
            "WHERE run_id = 'bt-test' ORDER BY request_id"
        )
        assert stored["request_id"].to_list() == result.requests["request_id"].to_list()
        assert stored["amount"].to_list() == result.requests["amount"].to_list()
        assert stored["outcome"].to_list() == result.requests["outcome"].to_list()
        first = pl.Series(stored["attributes"]).str.json_decode().struct.unnest()
        assert first["attempts"].to_list() == result.requests["attempts"].to_list()
        pools = store.query(
            "SELECT pool, t, capacity, attributes FROM backtest_pools WHERE run_id = 'bt-test' "
            "ORDER BY t, pool"
        )
        assert pools.height == result.pools.height
        assert pools["capacity"].dtype == pl.Int128
        # Writing the same run twice is refused by the run log, not duplicated.
        with pytest.raises(Exception, match="already exists"):
            result.to_store(store, run_id="bt-test")


def test_command_prints_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backtest", "--hours", "0.5", "--rate", "0.5", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "backtest of scenario default (seed 2)"
    assert lines[1].startswith("requests ") and "fill rate" in out and "404 rate" in out
    assert any(line.startswith("8453:USDC:usdc") and "USDC" in line for line in lines)


def test_command_writes_to_the_db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "bt.duckdb"
    code = main(
        ["backtest", "--scenario", "single-pool", "--hours", "0.2", "--retries", "2",
         "--db", str(db)]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert f"written to {db} as run " in out
    with Store(db, read_only=True) as store:
        runs = store.runs("backtest")
        assert runs.height == 1
        n = store.query("SELECT count(*) AS n FROM backtest_requests")["n"][0]
        assert f"requests     {n:>8,}" in out


def test_command_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["backtest", "--hours", "-1"])
    assert info.value.code == 2
    assert "--hours: must be a finite number > 0, got '-1'" in capsys.readouterr().err
    assert main(["backtest", "--scenario", "nowhere", "--hours", "0.1"]) == 2
    assert "no scenario named 'nowhere'" in capsys.readouterr().err
    assert main(["backtest", "--rate", "0", "--hours", "0.1"]) == 2
    assert "the flow has no requests" in capsys.readouterr().err
