"""``toolkit report``: the CLI prints the files written, or one line of error and exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.cli import build_parser, main
from toolkit.report import display_path


def test_the_command_writes_and_lists_the_files(
    full_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reports"
    assert main(["report", "--db", str(full_db), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].endswith(f"written to {out}:")
    listed = [line.strip() for line in printed[1:]]
    assert f"{out}/fee_curve.png" in listed
    assert f"{out}/summary.md" in listed
    assert (out / "summary.md").is_file()


def test_a_missing_database_is_one_line_on_stderr_and_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--db", "data/toolkit.duckdb", "--out", "out"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "toolkit report: error: data/toolkit.duckdb: no such DuckDB file; "
        "run toolkit collect or toolkit demo first\n"
    )


def test_an_empty_database_is_one_line_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolkit.store import Store

    monkeypatch.chdir(tmp_path)
    Store(tmp_path / "empty.duckdb").close()
    assert main(["report", "--db", "empty.duckdb", "--out", "out"]) == 1
    assert capsys.readouterr().err == (
        "toolkit report: error: no collection runs in empty.duckdb: "
        "run toolkit collect or toolkit demo first\n"
    )


def test_defaults_are_resolved_when_the_command_runs() -> None:
    args = build_parser().parse_args(["report"])
    assert (args.db, args.out) == (None, None)


def test_help_lists_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["report", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert "--db PATH" in text and "--out DIR" in text


def test_paths_below_the_working_directory_are_shown_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert display_path(tmp_path / "data" / "toolkit.duckdb") == "data/toolkit.duckdb"
    assert display_path("x/y.duckdb") == "x/y.duckdb"
    assert display_path("/elsewhere/y.duckdb") == "/elsewhere/y.duckdb"
