"""The credit accounts' collateral mix, read on chain from each credit hub.

``collateralOf(account, token)`` for every collateral token the protocol lists on any chain
(remote chains' tokens are booked on the hub under their addresses there), batched as one
JSON-RPC array per hub, with each token's ``decimals()`` read once per run on its own chain;
:class:`~toolkit.collect.credit.CreditCollector` stores the rows in ``credit_collateral``.
Each hub is read at one block (the latest when the batch is sent), which every row names
(``hub_chain``, ``block_number``, ``block_hash``): a read at a block a reorg orphaned is found
and read again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolkit.client import ServiceClient, chain_web3, rpc_url
from toolkit.codecs.functions import decode_result, encode_call
from toolkit.collect.rpc import RpcFailure, hex_int, hex_text, rpc_result

__all__ = ["CollateralReader", "Hub", "Token", "batch_call", "latest_block"]


@dataclass(frozen=True)
class Hub:
    """A credit hub of the protocol: its credit asset (upper case), chain and address."""

    asset: str
    chain: int
    address: str


@dataclass(frozen=True)
class Token:
    """A collateral token of the protocol: the chain it is locked on, its address, symbol."""

    chain: int
    address: str
    symbol: str


def batch_call(
    w3: Any,
    calls: Sequence[Mapping[str, str]],
    function: str,
    what: str,
    block: str = "latest",
) -> list[tuple[Any, ...]]:
    """``eth_call`` each of ``calls`` at ``block`` (a tag or hex number) in one JSON-RPC batch;
    the decoded results in order. A failed call raises :class:`RpcFailure` naming ``what``."""
    if not calls:
        return []
    answers = w3.provider.make_batch_request([("eth_call", [dict(c), block]) for c in calls])
    if not isinstance(answers, list):
        raise RpcFailure(function, None, f"{what}: batch refused: {answers.get('error')}")
    out = []
    for answer in answers:
        if "error" in answer:
            raise RpcFailure(function, None, f"{what}: {answer['error']}")
        out.append(decode_result(function, answer["result"]))
    return out


def latest_block(w3: Any) -> tuple[int, str]:
    """The node's latest block: its number and hash."""
    block = rpc_result(
        "eth_getBlockByNumber", w3.provider.make_request("eth_getBlockByNumber", ["latest", False])
    )
    return hex_int(block["number"]), hex_text(block["hash"])


_SAME_BLOCK_TRIES = 3


def _at_one_block(
    w3: Any, calls: Sequence[Mapping[str, str]], function: str, what: str
) -> tuple[list[tuple[Any, ...]], tuple[int, str]]:
    """``calls`` at the latest block, and that block: the head read before and after the batch
    must be the same block (tried three times; then the block after). Reading at the latest
    block needs no historical state, which a node (or the embedded chain) may not keep."""
    before = latest_block(w3)
    for _ in range(_SAME_BLOCK_TRIES):
        answers = batch_call(w3, calls, function, what)
        after = latest_block(w3)
        if after == before:
            break
        before = after
    return answers, after


class CollateralReader:
    """The holdings of accounts on the protocol's ``hubs`` in its collateral ``tokens`` (both
    set from ``/credit/protocol`` by the collector each round), with a web3 per chain:
    ``web3s`` (chain id → ``Web3``), else the embedded service's, else
    ``$TOOLKIT_RPC_URL_<chainId>``."""

    def __init__(self, client: ServiceClient, web3s: Mapping[int, Any]) -> None:
        self.client = client
        self.web3s = dict(web3s)
        self.hubs: list[Hub] = []
        self.tokens: list[Token] = []
        self._decimals: dict[tuple[int, str], int | None] = {}

    def web3(self, chain: int) -> Any | None:
        """web3 on ``chain``: given, else the embedded service's, else ``$TOOLKIT_RPC_URL_<id>``."""
        if chain not in self.web3s:
            embedded = self.client.embedded
            url = None if embedded is not None else rpc_url(chain)
            if embedded is not None or url is not None:
                self.web3s[chain] = chain_web3(chain, embedded=embedded, url=url)
        return self.web3s.get(chain)

    def holdings(
        self, accounts: Sequence[str], chains: set[int] | None = None
    ) -> dict[str, list[dict[str, Any]]]:
        """Rows of every non-zero holding of ``accounts`` on every hub with a web3 (one batch
        per hub; ``chains``: only the hubs on these): ``collateralOf(account, token)`` for each
        protocol collateral token."""
        held: dict[str, list[dict[str, Any]]] = {}
        for hub in self.hubs:
            if chains is not None and hub.chain not in chains:
                continue
            w3 = self.web3(hub.chain)
            if w3 is None or not self.tokens:
                continue
            pairs = [(account, token) for account in accounts for token in self.tokens]
            calls = [
                {"to": hub.address, "data": encode_call("creditHub.collateralOf", a, t.address)}
                for a, t in pairs
            ]
            answers, (number, block_hash) = _at_one_block(
                w3, calls, "creditHub.collateralOf", f"{hub.asset} credit hub"
            )
            read = {"hub_chain": hub.chain, "block_number": number, "block_hash": block_hash}
            for (account, token), (amount,) in zip(pairs, answers, strict=True):
                if amount:
                    held.setdefault(account, []).append(
                        {
                            "account": account,
                            "asset": hub.asset,
                            "chain_id": token.chain,
                            "token": token.address,
                            "symbol": token.symbol,
                            "amount": int(amount),
                            "decimals": self.decimals_of(token),
                        }
                        | read
                    )
        return held

    def decimals_of(self, token: Token) -> int | None:
        """The token's ``decimals()`` on its chain, read once per run (None without a web3)."""
        key = (token.chain, token.address)
        if key not in self._decimals:
            w3 = self.web3(token.chain)
            call = {"to": token.address, "data": encode_call("erc20.decimals")}
            found = None if w3 is None else batch_call(w3, [call], "erc20.decimals", token.symbol)
            self._decimals[key] = None if found is None else int(found[0][0])
        return self._decimals[key]
