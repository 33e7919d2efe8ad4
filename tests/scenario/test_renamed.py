"""Old scenario keys (before the ``_s`` suffix) are refused with the new name, never aliased.

This file spells the old keys on purpose: the rename script leaves it alone.
"""

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolkit.scenario import Scenario, ScenarioError, read_scenario, scenario_path
from toolkit.scenario.renamed import RENAMED_KEYS, renamed_key

Doc = dict[str, Any]
Parse = Callable[[Doc], Scenario]


def _error(parse: Parse, doc: Doc) -> str:
    with pytest.raises(ScenarioError) as info:
        parse(doc)
    return str(info.value)


def test_an_old_window_key_names_the_new_one(parse: Parse, default_doc: Doc):
    default_doc["windows"]["quote_seconds"] = default_doc["windows"].pop("quote_s")
    assert _error(parse, default_doc) == "windows.quote_seconds: renamed to windows.quote_s"


def test_an_old_required_chain_key_is_reported_before_the_missing_new_one(
    parse: Parse, default_doc: Doc
):
    chain = default_doc["chains"][2]
    chain["confirmation_seconds"] = chain.pop("confirmation_s")
    message = _error(parse, default_doc)
    assert message == "chains[2].confirmation_seconds: renamed to chains[2].confirmation_s"


def test_old_credit_keys_name_the_new_ones(parse: Parse, single_doc: Doc):
    doc = copy.deepcopy(single_doc)
    doc["credit"] = {"grace_seconds": 86_400}
    assert _error(parse, doc) == "credit.grace_seconds: renamed to credit.grace_s"
    vault = {"apy_bps": 500, "epoch": 0, "redeem_delay_seconds": 86_400}
    doc["credit"] = {
        "collateral": [
            {
                "symbol": "yoX",
                "kind": "stable-vault",
                "decimals": 6,
                "ltv_bps": 5000,
                "maintenance_ltv_bps": 6000,
                "liquidation_bonus_bps": 500,
                "prices": [[0, "1"]],
                "vault": vault,
            }
        ]
    }
    assert _error(parse, doc) == (
        "credit.collateral[0].vault.redeem_delay_seconds: "
        "renamed to credit.collateral[0].vault.redeem_delay_s"
    )


def test_a_users_file_with_an_old_key_is_refused_naming_the_file(tmp_path: Path):
    text = scenario_path("single-pool").read_text()
    assert "block_time" not in text
    text = text.replace("[[chains]]\n", "[[chains]]\nblock_time = 2\n", 1)
    path = tmp_path / "mine.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as info:
        read_scenario(path)
    assert str(info.value) == "mine.toml: chains[0].block_time: renamed to chains[0].block_time_s"


def test_every_new_key_is_accepted_and_every_old_one_is_not_an_alias(parse: Parse, single_doc: Doc):
    # The new names are the declared fields: the shipped scenarios use them and parse.
    scenario = parse(copy.deepcopy(single_doc))
    assert scenario.windows.quote_s == 15 and scenario.chains[0].confirmation_s == 36
    for old, new in RENAMED_KEYS.items():
        assert old.rsplit(".", 1)[0] == new.rsplit(".", 1)[0], old
        assert renamed_key(new) is None  # no chain of renames
    doc = copy.deepcopy(single_doc)
    doc["windows"] = {"quote_s": 20, "quote_seconds": 20}  # both spellings: still refused
    assert _error(parse, doc) == "windows.quote_seconds: renamed to windows.quote_s"


def test_an_unrelated_unknown_key_keeps_its_rule(parse: Parse, default_doc: Doc):
    default_doc["windows"]["quote_minutes"] = 1
    assert _error(parse, default_doc) == "windows.quote_minutes: unknown key"
