import doctest
import importlib

import pytest

MODULES = ["toolkit.world", "toolkit.world.escrow", "toolkit.world.order", "toolkit.world.world"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
