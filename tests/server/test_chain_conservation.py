"""Value is conserved through the simulated chains (issue 29): random multi-route flows of both
tokens on a served default scenario, opened on chain by users, filled, proven, finalised and
rebalanced by the service's transactions, interleaved with loans of the liquidity API (borrow
quote, authorization: the filler's transfer to the borrower on the pool's chain) and their
repayments (the borrower's transfer to the filler on the quote's ``repaymentChain``). Per token,
at every step, exactly:

    users and borrowers + the filler + the escrows + the bridges in flight + the bridges' fees
        ==  constant,

where what a bridge carries is what the bridges burnt on ``send`` less what they minted on
``deliver`` (fees included), read from the bridge contracts; and the engine's books equal the
chains' (``GET /sim/reconciliation`` is empty). Every figure is read over JSON-RPC, one batch
per chain.

The scenario is the default one at 0.2 % of its capital (a few thousand USDC and a few WETH per
pool, as the world's conservation test uses) and a 20 s attestation delay, so that a handful of
orders moves a chain out of its threshold band and the policy sends transfers. One served
instance runs every example, each from the same ``evm_snapshot`` (``evm_revert`` after it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import cast

import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from toolkit.backtest import apply_overrides
from toolkit.client import NoCapacity, NotFound, RetryPolicy
from toolkit.codecs import events
from toolkit.codecs.functions import encode_call
from toolkit.resources import BorrowQuote
from toolkit.scenario import Scenario, load_scenario
from toolkit.server.service import Service
from toolkit.testing import Harness, embedded_service
from toolkit.world.evm.accounts import dev_accounts
from toolkit.world.evm.bridge import BRIDGE, BRIDGE_FEES


def _scenario() -> Scenario:
    base = load_scenario("default")
    assert base.credit is not None  # no seeded credit book: a fast start, and not under test
    base = dataclasses.replace(base, credit=dataclasses.replace(base.credit, book_accounts=0))
    return apply_overrides(base, {"pool_scale": 0.002, "settlement_delay_s": 20})


SCENARIO = _scenario()
ROUTES = [(1, 8453, "USDC"), (10, 8453, "USDC"), (8453, 42161, "USDC"), (8453, 10, "WETH"),
          (1, 42161, "WETH"), (42161, 8453, "WETH")]  # fmt: skip
AMOUNTS = {"USDC": [500 * 10**6, 2_000 * 10**6, 4_000 * 10**6], "WETH": [10**17, 10**18]}
USERS = [1, 2, 3]  # development accounts (they also borrow)
#: Loan routes (source, pool's chain, token); repaid on the source when it is Ethereum or
#: Arbitrum, else on Arbitrum (the quote's ``repaymentChain``).
LOAN_ROUTES = [(10, 8453, "USDC"), (1, 42161, "USDC"), (8453, 10, "WETH"), (42161, 1, "WETH"),
               (1, 8453, "USDC")]  # fmt: skip
#: A borrower holding no tokens at all (impersonated): it cannot repay.
BROKE = "0x" + "b0" * 19 + "01"


def _holders(svc: Harness, chain: int) -> list[str]:
    accounts = dev_accounts(svc.scenario)
    users = [accounts[i].address for i in USERS]
    return [*users, BROKE, svc.scenario.filler, svc.scenario.chain(chain).escrow, BRIDGE_FEES]


def _totals(svc: Harness) -> dict[str, int]:
    """Per token symbol: the holders' balances plus what the bridges carry, every chain."""
    totals: dict[str, int] = {}
    for chain in svc.scenario.chains:
        calls: list[tuple[str, str, int]] = []  # (symbol, call data, sign)
        asked: list[str] = []
        for token in (t for t in svc.scenario.tokens if t.chain == chain.id):
            for holder in _holders(svc, chain.id):
                calls.append((token.symbol, encode_call("erc20.balanceOf", holder), 1))
                asked.append(token.address)
            calls.append((token.symbol, encode_call("bridge.sentTotal", token.address), 1))
            calls.append((token.symbol, encode_call("bridge.deliveredTotal", token.address), -1))
            asked += [BRIDGE, BRIDGE]
        batch = [
            {"jsonrpc": "2.0", "id": i, "method": "eth_call",
             "params": [{"to": to, "data": data}, "latest"]}
            for i, (to, (_, data, _)) in enumerate(zip(asked, calls, strict=True))
        ]  # fmt: skip
        answers = sorted(
            svc.http.post(f"/rpc/{chain.id}", json=batch).json(), key=lambda a: a["id"]
        )
        for (symbol, _, sign), answer in zip(calls, answers, strict=True):
            totals[symbol] = totals.get(symbol, 0) + sign * int(answer["result"], 16)
    return totals


