"""The credit hub, which keeps the books of its collateral escrow, and the book seeded at
genesis by transactions mined before the chain's start (:func:`seed_book`).

The escrow (:mod:`toolkit.world.evm.credit.escrow`) and the operator
(:mod:`toolkit.world.evm.credit.operator`) find their hub through :func:`hub_at`; the hub finds
them by what they do, as a :class:`Releasing` and a :class:`Whitelisting` contract, since
modules of a package may not import each other in a cycle.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any, ClassVar, Final, Protocol, runtime_checkable

from eth_utils import keccak

from toolkit.credit import AccountFigures, collateral_value, figures, liquidation
from toolkit.scenario import Scenario
from toolkit.scenario.credit import CreditCollateral, CreditSettings
from toolkit.world.evm.contracts import ZERO, Contract, Execution, Message, Revert
from toolkit.world.evm.credit.book import book_account, book_topup, seed_calldata
from toolkit.world.evm.credit.support import hubs_on, token_call
from toolkit.world.evm.tokens import ERC20

__all__ = ["CreditHub", "Releasing", "Whitelisting", "hub_at", "seed_book"]


class CreditHub(Contract):
    """The credit ledger of one credit asset (see :mod:`toolkit.world.evm.credit`)."""

    functions: ClassVar[Mapping[str, str]] = {
        "creditHub.drawCredit": "draw_credit",
        "creditHub.repay": "repay",
        "creditHub.setOperator": "set_operator",
        "creditHub.liquidate": "liquidate",
        "creditHub.collateralOf": "collateral_of",
    }

    def __init__(self, settings: CreditSettings) -> None:
        super().__init__(settings.hub)
        self.settings = settings
        self.asset = settings.asset_address.lower()
        self.collateral: dict[tuple[str, str], int] = {}
        #: The tokens each borrower has ever locked (an index of ``collateral``).
        self.tokens: dict[str, tuple[str, ...]] = {}
        self.principal: dict[str, int] = {}
        self.interest: dict[str, int] = {}
        self.checkpoint: dict[str, int] = {}
        self.due: dict[str, int] = {}
        self.operators: dict[str, str] = {}
        self.totals: dict[str, int] = {"fees": 0, "bad_debt": 0, "funded": 0}

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        return [cls(settings) for settings in hubs_on(scenario, chain_id)]

    def genesis(self, run: Execution) -> None:
        """Seed the scenario's book (``credit.book_accounts``; see :func:`book_account`)."""
        seed_book(self, run)

    # -- reads (pure functions of the state and a time) -----------------------------------------

    def holdings(self, borrower: str) -> dict[str, int]:
        """Collateral the borrower has locked: token address → amount (zero amounts left out)."""
        held = ((t, self.collateral.get((borrower, t), 0)) for t in self.tokens.get(borrower, ()))
        return {t: a for t, a in held if a}

    def collateral_of(self, msg: Message, borrower: str, token: str) -> tuple[Any, ...]:
        """The view ``collateralOf(borrower, token)``: the amount of ``token`` (smallest units)
        booked as the borrower's collateral, 0 for a token it never locked."""
        return (self.collateral.get((borrower, token), 0),)

    def lock(self, run: Execution, borrower: str, token: str, amount: int) -> None:
        """Book ``amount`` more of ``token`` as the borrower's collateral."""
        key = (borrower, token)
        run.write(self.collateral, key, self.collateral.get(key, 0) + amount)
        known = self.tokens.get(borrower, ())
        if token not in known:
            run.write(self.tokens, borrower, (*known, token))

    def unlock_remote(self, run: Execution, borrower: str, token: str, amount: int) -> bool:
        """Book ``amount`` of remote collateral off (a confirmed withdrawal request) unless the
        borrower has less booked or it would leave the position liquidatable; whether it did."""
        key = (borrower, token)
        held = self.collateral.get(key, 0)
        if held < amount:
            return False
        self.settle(run, borrower)
        after = self.holdings(borrower)
        after[token] = held - amount
        if self.figures(borrower, run.timestamp, after).liquidatable:
            return False
        run.write(self.collateral, key, held - amount)
        return True

    def values(
        self, borrower: str, now: int, holdings: Mapping[str, int] | None = None
    ) -> dict[str, int]:
        """Collateral values in credit-asset units by rule key at ``now``."""
        held = self.holdings(borrower) if holdings is None else holdings
        out: dict[str, int] = {}
        for token, amount in held.items():
            c = self._collateral(token)
            out[c.key] = out.get(c.key, 0) + collateral_value(amount, self.unit_price(c, now))
        return out

    def unit_price(self, c: CreditCollateral, now: int) -> Any:
        """Credit-asset units per collateral unit at ``now`` (a Fraction)."""
        return self.settings.unit_price(c, now)

    def accrued(self, borrower: str, now: int) -> int:
        """Interest owed at ``now``: settled interest plus what accrued since the checkpoint."""
        due = self.due.get(borrower)
        since = None if due is None else max(due, self.checkpoint.get(borrower, 0))
        fresh = self.settings.rules.interest(
            self.principal.get(borrower, 0), due_date=since, now=now
        )
        return self.interest.get(borrower, 0) + fresh

    def figures(
        self, borrower: str, now: int, holdings: Mapping[str, int] | None = None
    ) -> AccountFigures:
        """The borrower's figures at ``now`` (optionally with other ``holdings``)."""
        return figures(
            self.values(borrower, now, holdings),
            principal=self.principal.get(borrower, 0),
            interest=self.accrued(borrower, now),
            due_date=self.due.get(borrower),
            rules=self.settings.rules,
        )

    def _collateral(self, token: str) -> CreditCollateral:
        c = self.settings.collateral_at(token)
        if c is None:
            raise Revert.error("UnsupportedCollateral")
        return c

    # -- writes ---------------------------------------------------------------------------------

    def settle(self, run: Execution, borrower: str) -> None:
        """Bring the borrower's interest up to the block's time."""
        now = run.timestamp
        run.write(self.interest, borrower, self.accrued(borrower, now))
        run.write(self.checkpoint, borrower, now)

    def _fund(self, run: Execution) -> ERC20:
        token = run.state.contracts.get(self.asset)
        if not isinstance(token, ERC20):
            raise Revert.error("CreditAssetMissing")
        if not self.totals["funded"]:  # the hub's liquidity, placed once
            token.mint(run, self.address, self.settings.liquidity)
            run.write(self.totals, "funded", 1)
        return token

    def draw(self, run: Execution, borrower: str, receiver: str, amount: int) -> None:
        """Open credit for ``borrower`` to ``receiver`` (callers have checked who may)."""
        if amount <= 0:
            raise Revert.error("ZeroAmount")
        if receiver == ZERO:
            raise Revert.error("ZeroReceiver")
        self.settle(run, borrower)
        before = self.figures(borrower, run.timestamp)
        if before.debt + amount > before.total_credit_capacity:
            raise Revert.error("InsufficientCreditCapacity")
        if before.debt == 0:
            run.write(self.due, borrower, self.settings.rules.due_date(run.timestamp))
        run.write(self.principal, borrower, self.principal.get(borrower, 0) + amount)
        fee = self.settings.rules.draw_fee(amount)
        run.write(self.totals, "fees", self.totals["fees"] + fee)
        self._fund(run)
        token_call(run, self.address, self.asset, "erc20.transfer", receiver, amount - fee)
        run.emit(self.address, "creditHub.CreditDrawn", borrower, receiver, amount, fee)

    def draw_credit(
        self, msg: Message, borrower: str, receiver: str, amount: int
    ) -> tuple[Any, ...]:
        if msg.sender != borrower and self.operators.get(borrower) != msg.sender:
            raise Revert.error("NotBorrowerOrOperator")
        self.draw(msg.run, borrower, receiver, amount)
        return ()

    def _reduce(self, run: Execution, borrower: str, paid: int) -> tuple[int, int]:
        """Take ``paid`` off the debt, interest first: (principal paid, interest paid)."""
        interest = self.interest.get(borrower, 0)
        from_interest = min(paid, interest)
        from_principal = paid - from_interest
        run.write(self.interest, borrower, interest - from_interest)
        run.write(self.principal, borrower, self.principal.get(borrower, 0) - from_principal)
        if self.principal[borrower] == 0 and self.interest[borrower] == 0:
            run.write(self.due, borrower, None)
            self.due.pop(borrower)
        return from_principal, from_interest

    def repay(self, msg: Message, borrower: str, amount: int) -> tuple[Any, ...]:
        run = msg.run
        if amount <= 0:
            raise Revert.error("ZeroAmount")
        self.settle(run, borrower)
        debt = self.principal.get(borrower, 0) + self.interest.get(borrower, 0)
        if debt == 0:
            raise Revert.error("NothingToRepay")
        paid = min(amount, debt)
        self._fund(run)
        token_call(
            run, self.address, self.asset, "erc20.transferFrom", msg.sender, self.address, paid
        )
        principal, interest = self._reduce(run, borrower, paid)
        run.emit(self.address, "creditHub.Repaid", borrower, msg.sender, principal, interest)
        return ()

    def set_operator(self, msg: Message, operator: str) -> tuple[Any, ...]:
        self.assign_operator(msg.run, msg.sender, operator)
        return ()

    def assign_operator(self, run: Execution, borrower: str, operator: str) -> None:
        """Set (or, with the zero address, clear) the borrower's operator."""
        if operator == ZERO:
            if borrower in self.operators:
                run.write(self.operators, borrower, ZERO)
                self.operators.pop(borrower)
        else:
            run.write(self.operators, borrower, operator)
        run.emit(self.address, "creditHub.OperatorSet", borrower, operator)

    def liquidate(self, msg: Message, borrower: str, amount: int) -> tuple[Any, ...]:
        run = msg.run
        now = run.timestamp
        self.settle(run, borrower)
        before = self.figures(borrower, now)
        if not before.liquidatable:
            raise Revert.error("HealthFactorNotBelowOne")
        values = self.values(borrower, now)
        plan = liquidation(values, before.debt, rules=self.settings.rules)
        if plan.repaid > amount:
            raise Revert.error("AmountBelowRequired")
        escrow = run.state.contracts.get(self.settings.escrow.lower())
        if not isinstance(escrow, Releasing):
            raise Revert.error("EscrowMissing")
        self._fund(run)
        if plan.repaid:
            token_call(
                run,
                self.address,
                self.asset,
                "erc20.transferFrom",
                msg.sender,
                self.address,
                plan.repaid,
            )
        if plan.repaid:
            principal, interest = self._reduce(run, borrower, plan.repaid)
            run.emit(self.address, "creditHub.Repaid", borrower, msg.sender, principal, interest)
        for key, value in plan.seized.items():
            held = {
                t: a for t, a in self.holdings(borrower).items() if self._collateral(t).key == key
            }
            for token, amount_held in held.items():
                c = self._collateral(token)
                price = self.unit_price(c, now)
                everything = value >= collateral_value(amount_held, price)
                take = amount_held if everything else min(amount_held, int(value / price))
                value -= collateral_value(take, price)
                run.write(self.collateral, (borrower, token), amount_held - take)
                escrow.release(run, borrower, token, msg.sender, take)
        if plan.bad_debt:
            left = self.principal.get(borrower, 0) + self.interest.get(borrower, 0)
            run.write(self.totals, "bad_debt", self.totals["bad_debt"] + left)
            principal, interest = self._reduce(run, borrower, left)
            run.emit(self.address, "creditHub.BadDebt", borrower, principal, interest)
        run.emit(
            self.address, "creditHub.Liquidated", borrower, msg.sender, plan.repaid, plan.bad_debt
        )
        return ()


