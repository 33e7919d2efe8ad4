"""Every docstring example in toolkit.testing runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "toolkit.testing",
    "toolkit.testing.clock",
    "toolkit.testing.display",
    "toolkit.testing.frames",
    "toolkit.testing.rates",
    "toolkit.testing.service",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_every_public_function_has_an_example() -> None:
    import toolkit.testing as testing

    for name in (
        "VirtualClock",
        "assert_frame_close",
        "assert_rate_within",
        "embedded_service",
        "format_frame",
    ):
        doc = getattr(testing, name).__doc__ or ""
        assert ">>>" in doc, f"{name} has no example"
