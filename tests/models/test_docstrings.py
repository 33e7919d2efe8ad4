"""Every public function of toolkit.models shows an example (make unit runs them all) and,
outside the health family, documents Parameters / Returns / Examples in numpydoc sections."""

from __future__ import annotations

import inspect

import toolkit.models as models

# toolkit.models.health is documented by its own family's pass; classes document themselves.
_SECTIONS_LATER = ("toolkit.models.health",)


def test_every_public_function_has_an_example() -> None:
    for name in models.__all__:
        doc = getattr(models, name).__doc__ or ""
        assert ">>>" in doc, f"{name} has no example"


def test_public_functions_document_parameters_returns_and_examples() -> None:
    missing = []
    for name in models.__all__:
        value = getattr(models, name)
        if not inspect.isfunction(value) or value.__module__.startswith(_SECTIONS_LATER):
            continue
        doc = inspect.getdoc(value) or ""
        absent = [s for s in ("Parameters", "Returns", "Examples") if f"\n{s}\n---" not in doc]
        if absent:
            missing.append(f"{name}: {', '.join(absent)}")
    assert not missing, missing
