import doctest
import importlib

import pytest

MODULES = [
    "toolkit.scenario",
    "toolkit.scenario.address",
    "toolkit.scenario.errors",
    "toolkit.scenario.load",
    "toolkit.scenario.model",
    "toolkit.scenario.parse",
    "toolkit.scenario.secret",
    "toolkit.scenario.validate",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
