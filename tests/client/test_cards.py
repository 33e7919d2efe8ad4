"""Card authorizations against the embedded service over loopback: the authorizer of
``toolkit.models.cards`` on :class:`ServiceCardBackend`, a real uvicorn server on 127.0.0.1 on the
wall clock (its Base chain makes a block every 2 s). Checked on chain: approved swipes moved the
receiver's balance by their amounts, a swipe that would break the 1.3 health rule drew nothing,
a retried authorization id drew once, and holdings that disagree with the ledger fail closed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import polars as pl
import pytest
from web3 import Web3

from toolkit.arguments import ArgumentError
from toolkit.client import RetryPolicy, ServiceClient, chain_web3
from toolkit.client.cards import ServiceCardBackend, run_cards
from toolkit.client.credit import CreditClient, execute_calls
from toolkit.codecs import functions
from toolkit.credit import figures
from toolkit.models.cards import Authorizer, Budget, Lognormal, draw_for
from toolkit.scenario import load_scenario
from toolkit.server import create_app, serve_in_thread

USDC = 10**6
ERC20 = functions.json_abi("erc20")
# Generous step budgets: the test checks outcomes, not timing, on a shared machine.
BUDGET = Budget(total=10.0, info=5.0, draw=5.0)


@dataclass
class Loopback:
    credit: CreditClient
    w3: Web3
    usdc: str

    def rpc(self, method: str, *params: Any) -> Any:
        answer = self.w3.provider.make_request(method, list(params))  # type: ignore[arg-type]
        assert "error" not in answer, answer
        return answer["result"]

    def lock(self, account: str, amount: int) -> None:
        """Fund ``account`` and lock ``amount`` USDC through the lock endpoint's calls."""
        self.rpc("anvil_impersonateAccount", account)
        self.rpc("anvil_setBalance", account, hex(10**20))
        self.rpc("anvil_dealERC20", account, self.usdc, hex(amount))
        calls = self.credit.lock(account, amount, self.usdc)
        execute_calls(self.w3, account, calls, after_send=lambda: self.rpc("evm_mine"))

    def balance(self, account: str) -> int:
        token = self.w3.eth.contract(address=Web3.to_checksum_address(self.usdc), abi=ERC20)
        value: int = token.functions.balanceOf(Web3.to_checksum_address(account)).call()
        return value

    def units(self, account: str, field: str) -> int:
        info = self.credit.info(account)["USDC"]
        return int(Decimal(str(getattr(info, field))).scaleb(6))


@pytest.fixture(scope="module")
def loopback() -> Iterator[Loopback]:
    scenario = load_scenario("default")
    assert scenario.credit is not None
    with (
        serve_in_thread(create_app(scenario)) as url,
        ServiceClient(url, retry=RetryPolicy(error_retries=0), env={}) as client,
    ):
        w3 = chain_web3(8453, url=f"{url}/rpc/8453")
        try:
            yield Loopback(CreditClient(client), w3, scenario.credit.asset_address)
        finally:
            w3.provider.close()  # type: ignore[attr-defined]  # its keep-alive connections


def _address(i: int) -> str:
    return "0x" + f"{0xCA4D0000 + i:040x}"


def test_swipes_draw_on_chain_within_the_health_rule_once_per_id(loopback: Loopback) -> None:
    user, shop = _address(1), _address(101)
    loopback.lock(user, 1_000 * USDC)
    backend = ServiceCardBackend(
        loopback.credit, loopback.w3, {user: {loopback.usdc: 1_000 * USDC}}
    )
    auth = Authorizer(
        backend,
        budget=BUDGET,
        pre=Lognormal(0.0, 0.0),
        receiver=lambda _: shop,
        rules=backend.rules,
    )
    first = auth.authorize("auth-1", user, 100 * USDC, at=0.0)
    assert (first.approved, first.reason) == (True, "approved")
    assert loopback.balance(shop) == 100 * USDC  # delivered exactly, the fee on top
    assert loopback.units(user, "principal") == draw_for(100 * USDC) == first.drawn

    # 700 more: 925 / (100.50 + 703.52) = 1.15 < 1.3, within capacity: declined by the rule.
    big = auth.authorize("auth-2", user, 700 * USDC, at=10.0)
    assert (big.approved, big.reason, big.drawn) == (False, "health", 0)
    assert big.health_factor is not None and big.health_factor < Fraction(13, 10)
    assert loopback.balance(shop) == 100 * USDC
    assert loopback.units(user, "principal") == first.drawn

    again = auth.authorize("auth-1", user, 100 * USDC, at=11.0)  # the network retries
    assert again.approved and again.replay and again.drawn == 0
    assert loopback.balance(shop) == 100 * USDC

    second = auth.authorize("auth-3", user, 50 * USDC, at=20.0)
    assert second.approved
    assert loopback.balance(shop) == 150 * USDC
    assert loopback.units(user, "principal") == first.drawn + second.drawn
    assert [r.account for r in backend.receipts] == [user, user]  # two draws, no more
    assert len({r.block for r in backend.receipts}) == 2
    # The health factor the authorizer computed for the draw is the ledger's afterwards.
    info = loopback.credit.info(user)["USDC"]
    assert second.health_factor is not None
    expected = figures({"usdc": 1_000 * USDC}, principal=first.drawn + second.drawn)
    assert second.health_factor == expected.health_factor
    shown = Decimal(str(info.health_factor))
    assert shown <= second.health_factor < shown + Decimal("0.0001")


