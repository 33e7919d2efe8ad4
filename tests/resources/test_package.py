"""The package surface: every public name of every module is exported once, and documented.

(Docstring examples run with ``--doctest-modules``; import order is the import-linter contract's
business.)
"""

from __future__ import annotations

import importlib
import pkgutil

from pydantic import BaseModel

import toolkit.resources

# Every module of the package: what a module lists in __all__ it offers to the package, and the
# package's own __all__ is the public API (a helper module lists nothing).
MODULES = [
    info.name for info in pkgutil.iter_modules(toolkit.resources.__path__, "toolkit.resources.")
]


def test_the_package_has_the_modules_we_expect() -> None:
    assert "toolkit.resources.intents" in MODULES and "toolkit.resources.credit" in MODULES
    assert "toolkit.resources.base" in MODULES


def test_all_names_are_exported_once() -> None:
    names = toolkit.resources.__all__
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(toolkit.resources, name), name


def test_every_public_name_of_every_module_is_exported() -> None:
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            assert name in toolkit.resources.__all__, f"{module_name}.{name}"
            assert getattr(toolkit.resources, name) is getattr(module, name), name


def test_every_model_has_a_docstring() -> None:
    for name in toolkit.resources.__all__:
        value = getattr(toolkit.resources, name)
        if isinstance(value, type) and issubclass(value, BaseModel):
            assert value.__doc__, name
