"""The anvil launcher: a real node on loopback that answers JSON-RPC and stops with its block."""

from __future__ import annotations

import httpx
import pytest

from toolkit.testing.anvil import AnvilUnavailable, anvil, find_anvil

pytestmark = pytest.mark.skipif(
    find_anvil() is None, reason="anvil not installed (make node installs it from npm)"
)


def test_anvil_answers_its_chain_id_and_stops() -> None:
    with anvil(chain_id=8453) as node:
        body = {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []}
        assert httpx.post(node.url, json=body).json()["result"] == hex(8453)
        process = node.process
    assert process.poll() is not None


def test_missing_binary_names_where_it_looked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLKIT_ANVIL", "/nonexistent/anvil")
    with pytest.raises(AnvilUnavailable, match="make node"), anvil():
        pass