def test_holdings_that_disagree_with_the_ledger_decline_and_draw_nothing(
    loopback: Loopback,
) -> None:
    user, shop = _address(2), _address(102)
    loopback.lock(user, 1_000 * USDC)
    stale = {user: {loopback.usdc: 400 * USDC}}  # the program missed a lock
    backend = ServiceCardBackend(loopback.credit, loopback.w3, stale)
    auth = Authorizer(backend, budget=BUDGET, receiver=lambda _: shop, rules=backend.rules)
    decision = auth.authorize("auth-9", user, 10 * USDC, at=0.0)
    assert (decision.approved, decision.reason, decision.drawn) == (False, "info_error", 0)
    unknown = auth.authorize("auth-10", _address(3), 10 * USDC, at=1.0)
    assert (unknown.approved, unknown.reason) == (False, "info_error")
    assert loopback.balance(shop) == 0 and backend.receipts == []
    assert loopback.units(user, "debt") == 0


def test_run_cards_answers_accounts_concurrently_at_their_arrival_times(
    loopback: Loopback,
) -> None:
    a, b = _address(5), _address(6)
    shops = {a: _address(105), b: _address(106)}
    loopback.lock(a, 1_000 * USDC)
    loopback.lock(b, 500 * USDC)
    held = {a: {loopback.usdc: 1_000 * USDC}, b: {loopback.usdc: 500 * USDC}}
    backend = ServiceCardBackend(loopback.credit, loopback.w3, held)
    swipes = pl.DataFrame(
        {
            "auth_id": ["a-1", "b-1", "a-1", "b-2"],
            "account": [a, b, a, b],
            "t": [0.0, 0.2, 0.5, 3.0],
            "amount": [100 * USDC, 50 * USDC, 100 * USDC, 350 * USDC],
        }
    )
    run = run_cards(swipes, backend, budget=BUDGET, receiver=shops.__getitem__)
    d = run.decisions
    assert d["auth_id"].to_list() == ["a-1", "b-1", "a-1", "b-2"]  # arrival order
    assert d["reason"].to_list() == ["approved", "approved", "approved", "health"]
    assert d["replay"].to_list() == [False, False, True, False]
    assert run.summary.draws == 2 and len(backend.receipts) == 2
    assert loopback.balance(shops[a]) == 100 * USDC and loopback.balance(shops[b]) == 50 * USDC
    assert loopback.units(b, "principal") == draw_for(50 * USDC)
    assert not backend.pace  # the run's pacing ends with it


def test_bad_arguments_name_the_field(loopback: Loopback) -> None:
    with pytest.raises(ArgumentError, match="poll"):
        ServiceCardBackend(loopback.credit, loopback.w3, {}, poll=0)
    token = _address(200)
    with pytest.raises(ArgumentError, match="holdings"):
        ServiceCardBackend(loopback.credit, loopback.w3, {_address(4): {token: 1}})
    backend = ServiceCardBackend(loopback.credit, loopback.w3, {})
    with pytest.raises(ArgumentError, match="swipes"):
        run_cards(pl.DataFrame({"auth_id": ["x"], "t": [0.0]}), backend)
    with pytest.raises(ArgumentError, match="workers"):
        run_cards(pl.DataFrame(schema=["auth_id", "account", "t", "amount"]), backend, workers=0)
