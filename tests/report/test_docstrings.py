"""Every public function of toolkit.report (the package's ``__all__`` and each module's) shows
an example (``make unit`` runs them all as doctests) and documents Parameters / Returns /
Examples in numpydoc sections, as toolkit.models does."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator

import toolkit.report as report


def _public_functions() -> Iterator[tuple[str, Callable[..., object]]]:
    modules = [report] + [
        importlib.import_module(f"{report.__name__}.{info.name}")
        for info in pkgutil.iter_modules(report.__path__)
    ]
    for module in modules:
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            # A name a module re-exports is checked where it is defined.
            if inspect.isfunction(value) and value.__module__.startswith(report.__name__):
                yield f"{value.__module__}.{value.__name__}", value


def test_there_are_functions_to_check() -> None:
    names = dict(_public_functions())
    assert "toolkit.report.writer.write_report" in names
    assert "toolkit.report.units.usd_column" in names


def test_public_functions_document_parameters_returns_and_examples() -> None:
    missing = []
    for name, function in _public_functions():
        doc = inspect.getdoc(function) or ""
        absent = [s for s in ("Parameters", "Returns", "Examples") if f"\n{s}\n---" not in doc]
        if ">>>" not in doc:
            absent.append("an example")
        if absent:
            missing.append(f"{name}: {', '.join(absent)}")
    assert not missing, missing
