"""The published Uniswap and Multicall3 artifacts (ABI and creation bytecode) on disk.

They come from the npm packages ``make node`` installs under ``tests/node/node_modules``
(``@uniswap/v3-core``, ``@uniswap/v3-periphery``, ``@uniswap/v2-core``,
``@uniswap/v2-periphery``, and viem's published Multicall3 creation code): nothing is compiled.
Without them a deployment raises :class:`~toolkit.testing.anvil.AnvilUnavailable`, which the
on-chain tests turn into a skip.

>>> from toolkit.testing.artifacts import find_artifacts
>>> find_artifacts() is None or find_artifacts().name == "node_modules"
True
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from toolkit.testing.anvil import AnvilUnavailable

__all__ = ["NPM_MODULES", "artifact", "find_artifacts"]

#: Where ``make node`` installs the npm packages, relative to the repository root.
NPM_MODULES = Path("tests/node/node_modules")
_ARTIFACTS = {
    "UniswapV3Factory": "@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/"
    "UniswapV3Factory.json",
    "UniswapV3Pool": "@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json",
    "NonfungiblePositionManager": "@uniswap/v3-periphery/artifacts/contracts/"
    "NonfungiblePositionManager.sol/NonfungiblePositionManager.json",
    "SwapRouter": "@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json",
    "UniswapV2Factory": "@uniswap/v2-core/build/UniswapV2Factory.json",
    "UniswapV2Pair": "@uniswap/v2-core/build/UniswapV2Pair.json",
    "ERC20": "@uniswap/v2-core/build/ERC20.json",
    "WETH9": "@uniswap/v2-periphery/build/WETH9.json",
    "UniswapV2Router02": "@uniswap/v2-periphery/build/UniswapV2Router02.json",
}
_MULTICALL3_ABI = [
    {
        "name": "aggregate3",
        "type": "function",
        "stateMutability": "payable",
        "inputs": [
            {
                "name": "calls",
                "type": "tuple[]",
                "components": [
                    {"name": "target", "type": "address"},
                    {"name": "allowFailure", "type": "bool"},
                    {"name": "callData", "type": "bytes"},
                ],
            }
        ],
        "outputs": [
            {
                "name": "returnData",
                "type": "tuple[]",
                "components": [
                    {"name": "success", "type": "bool"},
                    {"name": "returnData", "type": "bytes"},
                ],
            }
        ],
    }
]


def find_artifacts() -> Path | None:
    """The ``node_modules`` folder holding the Uniswap packages, or None (run ``make node``)."""
    for root in (Path.cwd(), *Path.cwd().parents):
        candidate = root / NPM_MODULES
        if (candidate / "@uniswap" / "v3-core").exists():
            return candidate
    return None


def _modules() -> Path:
    found = find_artifacts()
    if found is None:
        raise AnvilUnavailable(
            f"Uniswap artifacts not found: run `make node` (installs {NPM_MODULES})"
        )
    return found


@cache
def artifact(name: str) -> tuple[list[dict[str, Any]], str]:
    """``(abi, creation bytecode)`` of a published contract (names of :data:`_ARTIFACTS`, and
    ``Multicall3``)."""
    if name == "Multicall3":
        text = (_modules() / "viem/_esm/constants/contracts.js").read_text()
        found = re.search(r"multicall3Bytecode = '(0x[0-9a-f]+)'", text)
        if found is None:
            raise AnvilUnavailable("viem's published Multicall3 bytecode was not found")
        return _MULTICALL3_ABI, found.group(1)
    data = json.loads((_modules() / _ARTIFACTS[name]).read_text())
    code = data["bytecode"]
    return data["abi"], code if code.startswith("0x") else "0x" + code
