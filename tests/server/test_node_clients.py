"""ethers v6 and viem (npm, ``tests/node``) on their common paths against a served instance:
``node --test tests/node/clients.test.mjs`` with the chain's URL in the environment."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from toolkit.scenario import load_scenario
from toolkit.world.evm import dev_accounts

from .conftest import USDC, Served

pytestmark = pytest.mark.loopback

NODE_DIR = Path(__file__).resolve().parents[1] / "node"
SUITE = NODE_DIR / "clients.test.mjs"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the ethers/viem suite needs Node.js 18 or later)")
    for package in ("ethers", "viem"):
        if not (NODE_DIR / "node_modules" / package / "package.json").exists():
            pytest.skip(f"tests/node/node_modules/{package} is missing: run `make node`")
    return node


@pytest.mark.parametrize("chain", [8453, 1])
def test_ethers_and_viem_common_paths(served: Served, chain: int) -> None:
    node = _node()
    dev = dev_accounts(load_scenario("default"))[0]
    env = {
        **os.environ,
        "TOOLKIT_RPC_URL": f"{served.url}/rpc/{chain}",
        "TOOLKIT_CHAIN_ID": str(chain),
        "TOOLKIT_TOKEN": USDC[chain],
        "TOOLKIT_DEV_KEY": dev.key.reveal(),
    }
    done = subprocess.run(
        [node, "--test", "--test-reporter=spec", str(SUITE)],
        cwd=NODE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "# fail 0" in done.stdout or "fail 0" in done.stdout
