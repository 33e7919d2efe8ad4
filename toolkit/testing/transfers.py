"""Token transfers on anvil, block by block, and reorgs of them: what a chain follower follows.

:func:`deploy_token` deploys Uniswap v2-core's published test ``ERC20`` (from ``make node``'s
npm packages; nothing is compiled) on a running :class:`~toolkit.testing.anvil.Anvil` and turns
automine off, so each :meth:`TokenActivity.mine` is one block holding exactly the transfers
asked for (one ``Transfer`` log each, to recipients drawn from ``seed``).
:meth:`TokenActivity.reorg` replaces the last blocks with a new branch of other transfers
(``anvil_reorg``), :meth:`TokenActivity.rollback` removes blocks (``anvil_rollback``).

>>> from toolkit.testing.transfers import TRANSFER_TOPIC
>>> TRANSFER_TOPIC[:10]
'0xddf252ad'
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import httpx
from eth_abi import encode
from eth_utils import keccak

from toolkit.testing.anvil import Anvil
from toolkit.testing.artifacts import artifact

__all__ = ["TRANSFER_TOPIC", "TokenActivity", "deploy_token"]

#: ``Transfer(address,address,uint256)``'s topic.
TRANSFER_TOPIC = "0x" + keccak(text="Transfer(address,address,uint256)").hex()
_TRANSFER = keccak(text="transfer(address,uint256)")[:4]
_GAS = hex(80_000)


@dataclass
class TokenActivity:
    """An ERC-20 on ``node`` sending transfers from the node's first account."""

    node: Anvil
    token: str
    sender: str
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    _id: int = 0
    #: The sender's next nonce, kept here: a node handling a batch of one sender's
    #: transactions concurrently would give several of them the same one.
    nonce: int | None = None

    def rpc(self, method: str, params: list[Any]) -> Any:
        """One JSON-RPC call; an error answer raises ``RuntimeError``."""
        self._id += 1
        body = {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}
        answer = httpx.post(self.node.url, json=body, timeout=60).json()
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def transfers(self, count: int) -> list[dict[str, str]]:
        """``count`` transfer transactions (not sent) to random recipients, random amounts."""
        txs = []
        for _ in range(count):
            to = "0x" + self.rng.randbytes(20).hex()
            data = _TRANSFER + encode(["address", "uint256"], [to, self.rng.randrange(1, 10**21)])
            txs.append(
                {"from": self.sender, "to": self.token, "data": "0x" + data.hex(), "gas": _GAS}
            )
        return txs

    def send(self, txs: list[dict[str, str]]) -> None:
        """Send ``txs`` to the pool in one batch (mined by the next :meth:`mine`)."""
        if not txs:
            return
        if self.nonce is None:
            self.nonce = int(self.rpc("eth_getTransactionCount", [self.sender, "pending"]), 16)
        batch = [
            {"jsonrpc": "2.0", "id": i, "method": "eth_sendTransaction",
             "params": [tx | {"nonce": hex(self.nonce + i)}]}
            for i, tx in enumerate(txs)
        ]  # fmt: skip
        self.nonce += len(txs)
        answers = httpx.post(self.node.url, json=batch, timeout=60).json()
        failed = [a["error"] for a in answers if "error" in a]
        if failed:
            raise RuntimeError(f"eth_sendTransaction: {failed[0]}")

    def mine(self, transfers: int = 0, blocks: int = 1) -> int:
        """Mine ``blocks`` blocks, each holding ``transfers`` transfers; the new head."""
        if transfers == 0:  # empty blocks in one call
            self.rpc("anvil_mine", [hex(blocks)])
            return self.head()
        for _ in range(blocks):
            self.send(self.transfers(transfers))
            self.rpc("evm_mine", [])
        return self.head()

    def head(self) -> int:
        """The node's latest block number."""
        return int(self.rpc("eth_blockNumber", []), 16)

    def reorg(self, depth: int, transfers: int) -> None:
        """Replace the last ``depth`` blocks with a branch holding ``transfers`` other transfers
        in each of its blocks (same height)."""
        pairs = [[tx, offset] for offset in range(depth) for tx in self.transfers(transfers)]
        self.rpc("anvil_reorg", [depth, pairs])
        self.nonce = None  # the new branch's: read again

    def rollback(self, depth: int) -> None:
        """Remove the last ``depth`` blocks (the head goes down)."""
        self.rpc("anvil_rollback", [depth])
        self.nonce = None

    def logs(self, first: int, last: int) -> list[dict[str, Any]]:
        """The node's ``Transfer`` logs over ``[first, last]`` (``eth_getLogs``)."""
        query = {"fromBlock": hex(first), "toBlock": hex(last), "topics": [TRANSFER_TOPIC]}
        return list(self.rpc("eth_getLogs", [query]))


def deploy_token(node: Anvil, *, seed: int = 0) -> TokenActivity:
    """Deploy the test ERC-20 on ``node`` (its first account holds the supply) and switch
    automine off; raises :class:`~toolkit.testing.anvil.AnvilUnavailable` without the npm
    packages (``make node``)."""
    _, bytecode = artifact("ERC20")
    code = bytecode if bytecode.startswith("0x") else "0x" + bytecode
    body = {"jsonrpc": "2.0", "id": 1, "method": "eth_accounts", "params": []}
    sender = httpx.post(node.url, json=body, timeout=30).json()["result"][0]
    activity = TokenActivity(node, token="", sender=sender, rng=random.Random(seed))
    supply = encode(["uint256"], [10**40]).hex()
    tx = activity.rpc(
        "eth_sendTransaction", [{"from": sender, "data": code + supply, "gas": hex(3_000_000)}]
    )
    receipt = activity.rpc("eth_getTransactionReceipt", [tx])
    activity.token = receipt["contractAddress"]
    activity.rpc("evm_setAutomine", [False])
    return activity
