"""Every docstring example in toolkit.models runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "toolkit.models._loss",
    "toolkit.models._sizing",
    "toolkit.models._observed",
    "toolkit.models._fees",
    "toolkit.models._tiers",
    "toolkit.models._quotes",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_every_public_function_has_an_example() -> None:
    import toolkit.models as models

    for name in models.__all__:
        doc = getattr(models, name).__doc__ or ""
        assert ">>>" in doc, f"{name} has no example"
