"""The package surface: curated exports, runnable docstring examples, import order."""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys

import pytest
from pydantic import BaseModel

import toolkit.resources

MODULES = [
    "toolkit.resources",
    "toolkit.resources._base",
    "toolkit.resources.calls",
    "toolkit.resources.credit",
    "toolkit.resources.credit_queries",
    "toolkit.resources.earn",
    "toolkit.resources.error_bodies",
    "toolkit.resources.errors",
    "toolkit.resources.events",
    "toolkit.resources.intents",
    "toolkit.resources.liquidity",
    "toolkit.resources.swap",
    "toolkit.resources.types",
    "toolkit.chain.erc7930",
    "toolkit.chain.caip2",
]


def test_all_names_are_exported_once() -> None:
    names = toolkit.resources.__all__
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(toolkit.resources, name), name


def test_every_public_model_is_exported() -> None:
    for module_name in MODULES[2:-2]:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            assert name in toolkit.resources.__all__, f"{module_name}.{name}"


def test_every_model_has_a_docstring() -> None:
    for name in toolkit.resources.__all__:
        value = getattr(toolkit.resources, name)
        if isinstance(value, type) and issubclass(value, BaseModel):
            assert value.__doc__, name


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_run(module_name: str) -> None:
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_importing_resources_first_leaves_the_chain_package_alone() -> None:
    # toolkit.chain imports toolkit.resources; the reverse import must wait until first use,
    # or importing toolkit.resources first would meet a half-initialised package.
    code = (
        "import sys, toolkit.resources\n"
        "assert 'toolkit.chain' not in sys.modules, 'toolkit.chain imported eagerly'\n"
        "from toolkit.resources import Caip2, parse_value\n"
        "assert parse_value(Caip2, 'eip155:1', 'chain') == 'eip155:1'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
