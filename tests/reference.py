"""The vendor's published OpenAPI documents, found at ``../shared/reference`` from the repository
root (never at an absolute path). Where that folder is absent, as on a user's clone, the tests
that need a document skip with a reason naming the path they looked at."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

REFERENCE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "reference"


def reference_document(name: str) -> dict[str, Any]:
    """The parsed document ``name`` (JSON or YAML); skips the calling test module when absent."""
    path = REFERENCE_DIR / name
    if not path.is_file():
        pytest.skip(f"vendor reference document not found at {path}", allow_module_level=True)
    text = path.read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    return loaded
