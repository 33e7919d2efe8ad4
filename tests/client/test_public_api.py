"""The client's public names: one import path each, and every one the docs use is exported."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

import toolkit.client

ROOT = Path(__file__).resolve().parents[2]
_IMPORT = re.compile(r"from (toolkit\.client(?:\.\w+)?) import (?:\(([^)]*)\)|([^\n(]+))")


def _doc_imports() -> set[tuple[str, str]]:
    """(module, name) of every ``from toolkit.client... import`` in the README and notebooks."""
    texts = [(ROOT / "README.md").read_text()]
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        texts += ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"]
    found = set()
    for text in texts:
        for module, grouped, inline in _IMPORT.findall(text):
            names = re.sub(r"#[^\n]*", "", grouped or inline).split(",")
            found |= {(module, name.strip()) for name in names if name.strip()}
    return found


def test_every_client_name_the_docs_import_is_exported_by_the_package() -> None:
    found = _doc_imports()
    assert ("toolkit.client", "ServiceClient") in found  # the scan reads the docs at all
    missing = sorted(name for _, name in found if name not in toolkit.client.__all__)
    assert missing == []


def test_every_exported_name_is_importable() -> None:
    for name in toolkit.client.__all__:
        assert getattr(toolkit.client, name) is not None


@pytest.mark.parametrize(
    "module", ["toolkit.resources", "toolkit.backtest", "toolkit.client.retry"]
)
def test_retry_policy_has_one_public_path(module: str) -> None:
    # Defined in toolkit.resources.retry, public as toolkit.client.RetryPolicy, and no
    # package re-exports it under another name.
    assert "RetryPolicy" not in getattr(importlib.import_module(module), "__all__", [])
    assert toolkit.client.RetryPolicy.__module__ == "toolkit.resources.retry"


def test_one_target_class() -> None:
    from toolkit.simulate.traffic import clients

    assert not hasattr(clients, "Target")
    assert toolkit.client.Target.__module__ == "toolkit.client.target"
