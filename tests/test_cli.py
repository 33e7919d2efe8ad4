"""The ``toolkit`` command: every subcommand is reachable and bad usage is a clear error."""

from __future__ import annotations

import subprocess
import sys

import pytest

from toolkit.cli import COMMANDS, build_parser, main


def test_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out


def test_every_subcommand_has_a_parser() -> None:
    parser = build_parser()
    for name in COMMANDS:
        args = parser.parse_args([name] if name != "collect" else [name, "snapshot"])
        assert callable(args._run)


def test_unknown_subcommand_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["frobnicate"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'frobnicate'" in capsys.readouterr().err


def test_help_stays_light() -> None:
    # The parser imports only the light command modules: not the I/O stack (DuckDB, web3,
    # FastAPI, httpx). polars does come in, with the backtest package's own __init__.
    code = (
        "import sys; from toolkit.cli import build_parser; build_parser(); "
        "heavy = {'duckdb', 'web3', 'fastapi', 'httpx', 'eth_account', 'matplotlib'}; "
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
