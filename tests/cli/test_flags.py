"""Error messages name the command-line flag of the field an error carries
(:attr:`toolkit.errors.InputError.field`), never a name guessed from the message's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.arguments import ArgumentError
from toolkit.cli import main
from toolkit.cli.argtypes import flagged
from toolkit.errors import InputError


def test_the_field_an_error_carries_becomes_its_flag() -> None:
    assert flagged(ArgumentError("from_block", "an integer >= 0", -1)) == (
        "--from-block: must be an integer >= 0, got -1"
    )
    both = InputError("v3_factory/v2_factory: give both", field="v3_factory/v2_factory")
    assert flagged(both) == "--v3-factory/--v2-factory: give both"


def test_a_leading_name_without_its_field_is_left_as_written() -> None:
    # "rounds" is a flag's parameter, but neither error says it is about that field.
    assert flagged(ValueError("rounds: too many")) == "rounds: too many"
    assert flagged(InputError("rounds: too many", field="duration")) == "rounds: too many"
    # A field with no flag (a library-only parameter) keeps its name.
    assert flagged(InputError("grid: empty", field="grid")) == "grid: empty"


def test_parameter_names_in_the_text_are_named_as_flags() -> None:
    error = InputError("accounts: give at least one account, or all_known", field="accounts")
    assert flagged(error) == "--accounts: give at least one account, or --all-known"


def test_credit_without_accounts_names_both_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "credit.duckdb"
    code = main(["collect", "credit", "--embedded", "--db", str(db), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == "toolkit collect: --accounts: give at least one account, or --all-known\n"
