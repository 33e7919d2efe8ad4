"""What each kind of row does on the service and on chain: an RFQ asks for a quote and a
converting one is opened on chain (approve the escrow, send ``open()``); a swap asks for a route,
approves its target and sends its call; a credit action asks for its calls and sends them; a
sent swap's or credit call's receipt is read later and a revert counted."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hexbytes import HexBytes
from web3 import Web3
from web3.exceptions import TransactionNotFound
from web3.types import Wei

from toolkit.client import ServiceClient, ServiceError, SwapClient
from toolkit.client.credit import CreditClient
from toolkit.clock import Clock
from toolkit.codecs.functions import encode_call
from toolkit.resources import Quote
from toolkit.scenario import Scenario
from toolkit.simulate.traffic.clients import TrafficClients
from toolkit.world.evm.markets import MARKET_CHAINS, Market

__all__ = ["GAS", "MAX_APPROVAL", "RECEIPT_BLOCKS", "RECEIPT_TRIES", "Actions"]

#: Gas sent with each transaction: above what approve and ``open()`` use on the simulated chains.
GAS = 500_000
MAX_APPROVAL = 2**256 - 1
#: Blocks after which a sent swap's or credit call's receipt is read, and how often it is read
#: again while the transaction is not mined yet.
RECEIPT_BLOCKS = 2
RECEIPT_TRIES = 10


class Actions:
    """The steps of :class:`~toolkit.simulate.traffic.Traffic` that act on the service and the
    chains, each returning the steps it leads to as ``(delay, kind, payload)``; the thread
    holds the state they read and count into."""

    clock: Clock
    counts: Counter[str]
    outcomes: list[dict[str, Any]]
    scenario: Scenario
    target: TrafficClients
    _markets: dict[int, Market]
    _credit: str
    _approved: set[tuple[int, str, str, str]]
    _chains: dict[int, Web3]
    _block_time: dict[int, float]

    def _rfq(self, client: ServiceClient, row: dict[str, Any], user: str) -> Quote | None:
        self.counts["rfq"] += 1
        src, dst, symbol = int(row["src_chain"]), int(row["dst_chain"]), str(row["token"])
        # Each user's request and the service's answer: the market's own 404 share.
        outcome = {
            "observed_at": self.clock(),
            "src_chain": src,
            "dst_chain": dst,
            "token": symbol,
            "quote_type": str(row["type"]),
            "amount": int(row["amount"]),
            "status": 200,
        }
        self.outcomes.append(outcome)
        try:
            quote = client.rfq(
                src_chain=src,
                dst_chain=dst,
                amount=int(row["amount"]),
                token=self.scenario.token(dst, symbol).address,
                src_token=self.scenario.token(src, symbol).address,
                user=user,
                type=row["type"],
            )
        except ServiceError as exc:
            self.counts[f"rfq {exc.status}"] += 1
            outcome["status"] = exc.status
            return None
        self.counts["quoted"] += 1
        return quote

    def _open(self, client: ServiceClient, quote: Quote) -> None:
        try:
            built = client.transaction(quote)
        except ServiceError as exc:
            self.counts[f"transaction {exc.status}"] += 1
            return
        request = built.transaction_request
        assert request is not None  # the transaction endpoint always builds it
        w3 = self._chain(request.chain_id)
        sender = Web3.to_checksum_address(request.from_)
        escrow = Web3.to_checksum_address(request.to)
        for item in built.preview.inputs:
            self._approve(w3, request.chain_id, sender, item.asset_address, escrow)
        value = int(request.value, 16)
        if self._send(w3, sender, escrow, request.data, value, GAS, "open") is None:
            return
        self.counts["opened"] += 1

    def _swap(
        self, swaps: SwapClient, row: dict[str, Any], user: str
    ) -> list[tuple[float, str, Any]]:
        chain = int(row["chain"])
        tokens = self._markets[chain].tokens
        token_in = tokens[str(row["token_in"])].address
        try:
            route = swaps.route(
                MARKET_CHAINS[chain],
                amount_in=int(row["amount_in"]),
                token_in=token_in,
                token_out=tokens[str(row["token_out"])].address,
            )
        except ServiceError as exc:
            self.counts[f"swap {exc.status}"] += 1
            return []
        self.counts["swap_quoted"] += 1
        w3 = self._chain(chain)
        target = Web3.to_checksum_address(route.target)
        self._approve(w3, chain, user, token_in, target)
        sent = self._send(w3, user, target, route.call_data, 0, route.gas_limit, "swap")
        if sent is None:
            return []
        self.counts["swap_sent"] += 1
        return [self._receipt_due(chain, sent, "swap_reverted")]

    def _credit_action(
        self, credit: CreditClient, row: dict[str, Any], account: str
    ) -> list[tuple[float, str, Any]]:
        action, amount = str(row["action"]), int(row["amount"])
        asset = self._credit
        try:
            if action == "lock":
                calls = credit.lock(account, amount, asset)
            elif action == "draw":
                calls = credit.draw(account, amount, account)
            elif action == "repay":
                calls = credit.repay(account, amount)
            else:
                calls = credit.unlock(account, amount, asset)
        except ServiceError as exc:
            self.counts[f"credit {action} {exc.status}"] += 1
            return []
        later: list[tuple[float, str, Any]] = []
        for call in calls:
            w3 = self._chain(call.chain_id)
            to = Web3.to_checksum_address(call.to)
            sent = self._send(w3, account, to, call.data, int(call.value), GAS, "credit")
            if sent is None:
                return later  # the later calls of the action depend on this one
            self.counts["credit_calls"] += 1
            later.append(self._receipt_due(call.chain_id, sent, "credit_reverted"))
        self.counts[f"credit_{action}"] += 1
        return later

    def _send(
        self, w3: Web3, sender: str, to: str, data: str, value: int, gas: int, what: str
    ) -> HexBytes | None:
        """Send a transaction as ``sender`` (a development account): its hash, or None (counted
        as ``<what> refused``) when the node refuses it."""
        try:
            return w3.eth.send_transaction(
                {"from": sender, "to": to, "data": data, "value": Wei(value), "gas": gas}  # type: ignore[typeddict-item]
            )
        except ValueError as exc:  # a JSON-RPC error: the user's transaction was refused
            self.counts[f"{what} refused"] += 1
            self.counts[f"{what} refused: {exc}"[:80]] += 1
            return None

    def _receipt_due(
        self, chain_id: int, tx_hash: HexBytes, counter: str
    ) -> tuple[float, str, Any]:
        return (
            RECEIPT_BLOCKS * self._block_time[chain_id],
            "receipt",
            (chain_id, tx_hash, counter, 1),
        )

    def _receipt(
        self, chain_id: int, tx_hash: HexBytes, counter: str, tries: int
    ) -> list[tuple[float, str, Any]]:
        """Count ``counter`` when the transaction reverted; read again a block later while it is
        not mined (``unmined`` after :data:`RECEIPT_TRIES` reads)."""
        try:
            receipt = self._chain(chain_id).eth.get_transaction_receipt(tx_hash)
        except TransactionNotFound:
            if tries >= RECEIPT_TRIES:
                self.counts["unmined"] += 1
                return []
            again = (chain_id, tx_hash, counter, tries + 1)
            return [(self._block_time[chain_id], "receipt", again)]
        if receipt["status"] != 1:
            self.counts[counter] += 1
        return []

    def _approve(self, w3: Web3, chain_id: int, owner: str, token: str, spender: str) -> None:
        # The chain id is known: no eth_chainId round trip.
        key = (chain_id, owner, token.lower(), spender.lower())
        if key in self._approved:
            return
        data = encode_call("erc20.approve", spender, MAX_APPROVAL)
        w3.eth.send_transaction({"from": owner, "to": token, "data": data, "gas": GAS})  # type: ignore[typeddict-item]
        self._approved.add(key)

    def _chain(self, chain_id: int) -> Web3:
        if chain_id not in self._chains:
            self._chains[chain_id] = self.target.chain(chain_id)
        return self._chains[chain_id]