@dataclasses.dataclass
class _Served:
    svc: Harness
    snapshot: str
    start: dict[str, int]


@pytest.fixture(scope="module")
def served() -> Iterator[_Served]:
    with embedded_service(SCENARIO, retry=RetryPolicy.no_retries()) as svc:
        yield _Served(svc, svc.rpc(1, "evm_snapshot"), _totals(svc))


def _usdc(svc: Harness, chain: int, holder: str) -> int:
    """``holder``'s USDC on ``chain``."""
    token = svc.scenario.token(chain, "USDC").address
    call = {"to": token, "data": encode_call("erc20.balanceOf", holder)}
    return int(svc.rpc(chain, "eth_call", call), 16)


def _check(svc: Harness, start: dict[str, int]) -> None:
    assert _totals(svc) == start
    assert svc.sim("GET", "reconciliation")["mismatches"] == []


def _order(svc: Harness, route: int, size: int, user: int) -> bool:
    src, dst, symbol = ROUTES[route]
    amounts = AMOUNTS[symbol]
    account = dev_accounts(svc.scenario)[USERS[user]].address
    try:
        quote = svc.client.rfq(
            src_chain=src, dst_chain=dst, amount=amounts[size % len(amounts)],
            token=svc.scenario.token(dst, symbol).address, user=account, type="ExactOutput",
        )  # fmt: skip
    except NoCapacity:
        return False
    svc.broadcast(svc.client.transaction(quote), account=USERS[user])
    return True


@dataclasses.dataclass(frozen=True)
class _Loan:
    quote_id: str
    quote: BorrowQuote
    borrower: str
    symbol: str


def _borrow(svc: Harness, route: int, size: int, borrower: str) -> _Loan | None:
    """A borrow quote on ``LOAN_ROUTES[route]`` and its authorization for ``borrower``; None
    when the service has no capacity for it."""
    src, dst, symbol = LOAN_ROUTES[route]
    amounts = AMOUNTS[symbol]
    try:
        quote = svc.client.borrow_quote(
            src_chain=src, dst_chain=dst, amount=amounts[size % len(amounts)],
            token=svc.scenario.token(dst, symbol).address,
        )  # fmt: skip
    except NotFound:  # the borrow quote's 404 is a capacity answer, as the RFQ's
        return None
    assert quote.id is not None
    svc.client.authorize(
        dst_chain=dst, caller=borrower, input="0x", quote_id=quote.id, tx_hash="0x" + "ab" * 32
    )
    return _Loan(quote.id, quote, borrower, symbol)


def _repay(svc: Harness, loan: _Loan, amount: int | None = None) -> bool:
    """The borrower's transfer of ``amount`` (default: the quote's ``requiredInput``) to the
    quote's ``repaymentRecipient`` on its ``repaymentChain``, mined; whether it succeeded."""
    chain = loan.quote.repayment_chain
    value = int(loan.quote.required_input) if amount is None else amount
    data = encode_call("erc20.transfer", loan.quote.repayment_recipient, value)
    token = svc.scenario.token(chain, loan.symbol).address
    sent = {"from": loan.borrower, "to": token, "data": data, "gas": hex(100_000)}
    tx = svc.rpc(chain, "eth_sendTransaction", sent)
    svc.mine(chain)
    return bool(svc.rpc(chain, "eth_getTransactionReceipt", tx)["status"] == "0x1")


#: Orders into Base of both tokens, then elsewhere (kind, route, size, user, seconds to the next).
HEAVY = [("order", 0, 2, 0, 12), ("order", 0, 2, 1, 12), ("order", 1, 2, 2, 30),
         ("order", 3, 1, 0, 12), ("order", 4, 1, 1, 2), ("order", 0, 2, 2, 120),
         ("order", 2, 2, 0, 30), ("order", 5, 1, 1, 12)]  # fmt: skip
#: Loans on every loan route interleaved with orders, repaid in and out of order.
LENDING = [("borrow", 0, 1, 0, 2), ("order", 0, 2, 1, 12), ("borrow", 2, 0, 1, 2),
           ("borrow", 1, 0, 2, 12), ("repay", 0, 0, 1, 30), ("borrow", 3, 1, 0, 2),
           ("repay", 0, 0, 0, 12), ("order", 3, 1, 2, 12)]  # fmt: skip