@runtime_checkable
class Releasing(Protocol):
    """The contract paying out seized collateral (:class:`~.escrow.CollateralEscrow`, which
    imports this module: the hub finds it at the escrow's address by what it does)."""

    def release(self, run: Execution, user: str, token: str, to: str, amount: int) -> None:
        """Pay out ``amount`` of ``token`` seized from ``user`` to ``to``."""


@runtime_checkable
class Whitelisting(Protocol):
    """A contract keeping borrowers' whitelisted receivers (:class:`~.operator.CreditOperator`,
    which imports this module: the seeding finds it by what it holds)."""

    address: str
    whitelist: dict[tuple[str, str], bool]


#: How often each collateral appears in a seeded account's mix (by rule key).
_MIX_WEIGHTS: Final = {"usdc": 40, "gtusdcp": 25, "superusdc": 10, "yousd": 10, "yobtc": 15}


def seed_book(hub: CreditHub, run: Execution) -> None:
    """Place ``book_accounts`` accounts on the hub at genesis, the same on every run.

    Each account locks one to three collateral assets (stable, vault shares, the BTC vault)
    worth a log-normal amount (median about 3,000 USD, 50 to 500,000); seven in ten have drawn
    between 5 % and 95 % of their capacity, with a first draw up to 45 days before genesis (so
    some are past their due date and accrue interest); three in ten of those have the scenario's
    operator with one whitelisted receiver, a card holding its auto top-up target
    (:func:`book_topup`). The collateral tokens are minted to the escrow, so
    the escrow holds exactly what the books say. Each lock, draw and operator is the account's
    own transaction (``deposit``, ``drawCredit``, ``setOperator``) with the log the contract
    emits (``Deposited``, ``CreditDrawn``, ``OperatorSet``), mined with other accounts' into
    blocks before the chain's start (:meth:`~toolkit.world.evm.ledger.Ledger.seal_genesis`),
    so an observer finds the book from the chain's logs and receipts as it would a real one's.
    """
    s = hub.settings
    if s.book_accounts == 0:
        return
    escrow = s.escrow.lower()
    operator = run.state.contracts.get(s.operator.lower())
    rng = random.Random(f"toolkit credit book:{s.hub.lower()}")
    offered = [c for c in s.collateral if c.key in _MIX_WEIGHTS]
    weights = [_MIX_WEIGHTS[c.key] for c in offered]
    now = run.timestamp
    for index in range(s.book_accounts):
        borrower = book_account(s, index)
        count = rng.choice((1, 1, 2, 2, 3))
        chosen = {c.key: c for c in rng.choices(offered, weights, k=count)}
        usd = min(500_000.0, max(50.0, rng.lognormvariate(8.0, 1.3)))
        for c in chosen.values():
            share = usd / len(chosen)
            price = hub.unit_price(c, now)
            units = int(Fraction(round(share * 100), 100) * 10**s.asset_decimals / price)
            token = run.state.contracts.get(c.address.lower())
            if units == 0 or not isinstance(token, ERC20):
                continue
            token.mint(run, escrow, units)
            hub.lock(run, borrower, c.address.lower(), units)
            # As the escrow's deposit() would: the lock is the account's transaction, in a
            # block before the chain's start, with its Deposited log.
            deposit = seed_calldata("collateralEscrow.deposit", c.address, units)
            run.seed_transaction(borrower, escrow, deposit)
            run.emit(escrow, "collateralEscrow.Deposited", borrower, c.address.lower(), units)
        if rng.random() >= 0.7:
            continue
        capacity = hub.figures(borrower, now).total_credit_capacity
        principal = int(capacity * rng.uniform(0.05, 0.95))
        if principal == 0:
            continue
        first_draw = now - rng.randrange(0, 45 * 86_400)
        run.write(hub.principal, borrower, principal)
        run.write(hub.due, borrower, s.rules.due_date(first_draw))
        draw = seed_calldata("creditHub.drawCredit", borrower, borrower, principal)
        run.seed_transaction(borrower, hub.address, draw)
        run.emit(hub.address, "creditHub.CreditDrawn", borrower, borrower, principal, 0)
        if isinstance(operator, Whitelisting) and rng.random() < 0.3:
            receiver = "0x" + keccak(text=f"toolkit credit card:{borrower}")[-20:].hex()
            run.write(hub.operators, borrower, operator.address)
            assign = seed_calldata("creditHub.setOperator", operator.address)
            run.seed_transaction(borrower, hub.address, assign)
            run.emit(hub.address, "creditHub.OperatorSet", borrower, operator.address)
            run.write(operator.whitelist, (borrower, receiver), True)
            asset = run.state.contracts.get(hub.asset)
            if isinstance(asset, ERC20):  # the card starts full (its top-up target)
                asset.mint(run, receiver, book_topup(s, borrower)[1])


def hub_at(run: Execution, settings: CreditSettings) -> CreditHub:
    """The hub of ``settings`` on the chain ``run`` executes on; a revert when it is missing."""
    hub = run.state.contracts.get(settings.hub.lower())
    if not isinstance(hub, CreditHub):
        raise Revert.error("CreditHubMissing")
    return hub
