"""Every docstring example in toolkit.report runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["toolkit.report", "toolkit.report._result"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
