"""``toolkit collect``: what it prints, what it writes, and its one-line errors (exit 2)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from toolkit.cli import collect as command
from toolkit.scenario import load_scenario
from toolkit.server import create_app, serve_in_thread
from toolkit.store import Store


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="toolkit collect")
    command.add_arguments(parser)
    return command.run(parser.parse_args(list(argv)))


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("TOOLKIT_RPC_URL_", "TOOLKIT_SWAP_")) or name in (
            "TOOLKIT_BASE_URL",
            "TOOLKIT_API_KEY",
            "TOOLKIT_CREDIT_URL",
            "TOOLKIT_PROFILE",
        ):
            monkeypatch.delenv(name)


def test_rfq_and_snapshot_on_the_embedded_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "toolkit.duckdb"
    assert (
        run_cli(
            "rfq",
            "--embedded",
            "--rounds",
            "1",
            "--db",
            str(db),
            "--no-progress",
            "--capacity-retries",
            "0",
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("run ") and out[0].endswith("(rfq) completed")
    assert out[1].startswith("rows written: ") and "rfq_observations" in out[1]
    assert out[2] == f"database: {db}"
    assert run_cli("snapshot", "--embedded", "--db", str(db), "--no-progress") == 0
    with Store(db, read_only=True) as store:
        runs = store.runs()
        assert runs["status"].to_list() == ["completed", "completed"]
        assert runs["target_url"].str.starts_with("http://embedded-").all()
        assert runs["target_kind"].to_list() == ["embedded", "embedded"]
        assert store.query("SELECT count(*) AS n FROM rfq_observations")["n"][0] >= 96


def test_liquidity_on_the_embedded_default_drives_traffic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "toolkit.duckdb"
    assert (
        run_cli("liquidity", "--embedded", "--duration", "1", "--db", str(db), "--no-progress") == 0
    )
    assert "liquidity_events" in capsys.readouterr().out
    with Store(db, read_only=True) as store:
        reasons = store.query("SELECT DISTINCT reason FROM liquidity_events")["reason"]
        assert "reservation_created" in reasons.to_list()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--base-url", "ftp://host"], "--base-url: must be an absolute http(s) URL"),
        (["--base-url", "http://user:hunter2@host:99999"], "--base-url: not a valid URL"),
        (["--embedded", "--resume", "no-such-run"], "no run 'no-such-run'"),
        (["--embedded", "--base-url", "http://h"], "--embedded: the simulated service takes no"),
        (["--capacity-retries", "-1"], "--capacity-retries: must be 0 or more"),
    ],
)
def test_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code = run_cli("rfq", "--db", str(tmp_path / "x.duckdb"), "--no-progress", *argv)
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("toolkit collect: ") and message in err and err.count("\n") == 1
    assert "hunter2" not in err


def test_an_unwritable_database_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    assert (
        run_cli("snapshot", "--embedded", "--db", str(blocker / "db.duckdb"), "--no-progress") == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("toolkit collect: cannot use the database: ") and str(blocker) in err


def test_an_unreachable_service_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli(
        "snapshot",
        "--base-url",
        "http://127.0.0.1:9",
        "--db",
        str(tmp_path / "x.duckdb"),
        "--no-progress",
    )
    err = capsys.readouterr().err
    assert code == 2 and "cannot reach the service at http://127.0.0.1:9" in err


@pytest.mark.loopback
def test_a_rejected_key_is_a_clear_error_without_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(load_scenario("default"))
    monkeypatch.setenv("TOOLKIT_API_KEY", "sk-rejected-7c1d")
    with serve_in_thread(app) as url:
        code = run_cli(
            "rfq",
            "--base-url",
            url,
            "--db",
            str(tmp_path / "x.duckdb"),
            "--rounds",
            "1",
            "--no-progress",
        )
    captured = capsys.readouterr()
    assert code == 2
    assert f"the service at {url} rejected the API key (401)" in captured.err
    assert "sk-rejected-7c1d" not in captured.err + captured.out
    with Store(tmp_path / "x.duckdb", read_only=True) as store:
        assert store.runs().height == 0


@pytest.mark.parametrize("kind", ["rfq", "snapshot", "swap", "credit", "chain", "liquidity"])
def test_with_no_target_nothing_is_collected_and_the_message_says_how_to_choose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    db = tmp_path / "x.duckdb"
    extra = ["--chain", "8453"] if kind == "chain" else []
    assert run_cli(kind, "--db", str(db), "--no-progress", *extra) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolkit collect: ") and err.count("\n") == 1
    assert "no target is configured" in err and "TOOLKIT_BASE_URL" in err and "--embedded" in err
    assert not db.exists()  # nothing was collected, not even an empty database


def test_a_surface_left_unconfigured_is_an_error_naming_its_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLKIT_BASE_URL", "http://127.0.0.1:9")
    assert run_cli("swap", "--db", str(tmp_path / "x.duckdb"), "--no-progress") == 2
    err = capsys.readouterr().err
    assert "TOOLKIT_SWAP_URL: not set, while TOOLKIT_BASE_URL points at http://127.0.0.1:9" in err
    code = run_cli("chain", "--chain", "8453", "--db", str(tmp_path / "x.duckdb"), "--no-progress")
    assert code == 2 and "TOOLKIT_RPC_URL_8453: not set" in capsys.readouterr().err