FLOWS = st.lists(
    st.tuples(
        st.sampled_from(["order", "order", "borrow", "repay"]),
        st.integers(0, len(ROUTES) - 1),  # taken modulo the loan routes for a loan
        st.integers(0, 2),  # size
        st.integers(0, len(USERS) - 1),
        st.sampled_from([2, 12, 30, 120]),  # seconds to the next step
    ),
    min_size=1,
    max_size=8,
)


def _step(svc: Harness, loans: list[_Loan], step: tuple[str, int, int, int, int]) -> None:
    """One flow step: an order, a loan to the user, or the user's oldest loan repaid."""
    kind, route, size, user, _ = step
    account = dev_accounts(svc.scenario)[USERS[user]].address
    if kind == "order":
        _order(svc, route, size, user)
    elif kind == "borrow":
        loan = _borrow(svc, route % len(LOAN_ROUTES), size, account)
        loans += [] if loan is None else [loan]
    else:
        owed = [loan for loan in loans if loan.borrower == account]
        if owed:
            assert _repay(svc, owed[0])
            loans.remove(owed[0])


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(flows=FLOWS)
@example(flows=HEAVY)  # drains Base of both tokens: the threshold policy sends three transfers
@example(flows=LENDING)
def test_value_is_conserved_through_the_chains(
    served: _Served, flows: list[tuple[str, int, int, int, int]]
) -> None:
    svc, start = served.svc, served.start
    service: Service = cast(FastAPI, svc.app).state.service
    loans: list[_Loan] = []
    try:
        for step in flows:
            _step(svc, loans, step)
            _check(svc, start)
            svc.advance(step[-1])
            _check(svc, start)
        taken = list(loans)
        for loan in taken:  # every loan still owed is repaid in full
            assert _repay(svc, loan)
            _check(svc, start)
        for _ in range(12):  # settlements, attestations and transfers land
            svc.advance(120)
            _check(svc, start)
        kinds = {s.kind for s in service.relay.steps}
        assert not kinds & {"fill_reverted", "transfer_failed", "loan_failed"}
        assert all(service.engine.outstanding(loan.quote_id) is None for loan in taken)
        assert svc.sim("GET", "loans")["loans"] == []  # every loan of the run was repaid
    finally:
        assert svc.rpc(1, "evm_revert", served.snapshot) is True
        served.snapshot = svc.rpc(1, "evm_snapshot")  # a revert drops the snapshot it used


def _filler_moves(svc: Harness, chain: int) -> list[tuple[str, int]]:
    """The filler's USDC moves on ``chain`` in chain order: ("minted", amount) for a bridge's
    delivery, ("paid", amount) for a fill or a send, ("received", amount) otherwise."""
    token = svc.scenario.token(chain, "USDC").address
    filler = "0x" + "00" * 12 + svc.scenario.filler[2:].lower()
    topic = events.EVENTS["erc20.Transfer"].topic0
    logs = [
        *svc.rpc(chain, "eth_getLogs", {"fromBlock": "0x0", "address": token,
                                        "topics": [topic, filler]}),
        *svc.rpc(chain, "eth_getLogs", {"fromBlock": "0x0", "address": token,
                                        "topics": [topic, None, filler]}),
    ]  # fmt: skip
    logs.sort(key=lambda entry: (int(entry["blockNumber"], 16), int(entry["logIndex"], 16)))
    moves = []
    for entry in logs:
        amount = int(entry["data"], 16)
        if entry["topics"][1] == filler:
            moves.append(("paid", amount))
        elif int(entry["topics"][1], 16) == 0:
            moves.append(("minted", amount))
        else:
            moves.append(("received", amount))
    return moves


def test_fills_paid_by_a_transfer_come_after_its_delivery_on_chain(served: _Served) -> None:
    # 4,000 USDC orders from Optimism onto Base, one every 6 s for three minutes: Base's pools
    # (13,000 USDC here) run dry unless the threshold policy's transfers refill them
    svc = served.svc
    service: Service = cast(FastAPI, svc.app).state.service
    start = _usdc(svc, 8453, svc.scenario.filler)
    try:
        for n in range(30):
            _order(svc, 1, 2, n % 3)
            svc.advance(6)
        for _ in range(6):
            svc.advance(30)
        _check(svc, served.start)
        kinds = [s.kind for s in service.relay.steps]
        assert "fill_reverted" not in kinds and kinds.count("transfer_delivered") >= 1
        # Walk the filler's Base USDC in chain order: a fill whose output exceeds what the
        # filler held from anything but deliveries was paid by a delivery mined before it.
        held, minted, paid_by_transfers = start, 0, 0
        for kind, amount in _filler_moves(svc, 8453):
            if kind == "paid":
                assert held >= amount  # the tokens were on chain before the fill
                paid_by_transfers += held - minted < amount
                held -= amount
            else:
                held += amount
                minted += amount if kind == "minted" else 0
        assert paid_by_transfers >= 1
    finally:
        assert svc.rpc(1, "evm_revert", served.snapshot) is True
        served.snapshot = svc.rpc(1, "evm_snapshot")


