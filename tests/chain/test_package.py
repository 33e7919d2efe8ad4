"""The package stays light: importing it pulls in neither the resources models nor eth-account."""

from __future__ import annotations

import subprocess
import sys

import pytest

import toolkit.chain


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_is_light() -> None:
    out = _run(
        "import sys, toolkit.chain; "
        "print('toolkit.resources' in sys.modules, 'eth_account' in sys.modules)"
    )
    assert out == "False False"


@pytest.mark.parametrize(
    "first", ["toolkit.resources", "toolkit.chain", "toolkit.chain.guard", "toolkit.chain.calls"]
)
def test_no_import_cycle_in_any_order(first: str) -> None:
    code = (
        f"import {first}\n"
        "from toolkit.chain import escrow, guard, calls, borrow, registry, builder\n"
        "import toolkit.resources\n"
        "print(guard.check_transaction.__name__)"
    )
    assert _run(code) == "check_transaction"


def test_lazy_submodules_and_all() -> None:
    assert toolkit.chain.guard.check_calls.__name__ == "check_calls"
    assert toolkit.chain.borrow.DOMAIN_NAME == "LiquidityPool"
    for name in toolkit.chain.__all__:
        assert getattr(toolkit.chain, name) is not None
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        _ = toolkit.chain.nothing  # type: ignore[attr-defined]
