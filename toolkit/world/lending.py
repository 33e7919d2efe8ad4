"""The liquidity API's loans as transactions on the simulated chains.

The engine books a loan when the signing authorization consumes its borrow quote
(:meth:`toolkit.engine.Engine.authorize`: the pool's chain spends the amount) and its repayment
when :meth:`toolkit.engine.Engine.settle` is called with the quote id (the quote's
``repaymentChain`` is credited with ``requiredInput``). :class:`LoanMirror` makes the chains say
the same, each leg at the moment the engine books it:

- **out**: the authorized loan is the filler's ``transfer(borrower, amount)`` of the borrowed
  token on the pool's chain, the borrower being the ``caller`` the authorization names
  (:meth:`LoanMirror.lend`, called by the signature endpoint right after the engine's
  ``authorize``): ``loan_sent``, then ``lent`` once mined. While a rebalancing delivery the
  engine already counted waits for its out transaction on that chain and token, the transfer
  waits too (as fills do: :meth:`toolkit.world.bridging.TransferMirror.held`), so it never
  spends tokens the chain has not minted yet. A reverted out transaction (the filler lacked the
  tokens: the books disagreed) is ``loan_failed`` and shows in reconciliation.
- **repayment**: the quote names ``repaymentRecipient`` (the filler) and ``repaymentChain``;
  the vendor's pools are repaid by a plain token transfer. So a repayment is the borrower's own
  ``Transfer`` of the loan's token to the filler on the repayment chain, read from the chain's
  logs by the relay (:meth:`LoanMirror.observe`). What a borrower sent adds to its credit on
  that (chain, token); each loan of that borrower owed there, oldest first, is settled in the
  engine (``engine.settle(quote_id)``: ``repaid``) once the credit covers the whole
  ``requiredInput``; a part payment waits as credit for the rest. Only the borrower's transfers
  on the repayment chain count: that is the rule the quote states.

A borrower that lacks the tokens on the repayment chain cannot send the transfer (the token
reverts it), so nothing is read and the loan stays outstanding in the engine, its amount held
out of the pool's capacity: the books and the chains agree that the tokens are with the
borrower. No default is declared: the interface gives a loan no term (the quote and the
authorization carry none; the authorization's ``deadline`` bounds the borrow, not the
repayment) and no collateral to seize, so a write-off would only relabel the loss (the pool's
available liquidity is the same either way) with a rule of our own. An analyst sees the loan
outstanding (``GET /sim/loans``, ``Engine.outstanding(quote_id)``, the pool's
``outstanding``).

:meth:`LoanMirror.unmined` is what reconciliation accounts for: the loans the engine booked
whose transfer is not mined yet (the engine already spent them) and the borrowers' credit the
filler received that pays no whole loan yet (the engine has not booked it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from toolkit.codecs.events import EVENTS
from toolkit.codecs.functions import encode_call
from toolkit.engine import Engine, EngineError, Loan
from toolkit.world.evm import Chains, Log, Receipt
from toolkit.world.sender import Step, send

__all__ = ["LoanMirror", "OutstandingLoan"]

log = logging.getLogger(__name__)

_TRANSFER: Final = EVENTS["erc20.Transfer"].topic0
#: The gas limit of a loan's transfer (above what an ERC-20 transfer uses).
LOAN_GAS: Final = 100_000
_LABEL: Final = b"toolkit filler tx"
QUEUED, PENDING, MINED, FAILED = "queued", "pending", "mined", "failed"


def _topic(address: str) -> str:
    return "0x" + "00" * 12 + address[2:].lower()


class OutstandingLoan(NamedTuple):
    """A loan not repaid: ``amount`` of ``symbol`` lent on ``chain`` to ``borrower``, ``owed``
    (the quote's ``requiredInput``) on ``repayment_chain``; ``transfer`` is the state of the
    filler's transfer to the borrower (``queued``, ``pending``, ``mined``, ``failed``) and
    ``credit`` what the borrower paid on the repayment chain that settles no whole loan yet."""

    quote_id: str
    borrower: str
    chain: int
    symbol: str
    amount: int
    repayment_chain: int
    owed: int
    transfer: str
    credit: int


@dataclass
class _Loan:
    """One loan as the chains carry it: the engine's loan, its borrower and repayment chain,
    and its out transaction."""

    loan: Loan
    borrower: str
    repayment_chain: int
    out_tx: str = ""
    state: str = QUEUED
    #: Repaid (settled in the engine) before its own transfer was mined: kept until it is.
    repaid: bool = False


@dataclass
class LoanMirror:
    """Mirrors the engine's loans and their repayments on ``chains`` (see the module docstring).

    >>> from toolkit.scenario import load_scenario
    >>> from toolkit.world.evm import Chains
    >>> mirror = LoanMirror(Chains(load_scenario("single-pool"), genesis=0.0))
    >>> mirror.unmined(), mirror.outstanding()
    ({}, [])
    """

    chains: Chains
    #: Loans not repaid yet (or whose transfer is not mined yet), by quote id, in the order
    #: they were authorized.
    loans: dict[str, _Loan] = field(default_factory=dict)
    #: What each (borrower, repayment chain, symbol) paid that settles no whole loan yet.
    credit: dict[tuple[str, int, str], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        scenario = self.chains.scenario
        self.filler = scenario.filler.lower()
        self._to_filler = _topic(self.filler)
        self._tokens = {(t.chain, t.address.lower()): t.symbol for t in scenario.tokens}

    def save(self) -> Any:
        """The loans under way and the credits (copied by the relay's snapshot)."""
        return (self.loans, self.credit)

    def restore(self, state: Any) -> None:
        """Go back to a :meth:`save`."""
        self.loans, self.credit = state

    def check_borrower(self, borrower: str) -> None:
        """Refuse a borrower the chains cannot lend to: the filler itself (a transfer to itself
        moves nothing) and the zero address (tokens refuse it). ValueError names the rule."""
        if borrower.lower() == self.filler:
            raise ValueError("must not be the service's own filler address")
        if int(borrower, 16) == 0:
            raise ValueError("must not be the zero address")

    # -- out ------------------------------------------------------------------------------------

    def lend(self, loan: Loan, borrower: str, repayment_chain: int, now: float,
             held: set[tuple[int, str]]) -> list[Step]:  # fmt: skip
        """Take the engine's ``loan`` to ``borrower``, repaid on ``repayment_chain``: its
        transfer is sent now unless ``held`` names its (chain, token) (then at a later
        :meth:`run`)."""
        self.check_borrower(borrower)
        self.loans[loan.quote_id] = _Loan(loan, borrower.lower(), repayment_chain)
        return self.run(now, held)

    def run(self, now: float, held: set[tuple[int, str]]) -> list[Step]:
        """Read the out transactions' receipts, and send the transfers queued whose (chain,
        token) no delivery holds."""
        done: list[Step] = []
        for quote_id, entry in list(self.loans.items()):
            loan = entry.loan
            if entry.state == PENDING:
                done += self._out_mined(entry, now)
                if entry.repaid and entry.state != PENDING:
                    del self.loans[quote_id]
            elif entry.state == QUEUED and (loan.dst_chain, loan.symbol) not in held:
                data = encode_call("erc20.transfer", entry.borrower, loan.amount)
                ledger = self.chains.ledger(loan.dst_chain)
                entry.out_tx = send(ledger, self.filler, loan.token, data, now, gas=LOAN_GAS,
                                    label=_LABEL)  # fmt: skip
                entry.state = PENDING
                log.info("loan %s: %s %s sent to %s on chain %s (tx %s)", loan.quote_id,
                         loan.amount, loan.symbol, entry.borrower, loan.dst_chain,
                         entry.out_tx)  # fmt: skip
                done.append(Step("loan_sent", loan.quote_id, loan.dst_chain, entry.out_tx))
        return done

    def _out_mined(self, entry: _Loan, now: float) -> list[Step]:
        loan = entry.loan
        found = self.chains.ledger(loan.dst_chain).transaction(entry.out_tx, now)
        if found is not None and found[1] is None:
            return []  # still in the pool
        receipt: Receipt | None = None if found is None else found[1]
        if receipt is not None and receipt.status == 1:
            entry.state = MINED
            return [Step("lent", loan.quote_id, loan.dst_chain, entry.out_tx)]
        entry.state = FAILED
        log.error("loan %s: its transfer reverted on chain %s (tx %s); the books disagree",
                  loan.quote_id, loan.dst_chain, entry.out_tx)  # fmt: skip
        return [Step("loan_failed", loan.quote_id, loan.dst_chain, entry.out_tx)]

    # -- repayment ------------------------------------------------------------------------------

    def watches(self, chain_id: int, entry: Log) -> bool:
        """Whether ``entry`` is a scenario token's ``Transfer`` to the filler on ``chain_id``
        from a borrower that owes a loan there in that token."""
        topics = entry.topics
        if len(topics) != 3 or topics[0] != _TRANSFER or topics[2] != self._to_filler:
            return False
        symbol = self._tokens.get((chain_id, entry.address))
        if symbol is None:
            return False
        sender = "0x" + topics[1][-40:]
        return any(
            e.borrower == sender and e.repayment_chain == chain_id and e.loan.symbol == symbol
            for e in self.loans.values()
            if not e.repaid
        )

    def observe(self, engine: Engine, chain_id: int, entry: Log, now: float) -> list[Step]:
        """A borrower's repayment transfer (one :meth:`watches` accepted): add it to the
        borrower's credit and settle in the engine the loans it covers, oldest first."""
        symbol = self._tokens[(chain_id, entry.address)]
        borrower = "0x" + entry.topics[1][-40:]
        key = (borrower, chain_id, symbol)
        credit = self.credit.get(key, 0) + int(entry.data, 16)
        done: list[Step] = []
        for quote_id, loan in list(self.loans.items()):
            owed = loan.loan.input_amount
            if loan.repaid or (loan.borrower, loan.repayment_chain, loan.loan.symbol) != key:
                continue
            if owed > credit:
                break  # oldest first: a later loan waits for this one
            try:
                engine.settle(quote_id, now)
            except EngineError as exc:  # pragma: no cover - every loan here is outstanding
                log.error("loan %s: repaid on chain but not settled: %s", quote_id, exc)
                continue
            credit -= owed
            loan.repaid = True
            if loan.state in (MINED, FAILED):
                del self.loans[quote_id]
            log.info("loan %s repaid on chain %s (tx %s)", quote_id, chain_id, entry.tx_hash)
            done.append(Step("repaid", quote_id, chain_id, entry.tx_hash))
        if credit:
            self.credit[key] = credit
        else:
            self.credit.pop(key, None)
        return done

    # -- reading --------------------------------------------------------------------------------

    def outstanding(self) -> list[OutstandingLoan]:
        """Every loan not repaid, oldest first."""
        out = []
        for quote_id, e in self.loans.items():
            if e.repaid:
                continue
            loan = e.loan
            credit = self.credit.get((e.borrower, e.repayment_chain, loan.symbol), 0)
            fields = (loan.dst_chain, loan.symbol, loan.amount, e.repayment_chain)
            owed = (loan.input_amount, e.state, credit)
            out.append(OutstandingLoan(quote_id, e.borrower, *fields, *owed))
        return out

    def unmined(self) -> dict[tuple[int, str], int]:
        """By (chain, token symbol): the amounts of loans booked whose transfer is not mined,
        plus the borrowers' credit received and not booked (see the module docstring)."""
        out: dict[tuple[int, str], int] = {}
        for entry in self.loans.values():
            if entry.state in (QUEUED, PENDING):
                key = (entry.loan.dst_chain, entry.loan.symbol)
                out[key] = out.get(key, 0) + entry.loan.amount
        for (_, chain_id, symbol), amount in self.credit.items():
            out[(chain_id, symbol)] = out.get((chain_id, symbol), 0) + amount
        return out