def _holding(service: Service, chain: int, symbol: str) -> tuple[int, int]:
    """The engine's ``(outstanding, receivable_in)`` of ``symbol`` on ``chain``."""
    (held,) = [h for h in service.engine.inventory(service.now()) if h.chain == chain
               and h.symbol == symbol]  # fmt: skip
    return held.outstanding, held.receivable_in


def test_loans_interleaved_with_orders_reconcile_at_every_block(served: _Served) -> None:
    # One-way flow into Base for two minutes: every 4 s a 500 USDC order from Ethereum or
    # Optimism and a 500 USDC loan on Base quoted from Optimism (repaid on Arbitrum) or from
    # Ethereum (repaid on Ethereum), each loan repaid by its borrower a minute after; one loan
    # repaid in two halves; one lent to a borrower holding no USDC on Arbitrum, whose
    # repayment reverts.
    svc, start = served.svc, served.start
    service: Service = cast(FastAPI, svc.app).state.service
    accounts = [dev_accounts(svc.scenario)[i].address for i in USERS]
    svc.rpc(42161, "anvil_impersonateAccount", BROKE)
    svc.rpc(42161, "anvil_setBalance", BROKE, hex(10**18))  # gas only, no token
    lent: list[tuple[int, _Loan]] = []
    try:
        for n in range(30):
            _order(svc, n % 2, 0, n % 3)
            borrower = BROKE if n == 4 else accounts[(n + 1) % 3]
            loan = _borrow(svc, (0, 4)[n % 2], 0, borrower)
            lent += [] if loan is None else [(n, loan)]
            for _ in range(2):  # Base's block time: a check after every block
                svc.advance(2)
                _check(svc, start)
            for m, due in [(m, d) for m, d in lent if m == n - 15 and d.borrower != BROKE]:
                if m == 3:  # a part payment settles nothing; the rest settles the loan
                    half = int(due.quote.required_input) // 2
                    assert _repay(svc, due, half)
                    _check(svc, start)
                    assert service.engine.outstanding(due.quote_id) is not None
                    assert _repay(svc, due, int(due.quote.required_input) - half)
                else:
                    assert _repay(svc, due)
                _check(svc, start)
                assert service.engine.outstanding(due.quote_id) is None
        for m, due in lent:
            if m >= 15 and due.borrower != BROKE:
                assert _repay(svc, due)
                _check(svc, start)
        (broke,) = [loan for _, loan in lent if loan.borrower == BROKE]
        assert not _repay(svc, broke)  # no USDC on Arbitrum: the transfer reverts
        for _ in range(8):
            svc.advance(120)
            _check(svc, start)
        kinds = [s.kind for s in service.relay.steps]
        assert len(lent) >= 20 and kinds.count("lent") == len(lent)
        assert kinds.count("repaid") == len(lent) - 1
        assert not {"loan_failed", "fill_reverted", "transfer_failed"} & set(kinds)
        # the broke borrower holds what it was lent; the engine still counts it outstanding on
        # Base and owed on Arbitrum, and nothing else
        assert _usdc(svc, 8453, BROKE) == int(broke.quote.required_output)
        owed = service.engine.outstanding(broke.quote_id)
        assert owed is not None and owed[1] == int(broke.quote.required_output)
        assert _holding(service, 8453, "USDC")[0] == int(broke.quote.required_output)
        assert _holding(service, 42161, "USDC")[1] == int(broke.quote.required_input)
        (listed,) = svc.sim("GET", "loans")["loans"]  # the one loan not repaid
        assert (listed["quoteId"], listed["transfer"]) == (broke.quote_id, "mined")
    finally:
        assert svc.rpc(1, "evm_revert", served.snapshot) is True
        served.snapshot = svc.rpc(1, "evm_snapshot")
