"""Shared helpers of the credit-surface tests: an embedded service, web3.py on its Base chain,
and execution of the calls an endpoint returns as the account (impersonated, mined at once)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from web3 import Web3

from toolkit.client import chain_provider
from toolkit.codecs import functions
from toolkit.scenario import Scenario, load_scenario
from toolkit.scenario.credit import CreditSettings
from toolkit.testing import Harness, embedded_service
from toolkit.world.evm import CreditHub

BASE = 8453
T0 = 1_760_000_000
ERC20_ABI = functions.json_abi("erc20")


@dataclass
class Book:
    """An embedded service with its credit settings and a web3 on the credit chain."""

    svc: Harness
    w3: Web3
    settings: CreditSettings

    def web3(self, chain: int) -> Web3:
        """A web3 on ``chain`` of the same service (the credit chain's is ``w3``)."""
        if chain == BASE:
            return self.w3
        return Web3(chain_provider(self.svc.embedded, chain))

    def get(self, path: str, **params: Any) -> Any:
        """GET ``path``; returns (status, JSON body)."""
        response = self.svc.http.get(path, params=params)
        return response.status_code, response.json()

    def ok(self, path: str, **params: Any) -> Any:
        status, body = self.get(path, **params)
        assert status == 200, (path, params, status, body)
        return body

    def rpc(self, method: str, *params: Any, chain: int = BASE) -> Any:
        provider = self.web3(chain).provider
        answer = provider.make_request(method, list(params))  # type: ignore[arg-type]
        assert "error" not in answer, answer
        return answer["result"]

    def send(self, sender: str, call: dict[str, Any]) -> Any:
        """Send one call from ``sender`` (impersonated, funded for gas) without mining it, on
        the call's chain."""
        chain = int(call["chain"])
        w3 = self.web3(chain)
        self.rpc("anvil_impersonateAccount", sender, chain=chain)
        if w3.eth.get_balance(Web3.to_checksum_address(sender)) < 10**18:
            self.rpc("anvil_setBalance", sender, hex(10**20), chain=chain)
        tx = {
            "from": Web3.to_checksum_address(sender),
            "to": Web3.to_checksum_address(call["to"]),
            "data": call["data"],
            "value": int(call["value"]),
            "gas": 1_000_000,
        }
        return w3.eth.send_transaction(tx)  # type: ignore[arg-type]

    def execute(self, sender: str, calls: list[dict[str, Any]]) -> list[Any]:
        """Send each call from ``sender`` (impersonated), mine it, return the receipts."""
        receipts = []
        for call in calls:
            chain = int(call["chain"])
            tx_hash = self.send(sender, call)
            self.rpc("evm_mine", chain=chain)
            receipts.append(self.web3(chain).eth.get_transaction_receipt(tx_hash))
        return receipts

    def run(self, sender: str, calls: list[dict[str, Any]]) -> None:
        """Execute and require every call to succeed."""
        for receipt in self.execute(sender, calls):
            assert receipt["status"] == 1, receipt

    def deal(self, account: str, token: str, amount: int, chain: int = BASE) -> None:
        self.rpc("anvil_dealERC20", account, token, hex(amount), chain=chain)

    def balance(self, token: str, account: str, chain: int = BASE) -> int:
        w3 = self.web3(chain)
        contract = w3.eth.contract(address=Web3.to_checksum_address(token), abi=ERC20_ABI)
        value: int = contract.functions.balanceOf(Web3.to_checksum_address(account)).call()
        return value

    def reads(self, calls: list[tuple[str, str, tuple[Any, ...]]], chain: int = BASE) -> list[Any]:
        """``eth_call`` each ``(contract, function, args)`` at the latest block, all in one
        JSON-RPC batch request: the first value each returned, in order."""
        provider = self.web3(chain).provider
        batch = [
            ("eth_call", [{"to": to, "data": functions.encode_call(fn, *args)}, "latest"])
            for to, fn, args in calls
        ]
        answers = provider.make_batch_request(batch)  # type: ignore[attr-defined]
        assert isinstance(answers, list) and len(answers) == len(calls), answers
        assert all("error" not in a for a in answers), answers
        return [
            functions.decode_result(fn, a["result"])[0]
            for (_, fn, _), a in zip(calls, answers, strict=True)
        ]

    def info(self, account: str) -> dict[str, str]:
        body = self.ok(f"/credit/accounts/{account}/info")
        data: dict[str, str] = body["data"][self.settings.asset.upper()]
        return data

    def units(self, text: str) -> int:
        """A human-unit figure of ``/info`` back in smallest units (exact)."""
        value = Decimal(text).scaleb(self.settings.asset_decimals)
        assert value == value.to_integral_value(), text
        return int(value)

    def hub(self) -> CreditHub:
        ledger = self.svc.app.state.service.chains.ledger(BASE)  # type: ignore[attr-defined]
        hub = ledger.contract(self.settings.hub.lower())
        assert isinstance(hub, CreditHub)
        return hub

    def now(self) -> int:
        return int(self.svc.app.state.service.now())  # type: ignore[attr-defined]

    def advance(self, seconds: int) -> None:
        self.rpc("evm_increaseTime", seconds)


@contextmanager
def credit_book(scenario: Scenario | str = "default") -> Iterator[Book]:
    """An embedded service on ``scenario`` at T0 with web3 on its credit chain."""
    from toolkit.clock import VirtualClock

    loaded = load_scenario(scenario) if isinstance(scenario, str) else scenario
    assert loaded.credit is not None
    with embedded_service(loaded, clock=VirtualClock(T0)) as svc:
        w3 = Web3(chain_provider(svc.embedded, BASE))
        yield Book(svc, w3, loaded.credit)


def small_book(accounts: int) -> Scenario:
    """The default scenario with a seeded credit book of ``accounts`` accounts (1,200 by
    default): 0 for a test that reads no seeded account (building the book is most of the cost
    of an embedded service), a few dozen for one that reads the book but not its size."""
    scenario = load_scenario("default")
    assert scenario.credit is not None
    credit = dataclasses.replace(scenario.credit, book_accounts=accounts)
    return dataclasses.replace(scenario, credit=credit)


def account(i: int) -> str:
    """A fresh account address (not a development account)."""
    return "0x" + f"{0xC0DE0000 + i:040x}"
