"""The ``toolkit`` command: every subcommand is reachable and bad usage is a clear error."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from toolkit.cli import COMMANDS, main


def test_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    names = {"serve", "collect", "watch", "status", "backtest", "report", "demo", "target"}
    for name in names:
        assert name in out
    assert set(COMMANDS) == names


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--heartbeat", "0"], "argument --heartbeat: must be a finite number > 0"),
        (["collect", "rfq", "--rounds", "0"], "argument --rounds: must be an integer >= 1"),
        (["backtest", "--seed", "-1"], "argument --seed: must be an integer >= 0, got '-1'"),
        (["backtest", "--hours", "x"], "argument --hours: must be a finite number > 0, got 'x'"),
        (["demo", "--rounds", "1.5"], "argument --rounds: must be an integer >= 1, got '1.5'"),
        (["report", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["collect"], "the following arguments are required: kind"),
    ],
)
def test_each_subcommand_names_the_bad_option_and_its_rule(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: toolkit")
    assert message in err


def test_unknown_subcommand_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["frobnicate"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'frobnicate'" in capsys.readouterr().err


def test_help_loads_no_library_package() -> None:
    # Building the parser imports only toolkit.cli (and toolkit.arguments for the option
    # types, with toolkit.errors, its stdlib-only root): no library package, so nothing of the
    # I/O or data stack.
    code = (
        "import json, sys; from toolkit.cli import build_parser; build_parser(); "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('toolkit') or m in "
        "{'duckdb', 'web3', 'fastapi', 'httpx', 'eth_account', 'matplotlib', 'polars', "
        "'pandas', 'numpy'})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = json.loads(out)
    assert [m for m in loaded if not m.startswith("toolkit.cli")] == [
        "toolkit",
        "toolkit.arguments",
        "toolkit.errors",
    ]
