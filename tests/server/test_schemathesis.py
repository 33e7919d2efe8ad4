"""Schemathesis (every check) against the served ``/openapi.json``: the document is the
server's contract. Bounded examples (``tests/server/schemathesis.toml``) keep a run near a
minute; the exceptions the configuration makes are listed in ``vendor-differences.md``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import Served

pytestmark = pytest.mark.loopback

CONFIG = Path(__file__).with_name("schemathesis.toml")


def test_schemathesis_finds_no_failure(served: Served, tmp_path: Path) -> None:
    cli = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    if cli is None:
        pytest.skip("schemathesis is not installed (pip install -e '.[dev]')")
    done = subprocess.run(
        [cli, "--config-file", str(CONFIG), "run", f"{served.url}/openapi.json", "--no-color"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,  # its cache and reports stay out of the checkout
    )
    tail = done.stdout[-8000:] + done.stderr[-2000:]
    assert done.returncode == 0, tail
    assert " failures" not in done.stdout.splitlines()[-1], tail
