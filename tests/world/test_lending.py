"""Loans of the liquidity API on the simulated chains (:mod:`toolkit.world.lending`), driven
through the relay without a server: single-pool's Base pool lends, loans quoted from Ethereum
are repaid on Ethereum (the quote's ``repayment_chain``)."""

from __future__ import annotations

import dataclasses

import pytest

from toolkit.backtest import apply_overrides
from toolkit.codecs.functions import encode_call
from toolkit.engine import EXACT_OUTPUT, Engine, Loan, ReservedQuote
from toolkit.scenario import Scenario, load_scenario
from toolkit.world import World
from toolkit.world.evm import ERC20, Chains
from toolkit.world.relay import Relay
from toolkit.world.sender import send

UNIT = 1_000 * 10**6  # 1,000 USDC


@pytest.fixture
def relay() -> Relay:
    scenario = load_scenario("single-pool")
    relay = Relay(World(scenario, Engine(scenario)), Chains(scenario, genesis=0.0, accounts=2))
    relay.fund(0.0)
    return relay


def _borrower(relay: Relay, n: int = 0) -> str:
    return relay.chains.accounts[n].address.lower()


def _lend(relay: Relay, amount: int, now: float, n: int = 0) -> tuple[ReservedQuote, Loan]:
    s: Scenario = relay.chains.scenario
    engine = relay.world.engine
    quote = engine.borrow_quote(1, 8453, s.token(8453, "USDC").address, amount, now)
    loan = engine.authorize(quote.quote_id, now)
    assert [step.kind for step in relay.lend(loan, _borrower(relay, n), 1, now)] == ["loan_sent"]
    return quote, loan


def _usdc(relay: Relay, chain: int, holder: str) -> int:
    token = relay.chains.ledger(chain).contract(
        relay.chains.scenario.token(chain, "USDC").address.lower()
    )
    assert isinstance(token, ERC20)
    return token.balances.get(holder, 0)


def _pay(relay: Relay, chain: int, amount: int, now: float, n: int = 0) -> None:
    """Borrower ``n`` transfers ``amount`` USDC to the filler on ``chain`` (pooled at ``now``)."""
    token = relay.chains.scenario.token(chain, "USDC").address
    data = encode_call("erc20.transfer", relay.filler.address, amount)
    send(relay.chains.ledger(chain), _borrower(relay, n), token, data, now, gas=100_000,
         label=b"test borrower")  # fmt: skip


def _kinds(relay: Relay) -> list[str]:
    return [step.kind for step in relay.steps]


def test_a_loan_reaches_its_borrower_and_its_repayment_settles_it(relay: Relay) -> None:
    engine, borrower = relay.world.engine, _borrower(relay)
    before = _usdc(relay, 8453, borrower)
    quote, loan = _lend(relay, UNIT, 1.0)
    assert relay.reconcile(1.0) == []  # the transfer is pooled: accounted for as unmined
    relay.sync(3.0)
    assert _kinds(relay) == ["loan_sent", "lent"]
    assert _usdc(relay, 8453, borrower) - before == loan.amount == quote.output_amount
    assert relay.reconcile(3.0) == []
    _pay(relay, 1, quote.input_amount, 4.0)
    assert relay.reconcile(4.0) == []  # pooled, not mined: nothing moved yet
    assert engine.outstanding(quote.quote_id) is not None
    relay.sync(12.0)  # Ethereum's next block
    assert _kinds(relay)[-1] == "repaid" and engine.outstanding(quote.quote_id) is None
    assert relay.reconcile(12.0) == []
    # policy none: the Base pool lent the amount for good, Ethereum holds the repayment
    holdings = {(h.chain, h.symbol): h for h in engine.inventory(12.0)}
    assert holdings[(8453, "USDC")].on_chain == 15_000 * 10**6 - loan.amount
    assert holdings[(1, "USDC")].on_chain == quote.input_amount


def test_repayments_settle_the_oldest_loan_first_and_keep_the_rest_as_credit(
    relay: Relay,
) -> None:
    engine = relay.world.engine
    big, _ = _lend(relay, 3 * UNIT, 1.0)
    small, _ = _lend(relay, UNIT, 1.0)
    _pay(relay, 1, small.input_amount, 2.0)  # enough for the small loan, not the older one
    relay.sync(12.0)
    assert engine.outstanding(big.quote_id) is not None
    assert engine.outstanding(small.quote_id) is not None
    assert relay.loans.credit == {(_borrower(relay), 1, "USDC"): small.input_amount}
    assert relay.reconcile(12.0) == []  # the credit is the filler's, not booked yet
    _pay(relay, 1, big.input_amount - 1, 13.0)
    relay.sync(24.0)
    assert engine.outstanding(big.quote_id) is None  # oldest first
    assert engine.outstanding(small.quote_id) is not None
    assert relay.reconcile(24.0) == []
    _pay(relay, 1, 1, 25.0)
    relay.sync(36.0)
    assert engine.outstanding(small.quote_id) is None and relay.loans.credit == {}
    assert _kinds(relay).count("repaid") == 2 and relay.reconcile(36.0) == []


