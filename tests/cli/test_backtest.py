"""``toolkit backtest``: the summary it prints, the run it stores, the errors it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.cli import main
from toolkit.store import Store


def test_command_prints_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backtest", "--hours", "0.5", "--rate", "0.5", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "backtest of scenario default (seed 2)"
    assert lines[1].startswith("rebalancing policy: threshold (")
    assert lines[2].startswith("requests ") and "fill rate" in out and "404 rate" in out
    assert any(line.startswith("Base USDC (usdc)") and "USDC" in line for line in lines)
    # The inventory per chain at the start and the end, and what rebalancing moved and cost.
    start = lines.index(next(line for line in lines if line.startswith("inventory ")))
    assert lines[start + 1].startswith("Ethereum USDC") and lines[start + 1].count("USDC") == 3
    assert any(line.startswith("transfers ") and "volume" in line for line in lines)
    assert any(line.startswith("rebalancing cost $") and "bps of the $" in line for line in lines)
    assert any("% net of rebalancing" in line for line in lines)


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


def test_a_sweep_prints_one_row_per_point(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["backtest", "--scenario", "single-pool", "--hours", "0.2", "--sweep",
            "pool_scale=0.5,2", "--sweep", "quote_s=15,60", "--workers", "1"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("│ ") and "┆" in line]
    assert len(rows) == 3 + 4  # the header (names, rule, dtypes) and four points
    assert "pool_scale" in rows[0] and "rfq_404_share" in rows[0] and "transfers" in rows[0]


def test_a_sweep_compares_rebalancing_policies(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["backtest", "--hours", "0.2", "--sweep", "rebalancing.policy=none,instant-free",
            "--workers", "1"]  # fmt: skip
    assert main(argv) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("│ ")]
    assert "rebalancing.policy" in rows[0]
    assert [row.split("┆")[0].strip(" │") for row in rows[3:]] == ["none", "instant-free"]


def test_sweep_options_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["backtest", "--sweep", "pool_scale"])
    assert info.value.code == 2
    assert (
        "--sweep: must be KEY=V1,V2,... with numbers, got 'pool_scale'" in capsys.readouterr().err
    )
    assert main(["backtest", "--hours", "0.1", "--workers", "2"]) == 2
    assert "--workers/--scheduler need --sweep" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["backtest", "--sweep", "pool_scale=1", "--workers", "2", "--scheduler", "tcp://x:1"])
    assert "not allowed with argument" in capsys.readouterr().err
