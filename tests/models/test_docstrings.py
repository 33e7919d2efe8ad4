"""Every public function of toolkit.models shows an example (make unit runs them all)."""

from __future__ import annotations


def test_every_public_function_has_an_example() -> None:
    import toolkit.models as models

    for name in models.__all__:
        doc = getattr(models, name).__doc__ or ""
        assert ">>>" in doc, f"{name} has no example"
