import copy
import tomllib
from collections.abc import Callable
from typing import Any

import pytest

from toolkit.scenario import Scenario, parse_scenario, scenario_path
from toolkit.scenario.load import _registry_defaults


def _read(name: str) -> dict[str, Any]:
    with scenario_path(name).open("rb") as f:
        return tomllib.load(f)


@pytest.fixture
def default_doc() -> dict[str, Any]:
    """A fresh, mutable copy of the parsed default.toml."""
    return copy.deepcopy(_read("default"))


@pytest.fixture
def single_doc() -> dict[str, Any]:
    return copy.deepcopy(_read("single-pool"))


@pytest.fixture
def parse() -> Callable[[dict[str, Any]], Scenario]:
    """Parse a document the way read_scenario does (registry defaults for contracts)."""
    defaults = _registry_defaults()

    def run(doc: dict[str, Any]) -> Scenario:
        return parse_scenario(doc, contract_defaults=defaults)

    return run