def test_only_the_borrowers_transfers_on_the_repayment_chain_repay(relay: Relay) -> None:
    engine = relay.world.engine
    quote, _ = _lend(relay, UNIT, 1.0)
    _pay(relay, 1, quote.input_amount, 2.0, n=1)  # someone else pays the filler
    relay.sync(12.0)
    assert engine.outstanding(quote.quote_id) is not None
    # the filler holds tokens the engine never booked: reconciliation shows them
    (mismatch,) = relay.reconcile(12.0)
    assert (mismatch.chain, mismatch.balance - mismatch.engine) == (1, quote.input_amount)


def test_a_loan_waits_for_a_delivery_held_on_its_chain(relay: Relay) -> None:
    engine = relay.world.engine
    quote = engine.borrow_quote(1, 8453, relay.chains.scenario.token(8453, "USDC").address,
                                UNIT, 1.0)  # fmt: skip
    loan = engine.authorize(quote.quote_id, 1.0)
    held = {(8453, "USDC")}
    assert relay.loans.lend(loan, _borrower(relay), 1, 1.0, held) == []
    assert relay.loans.run(1.5, held) == []
    assert relay.loans.unmined() == {(8453, "USDC"): loan.amount}  # booked, not sent
    assert [s.kind for s in relay.loans.run(2.0, set())] == ["loan_sent"]
    assert relay.reconcile(2.0) == []


def test_a_loan_repaid_before_its_transfer_is_mined_is_still_sent(relay: Relay) -> None:
    engine = relay.world.engine
    quote = engine.borrow_quote(1, 8453, relay.chains.scenario.token(8453, "USDC").address,
                                UNIT, 1.0)  # fmt: skip
    loan = engine.authorize(quote.quote_id, 1.0)
    relay.loans.lend(loan, _borrower(relay), 1, 1.0, {(8453, "USDC")})  # held: queued
    _pay(relay, 1, quote.input_amount, 2.0)
    relay.sync(12.0)  # the repayment is read first, then the queued transfer is sent
    assert _kinds(relay) == ["repaid", "loan_sent"]
    assert engine.outstanding(quote.quote_id) is None and relay.loans.outstanding() == []
    assert relay.reconcile(12.0) == []  # the engine's loan, still unmined on Base
    relay.sync(14.0)
    assert _kinds(relay)[-1] == "lent" and relay.loans.loans == {}
    assert relay.reconcile(14.0) == []


def test_a_revert_forgets_the_loans_made_after_the_snapshot(relay: Relay) -> None:
    saved, world = relay.save(), relay.world
    _lend(relay, UNIT, 1.0)
    relay.restore(world, saved)
    assert relay.loans.outstanding() == [] and relay.loans.unmined() == {}


@pytest.mark.parametrize(
    ("caller", "rule"),
    [
        ("filler", "must not be the service's own filler address"),
        ("0x" + "00" * 20, "must not be the zero address"),
    ],
)
def test_the_filler_and_the_zero_address_cannot_borrow(
    relay: Relay, caller: str, rule: str
) -> None:
    address = relay.filler.address.upper().replace("0X", "0x") if caller == "filler" else caller
    with pytest.raises(ValueError, match=rule):
        relay.loans.check_borrower(address)


def test_a_loan_spending_a_landed_transfer_waits_for_its_delivery() -> None:
    # Under the threshold policy a transfer brings USDC to Base. Once it has landed in the
    # engine (no sync since), a loan of what it brought is sent after the bridge's delivery,
    # in the same block, and does not revert.
    base = load_scenario("default")
    assert base.credit is not None
    s = dataclasses.replace(base, credit=dataclasses.replace(base.credit, book_accounts=0))
    s = apply_overrides(s, {"pool_scale": 0.002})
    relay = Relay(World(s, Engine(s)), Chains(s, genesis=0.0, accounts=1))
    relay.fund(0.0)
    engine, usdc = relay.world.engine, s.token(8453, "USDC").address
    pools = [p.id for p in s.pools_for(8453, "USDC")]

    def lend_all(now: float) -> int:
        """Lend all Base's USDC; what it owes on Arbitrum."""
        owed = 0
        for pool in pools:
            free = engine.pool(pool, now).available
            if free:
                quote = engine.borrow_quote(10, 8453, usdc, free, now, kind=EXACT_OUTPUT,
                                            pool=engine.pool(pool, now).address)  # fmt: skip
                relay.lend(engine.authorize(quote.quote_id, now), _borrower(relay), 42161, now)
                owed += quote.input_amount
        return owed

    # Base lent out; once repaid on Arbitrum, Arbitrum holds more than its target and Base
    # nothing: the policy sends Arbitrum's excess to Base
    _pay(relay, 42161, lend_all(1.0), 2.0)
    relay.sync(10.0)
    assert _kinds(relay).count("repaid") == 2
    (transfer, *_) = [t for t in engine.transfers(10.0) if t.dst_chain == 8453]
    relay.sync(transfer.arrives_at - 1.0)  # the out leg is mined; nothing landed yet
    assert lend_all(transfer.arrives_at - 1.0) == 0
    assert lend_all(transfer.arrives_at + 1.0) > 0  # what landed, lent at once
    relay.sync(transfer.arrives_at + 30.0)
    kinds = _kinds(relay)
    assert "loan_failed" not in kinds and "transfer_delivered" in kinds
    assert relay.reconcile(transfer.arrives_at + 30.0) == []
