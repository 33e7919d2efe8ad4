import doctest
import importlib

import pytest

MODULES = [
    "toolkit.engine",
    "toolkit.engine.core",
    "toolkit.engine.engine",
    "toolkit.engine.errors",
    "toolkit.engine.events",
    "toolkit.engine.pricing",
    "toolkit.engine.quoting",
    "toolkit.engine.results",
    "toolkit.engine.state",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
