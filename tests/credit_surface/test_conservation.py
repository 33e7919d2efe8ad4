"""Hypothesis: no sequence of endpoint calls, executed on chain, creates collateral or debt out
of nothing, and no credit endpoint answers 500.

Three accounts lock, unlock, draw, repay (each other's debts too) and let time pass while the
BTC vault's price falls from 60,000 to 20,000 USD over 120 days, and a liquidator liquidates
whoever it likes, in any order and with any amounts (most refused by the endpoints or reverted
by the contracts). After every step:

- every collateral token's supply is unchanged, and the escrow holds exactly what the hub's
  books say is locked; the accounts' wallets and locked amounts, with what the liquidator
  seized, are what was dealt;
- the hub's principal is exactly what was drawn minus the principal repaid or written off
  (``CreditDrawn``, ``Repaid`` and ``BadDebt`` events), and the credit asset the hub holds is
  its liquidity minus what it delivered plus what it was repaid (so the fee is the only
  difference between debt and cash);
- no account's debt exceeds its credit capacity right after a draw.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from tests.credit_surface.book import T0, Book, account, credit_book
from toolkit.codecs import events
from toolkit.codecs.functions import encode_call
from toolkit.scenario import Scenario, load_scenario

USDC = 10**6
BTC = 10**8
USERS = [account(80 + i) for i in range(3)]
DEALT = {"usdc": 20_000 * USDC, "yobtc": BTC}


LIQUIDATOR = account(88)


def _falling_btc() -> Scenario:
    scenario = load_scenario("default")
    credit = scenario.credit
    assert credit is not None
    path = ((T0, Decimal(60_000)), (T0 + 120 * 86_400, Decimal(20_000)))
    collateral = tuple(
        dataclasses.replace(c, prices=path) if c.key == "yobtc" else c for c in credit.collateral
    )
    return dataclasses.replace(scenario, credit=dataclasses.replace(credit, collateral=collateral))


@pytest.fixture(scope="module")
def book() -> Iterator[Book]:
    with credit_book(_falling_btc()) as opened:
        tokens = _tokens(opened)
        for user in USERS:
            for key, amount in DEALT.items():
                opened.deal(user, tokens[key], amount)
        # Fund the hub once (its first draw places its liquidity) with a separate account.
        funder = account(89)
        opened.deal(funder, tokens["usdc"], 10 * USDC)
        v2 = f"/credit/v2/accounts/{funder}/assets/usdc"
        opened.run(
            funder,
            opened.ok(f"{v2}/lock", amount=str(10 * USDC), earnAsset=tokens["usdc"])["calls"],
        )
        opened.run(funder, opened.ok(f"{v2}/draw", amount=str(USDC), receiver=funder)["calls"])
        opened.deal(LIQUIDATOR, tokens["usdc"], 10**9 * USDC)
        approve = encode_call("erc20.approve", opened.settings.hub, 2**256 - 1)
        opened.run(
            LIQUIDATOR, [{"chain": "8453", "to": tokens["usdc"], "data": approve, "value": "0"}]
        )
        yield opened


def _tokens(book: Book) -> dict[str, str]:
    out = {}
    for key in DEALT:
        c = book.settings.collateral_by_symbol(key)
        assert c is not None
        out[key] = c.address
    return out


user_index = st.integers(0, len(USERS) - 1)
typical = st.sampled_from(
    [100 * USDC, 1_000 * USDC, 5_000 * USDC, 20_000 * USDC, 30_000 * USDC, BTC // 2, BTC]
)
amounts = st.one_of(typical, typical, typical, st.integers(1, 10**12))
steps = st.one_of(
    st.tuples(st.just("lock"), user_index, st.sampled_from(sorted(DEALT)), amounts),
    st.tuples(st.just("unlock"), user_index, st.sampled_from(sorted(DEALT)), amounts),
    st.tuples(st.just("draw"), user_index, user_index, amounts),
    st.tuples(st.just("repay"), user_index, user_index, amounts),
    st.tuples(st.just("wait"), st.integers(1, 120 * 86_400), st.just(""), st.just(0)),
    st.tuples(st.just("liquidate"), user_index, st.just(""), st.just(0)),
)


class Tally:
    """What the events say: principal drawn and repaid, cash delivered and received."""

    def __init__(self) -> None:
        self.principal = 0
        self.delivered = 0
        self.received = 0

    def add(self, receipts: list[Any]) -> None:
        for receipt in receipts:
            for log in receipt["logs"]:
                decoded = events.decode_log(
                    [t.to_0x_hex() for t in log["topics"]], bytes(log["data"])
                )
                if decoded.event == "creditHub.CreditDrawn":
                    self.principal += decoded.args["amount"]
                    self.delivered += decoded.args["amount"] - decoded.args["fee"]
                elif decoded.event == "creditHub.Repaid":
                    self.principal -= decoded.args["principal"]
                    self.received += decoded.args["principal"] + decoded.args["interest"]
                elif decoded.event == "creditHub.BadDebt":
                    self.principal -= decoded.args["principal"]


def _step(book: Book, tokens: dict[str, str], step: tuple[Any, ...], tally: Tally) -> None:
    kind, a, b, amount = step
    if kind == "wait":
        book.advance(a)
        return
    user = USERS[a]
    if kind == "liquidate":
        data = encode_call("creditHub.liquidate", user, 10**9 * USDC)
        call = {"chain": "8453", "to": book.settings.hub, "data": data, "value": "0"}
        receipts = book.execute(LIQUIDATOR, [call])
        tally.add(receipts)
        if receipts[0]["status"] == 1:
            event("a liquidation ran")
            f = book.hub().figures(user.lower(), book.now())
            assert f.health_factor is None or f.health_factor >= 1
        return
    v2 = f"/credit/v2/accounts/{user}/assets/usdc"
    if kind == "lock":
        status, body = book.get(f"{v2}/lock", amount=str(amount), earnAsset=tokens[b])
        sender = user
    elif kind == "unlock":
        status, body = book.get(f"{v2}/unlock", amount=str(amount), collateral=tokens[b])
        sender = user
    elif kind == "draw":
        status, body = book.get(f"{v2}/draw", amount=str(amount), receiver=USERS[b])
        sender = user
    else:  # another account (or the same) repays this account's debt
        status, body = book.get(f"{v2}/repay", amount=str(amount))
        sender = USERS[b]
    assert status in (200, 400, 404, 409), (step, status, body)
    if status == 200:
        receipts = book.execute(sender, body["calls"])
        tally.add(receipts)
        if receipts[-1]["status"] == 1:
            event(f"a {kind} ran")
        if kind == "draw" and receipts[-1]["status"] == 1:
            f = book.hub().figures(user.lower(), book.now())
            assert f.debt <= f.total_credit_capacity


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@example(  # a BTC-backed debt, the price falls, the liquidator steps in, a partial repay
    locks=[("lock", 0, "yobtc", BTC), ("lock", 1, "usdc", 5_000 * USDC)],
    draws=[("draw", 0, 2, 30_000 * USDC), ("draw", 1, 1, 1_000 * USDC)],
    rest=[
        ("wait", 60 * 86_400, "", 0),
        ("liquidate", 0, "", 0),
        ("repay", 0, 1, 1_000 * USDC),
        ("wait", 60 * 86_400, "", 0),
        ("liquidate", 0, "", 0),
        ("unlock", 0, "yobtc", BTC // 2),
    ],
)
@given(
    st.lists(
        st.tuples(st.just("lock"), user_index, st.sampled_from(sorted(DEALT)), typical),
        min_size=1,
        max_size=3,
    ),
    st.lists(st.tuples(st.just("draw"), user_index, user_index, typical), min_size=1, max_size=3),
    st.lists(steps, min_size=1, max_size=12),
)
def test_nothing_is_created_from_nothing(
    book: Book,
    locks: list[tuple[Any, ...]],
    draws: list[tuple[Any, ...]],
    rest: list[tuple[Any, ...]],
) -> None:
    sequence = locks + draws + rest
    tokens = _tokens(book)
    snapshot = book.rpc("evm_snapshot")
    try:
        start = _chain_figures(book, tokens)
        supply = {t: start[t, "supply"] for t in tokens.values()}
        principal0 = sum(book.hub().principal.values())
        cash0 = start[tokens["usdc"], book.settings.hub]
        tally = Tally()
        for step in sequence:
            _step(book, tokens, step, tally)
            hub = book.hub()
            chain = _chain_figures(book, tokens)  # what the token contracts say, read on chain
            for key, token in tokens.items():
                assert chain[token, "supply"] == supply[token]
                locked = {u: hub.collateral.get((u.lower(), token.lower()), 0) for u in USERS}
                assert chain[token, book.settings.escrow] == sum(
                    a for (u, t), a in hub.collateral.items() if t == token.lower()
                )
                if key == "yobtc":
                    held = sum(chain[token, u] + locked[u] for u in USERS)
                    assert held + chain[token, LIQUIDATOR] == len(USERS) * DEALT[key]
            assert sum(hub.principal.values()) == principal0 + tally.principal
            cash = chain[tokens["usdc"], book.settings.hub]
            assert cash == cash0 - tally.delivered + tally.received
    finally:
        assert book.rpc("evm_revert", snapshot) is True


def _chain_figures(book: Book, tokens: dict[str, str]) -> dict[tuple[str, str], int]:
    """Each token's total supply and the balances the checks compare, keyed ``(token, holder)``
    (``(token, "supply")`` for the supply), from one batch of ``eth_call``s (a request per
    figure made the test about four times slower)."""
    keys: list[tuple[str, str]] = []
    for key, token in tokens.items():
        keys += [(token, "supply"), (token, book.settings.escrow)]
        if key == "yobtc":
            keys += [(token, holder) for holder in [*USERS, LIQUIDATOR]]
    keys.append((tokens["usdc"], book.settings.hub))
    calls = [
        (t, "erc20.totalSupply", ()) if h == "supply" else (t, "erc20.balanceOf", (h,))
        for t, h in keys
    ]
    return dict(zip(keys, book.reads(calls), strict=True))
