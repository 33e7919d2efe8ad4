"""The credit product as simulated contracts: the credit hub, the collateral escrow, the
operator contract, an ERC-4626 earn vault and the collateral tokens.

Every figure comes from :mod:`toolkit.credit` (the one definition of the product's rules) with
the scenario's settings (:mod:`toolkit.scenario.credit`); time is the block's timestamp.

- :class:`CreditHub` (the scenario's ``credit.hub``, and one per other credit asset: EURe's):
  the ledger of every borrower's collateral,
  principal, interest and due date. ``drawCredit(borrower, receiver, amount)`` by the borrower
  or its operator: refused when the debt after it would exceed the credit capacity (the
  maintenance health factor would fall below 1); the origination fee stays with the hub, the
  receiver gets ``amount − fee``, the debt grows by ``amount``; a draw on a zero balance sets
  the due date (billing cycle + grace). ``repay(borrower, amount)`` by anyone: interest first,
  then principal, never more than the debt (only what is owed is pulled). Overdue interest is
  simple, per second, on the principal from the due date on, settled into the ledger at each
  change. ``setOperator(operator)`` by the borrower (zero clears it). ``liquidate(borrower,
  amount)`` by anyone while the health factor is below 1: the exact partial liquidation of
  :func:`toolkit.credit.liquidation` (``amount`` is the most the liquidator will repay), the
  liquidator pays the repayment (a ``Repaid`` event with the liquidator as payer) and receives
  the collateral with the bonus, rounded down to whole token units (so the health factor ends
  at or above 1); debt no collateral covers is written off as bad debt (``BadDebt``).
  The view ``collateralOf(borrower, token)`` reads the booked amount of one collateral token
  (remote chains' included, by their addresses there).
- :class:`CollateralEscrow` (``credit.escrow``): ``deposit(token, amount)`` locks a supported
  collateral for the sender; ``withdraw(token, amount)`` unlocks it unless that would leave the
  position liquidatable (health factor below 1).
- :class:`RemoteEscrow` (``credit.escrow`` on each of ``credit.remote_chains``, Ethereum by
  default): ``deposit(token, amount)`` takes the chain's collateral and emits ``Deposited``;
  ``withdraw(token, amount)`` sets locked collateral aside and emits ``WithdrawRequested``. The
  hub learns of both only through the relay (:mod:`toolkit.world.collateral`), once the source
  chain's confirmations have passed: a deposit is then booked on the hub; a withdrawal is
  booked off and paid out when the position stays out of liquidation, else handed back. Remote
  collateral a liquidation seizes is paid out on its chain the same way.
- :class:`CreditOperator` (``credit.operator``; constructed with the hub, controller, admin,
  caller and revoke delay): ``addCreditReceiver``/``removeCreditReceiver`` by the borrower,
  ``openCreditLine(borrower, receiver, amount)`` by the caller only, only to a receiver the
  borrower whitelisted, only while this contract is the borrower's operator and up to the end
  of a scheduled revocation; ``revoke()`` schedules the end ``revoke delay`` from now and
  ``finalizeRevoke()`` clears the operator strictly after it. There is no ``withdraw``: the
  operator cannot touch collateral.
- :class:`EarnVault`: an ERC-4626 vault over the credit asset, synchronous ``deposit`` and
  ``redeem``, its share price growing along the scenario's yield; :class:`AsyncVault` its
  ERC-7540 twin, redeeming by request and a claim after the vault's delay.
- :class:`CreditToken`: the other collateral tokens (ERC-20s priced along the scenario's paths)
  and the credit assets the scenario's tokens do not list (EURe).

Custom errors revert with ``Error(string)`` naming the rule (``InsufficientCreditCapacity``,
``ReceiverNotWhitelisted``, ...).

>>> from toolkit.scenario import load_scenario
>>> s = load_scenario("default", env={})
>>> [c.settings.asset for c in CreditHub.build(s, 8453)], list(CreditHub.build(s, 1))
(['USDC', 'EURe'], [])
>>> [type(c).__name__ for c in RemoteEscrow.build(s, 1)]
['RemoteEscrow']
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any, ClassVar, Final

from eth_utils import keccak

from toolkit.codecs.functions import encode_call
from toolkit.credit import AccountFigures, collateral_value, figures, liquidation
from toolkit.scenario import Scenario
from toolkit.scenario.credit import CreditCollateral, CreditSettings
from toolkit.world.chain.contracts import (
    ERC20,
    ZERO,
    Contract,
    Execution,
    Message,
    Revert,
    register,
)

__all__ = [
    "AsyncVault",
    "CollateralEscrow",
    "CreditHub",
    "CreditOperator",
    "CreditToken",
    "EarnVault",
    "RemoteEscrow",
    "book_account",
    "book_topup",
    "seed_book",
]


def _token_call(run: Execution, sender: str, token: str, function: str, *args: Any) -> None:
    run.call(sender, token, bytes.fromhex(encode_call(function, *args)[2:]))


def _settings(scenario: Scenario, chain_id: int) -> CreditSettings | None:
    """The first hub's settings (its collateral tokens and vaults) when it is on ``chain_id``."""
    credit = scenario.credit
    return credit if credit is not None and credit.chain == chain_id else None


def _hubs(scenario: Scenario, chain_id: int) -> tuple[CreditSettings, ...]:
    """Every credit hub's settings on ``chain_id`` (USDC's, then EURe's)."""
    credit = _settings(scenario, chain_id)
    return () if credit is None else credit.hubs


class CreditHub(Contract):
    """The credit ledger of one credit asset (see the module docstring)."""

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
        return [cls(settings) for settings in _hubs(scenario, chain_id)]

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
        _token_call(run, self.address, self.asset, "erc20.transfer", receiver, amount - fee)
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
        _token_call(
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
        if not isinstance(escrow, CollateralEscrow):
            raise Revert.error("EscrowMissing")
        self._fund(run)
        if plan.repaid:
            _token_call(
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


#: How often each collateral appears in a seeded account's mix (by rule key).
_MIX_WEIGHTS: Final = {"usdc": 40, "gtusdcp": 25, "superusdc": 10, "yousd": 10, "yobtc": 15}


def book_account(settings: CreditSettings, index: int) -> str:
    """The address of seeded account ``index`` (lowercase; stable per hub).

    >>> from toolkit.scenario import load_scenario
    >>> book_account(load_scenario("default", env={}).credit, 0)[:2]
    '0x'
    """
    return "0x" + keccak(text=f"toolkit credit book:{settings.hub.lower()}:{index}")[-20:].hex()


def seed_book(hub: CreditHub, run: Execution) -> None:
    """Place ``book_accounts`` accounts on the hub at genesis, the same on every run.

    Each account locks one to three collateral assets (stable, vault shares, the BTC vault)
    worth a log-normal amount (median about 3,000 USD, 50 to 500,000); seven in ten have drawn
    between 5 % and 95 % of their capacity, with a first draw up to 45 days before genesis (so
    some are past their due date and accrue interest); three in ten of those have the scenario's
    operator with one whitelisted receiver, a card holding its auto top-up target
    (:func:`book_topup`). The collateral tokens are minted to the escrow, so
    the escrow holds exactly what the books say.
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
        if rng.random() >= 0.7:
            continue
        capacity = hub.figures(borrower, now).total_credit_capacity
        principal = int(capacity * rng.uniform(0.05, 0.95))
        if principal == 0:
            continue
        first_draw = now - rng.randrange(0, 45 * 86_400)
        run.write(hub.principal, borrower, principal)
        run.write(hub.due, borrower, s.rules.due_date(first_draw))
        if isinstance(operator, CreditOperator) and rng.random() < 0.3:
            receiver = "0x" + keccak(text=f"toolkit credit card:{borrower}")[-20:].hex()
            run.write(hub.operators, borrower, operator.address)
            run.write(operator.whitelist, (borrower, receiver), True)
            asset = run.state.contracts.get(hub.asset)
            if isinstance(asset, ERC20):  # the card starts full (its top-up target)
                asset.mint(run, receiver, book_topup(s, borrower)[1])


def book_topup(settings: CreditSettings, account: str) -> tuple[int, int]:
    """The auto top-up (threshold, target balance) of seeded account ``account``'s card:
    a threshold of 50 to 500 credit-asset units, a target twice that.

    >>> from toolkit.scenario import load_scenario
    >>> s = load_scenario("default", env={}).credit
    >>> threshold, target = book_topup(s, book_account(s, 0))
    >>> 50 * 10**6 <= threshold <= 500 * 10**6 and target == 2 * threshold
    True
    """
    threshold = (50 + int(account[-4:], 16) % 451) * 10**settings.asset_decimals
    return threshold, 2 * threshold


def _hub(run: Execution, settings: CreditSettings) -> CreditHub:
    hub = run.state.contracts.get(settings.hub.lower())
    if not isinstance(hub, CreditHub):
        raise Revert.error("CreditHubMissing")
    return hub


class CollateralEscrow(Contract):
    """Holds locked collateral; the hub keeps the books (see the module docstring)."""

    functions: ClassVar[Mapping[str, str]] = {
        "collateralEscrow.deposit": "deposit",
        "collateralEscrow.withdraw": "withdraw",
    }

    def __init__(self, settings: CreditSettings) -> None:
        super().__init__(settings.escrow)
        self.settings = settings

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        return [cls(settings) for settings in _hubs(scenario, chain_id)]

    def deposit(self, msg: Message, token: str, amount: int) -> tuple[Any, ...]:
        run = msg.run
        if self.settings.collateral_at(token, self.settings.chain) is None:
            raise Revert.error("UnsupportedCollateral")
        if amount <= 0:
            raise Revert.error("ZeroAmount")
        hub = _hub(run, self.settings)
        _token_call(
            run, self.address, token, "erc20.transferFrom", msg.sender, self.address, amount
        )
        hub.lock(run, msg.sender, token, amount)
        run.emit(self.address, "collateralEscrow.Deposited", msg.sender, token, amount)
        return ()

    def withdraw(self, msg: Message, token: str, amount: int) -> tuple[Any, ...]:
        run = msg.run
        if amount <= 0:
            raise Revert.error("ZeroAmount")
        if self.settings.collateral_at(token, self.settings.chain) is None:
            raise Revert.error("UnsupportedCollateral")  # remote collateral: on its chain
        hub = _hub(run, self.settings)
        key = (msg.sender, token)
        held = hub.collateral.get(key, 0)
        if held < amount:
            raise Revert.error("InsufficientCollateral")
        hub.settle(run, msg.sender)
        after = hub.holdings(msg.sender)
        after[token] = held - amount
        if hub.figures(msg.sender, run.timestamp, after).liquidatable:
            raise Revert.error("HealthFactorBelowOne")
        run.write(hub.collateral, key, held - amount)
        _token_call(run, self.address, token, "erc20.transfer", msg.sender, amount)
        run.emit(self.address, "collateralEscrow.Withdrawn", msg.sender, token, amount)
        return ()

    def release(self, run: Execution, user: str, token: str, to: str, amount: int) -> None:
        """Pay out seized collateral (the hub's liquidation; the books are already moved).
        Remote collateral is paid out on its chain by the relay, which reads ``Seized``."""
        if amount and self.settings.collateral_at(token, self.settings.chain) is not None:
            _token_call(run, self.address, token, "erc20.transfer", to, amount)
        run.emit(self.address, "collateralEscrow.Seized", user, token, to, amount)


class RemoteEscrow(Contract):
    """A collateral escrow on a chain other than the hub's (see the module docstring).

    ``locked`` is what each user has here and has not asked back (confirmed on the hub or not),
    ``pending`` what a withdrawal request set aside until the relay settles it.
    """

    functions: ClassVar[Mapping[str, str]] = {
        "collateralEscrow.deposit": "deposit",
        "collateralEscrow.withdraw": "withdraw",
    }

    def __init__(self, settings: CreditSettings, chain_id: int) -> None:
        super().__init__(settings.escrow)
        self.settings = settings
        self.chain_id = chain_id
        self.locked: dict[tuple[str, str], int] = {}
        self.pending: dict[tuple[str, str], int] = {}

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        s = scenario.credit
        if s is None or chain_id not in s.remote_chains:
            return []
        return [cls(s, chain_id)]

    def deposit(self, msg: Message, token: str, amount: int) -> tuple[Any, ...]:
        run = msg.run
        if self.settings.collateral_at(token, self.chain_id) is None:
            raise Revert.error("UnsupportedCollateral")
        if amount <= 0:
            raise Revert.error("ZeroAmount")
        _token_call(
            run, self.address, token, "erc20.transferFrom", msg.sender, self.address, amount
        )
        key = (msg.sender, token)
        run.write(self.locked, key, self.locked.get(key, 0) + amount)
        run.emit(self.address, "collateralEscrow.Deposited", msg.sender, token, amount)
        return ()

    def withdraw(self, msg: Message, token: str, amount: int) -> tuple[Any, ...]:
        run = msg.run
        if amount <= 0:
            raise Revert.error("ZeroAmount")
        key = (msg.sender, token)
        held = self.locked.get(key, 0)
        if held < amount:
            raise Revert.error("InsufficientCollateral")
        run.write(self.locked, key, held - amount)
        run.write(self.pending, key, self.pending.get(key, 0) + amount)
        run.emit(self.address, "collateralEscrow.WithdrawRequested", msg.sender, token, amount)
        return ()

    def settle_withdrawal(
        self, run: Execution, user: str, token: str, amount: int, *, paid: bool
    ) -> None:
        """The relay's answer to a withdrawal request: pay it out, or hand it back to locked."""
        key = (user, token)
        amount = min(amount, self.pending.get(key, 0))  # a liquidation may have taken some
        run.write(self.pending, key, self.pending.get(key, 0) - amount)
        if paid:
            _token_call(run, self.address, token, "erc20.transfer", user, amount)
            run.emit(self.address, "collateralEscrow.Withdrawn", user, token, amount)
        else:
            run.write(self.locked, key, self.locked.get(key, 0) + amount)

    def pay_seized(self, run: Execution, user: str, token: str, to: str, amount: int) -> None:
        """Pay out collateral a liquidation on the hub seized (the relay, from ``Seized``):
        from what is locked, then from what a withdrawal request set aside."""
        key = (user, token)
        locked = self.locked.get(key, 0)
        from_locked = min(locked, amount)
        run.write(self.locked, key, locked - from_locked)
        run.write(self.pending, key, self.pending.get(key, 0) - (amount - from_locked))
        _token_call(run, self.address, token, "erc20.transfer", to, amount)
        run.emit(self.address, "collateralEscrow.Seized", user, token, to, amount)


class CreditOperator(Contract):
    """The operator contract of the spec (see the module docstring)."""

    functions: ClassVar[Mapping[str, str]] = {
        "creditHub.addCreditReceiver": "add_receiver",
        "creditHub.removeCreditReceiver": "remove_receiver",
        "operator.openCreditLine": "open_credit_line",
        "operator.revoke": "revoke",
        "operator.finalizeRevoke": "finalize_revoke",
    }

    def __init__(
        self,
        settings: CreditSettings,
        *,
        hub: str,
        controller: str,
        admin: str,
        caller: str,
        revoke_delay: int,
    ) -> None:
        super().__init__(settings.operator)
        self.settings = settings
        self.hub = hub.lower()
        self.controller = controller.lower()
        self.admin = admin.lower()
        self.caller = caller.lower()
        self.revoke_delay = revoke_delay
        self.whitelist: dict[tuple[str, str], bool] = {}
        self.access_until: dict[str, int] = {}

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        return [
            cls(
                s,
                hub=s.hub,
                controller=s.controller,
                admin=s.operator_admin,
                caller=s.operator_caller,
                revoke_delay=s.revoke_delay_seconds,
            )
            for s in _hubs(scenario, chain_id)
        ]

    def receivers(self, borrower: str) -> list[str]:
        """The borrower's whitelisted receivers, in the order they were added."""
        return [r for (b, r), on in self.whitelist.items() if b == borrower and on]

    def add_receiver(self, msg: Message, receiver: str) -> tuple[Any, ...]:
        if receiver == ZERO:
            raise Revert.error("ZeroReceiver")
        if self.whitelist.get((msg.sender, receiver)):
            raise Revert.error("ReceiverAlreadyWhitelisted")
        msg.run.write(self.whitelist, (msg.sender, receiver), True)
        msg.run.emit(self.address, "operator.CreditReceiverAdded", msg.sender, receiver)
        return ()

    def remove_receiver(self, msg: Message, receiver: str) -> tuple[Any, ...]:
        if not self.whitelist.get((msg.sender, receiver)):
            raise Revert.error("ReceiverNotWhitelisted")
        msg.run.write(self.whitelist, (msg.sender, receiver), True)
        self.whitelist.pop((msg.sender, receiver))
        msg.run.emit(self.address, "operator.CreditReceiverRemoved", msg.sender, receiver)
        return ()

    def open_credit_line(
        self, msg: Message, borrower: str, receiver: str, amount: int
    ) -> tuple[Any, ...]:
        run = msg.run
        if msg.sender != self.caller:
            raise Revert.error("NotCaller")
        if not self.whitelist.get((borrower, receiver)):
            raise Revert.error("ReceiverNotWhitelisted")
        hub = _hub(run, self.settings)
        if hub.operators.get(borrower) != self.address:
            raise Revert.error("NotOperator")
        until = self.access_until.get(borrower)
        if until is not None and run.timestamp > until:
            raise Revert.error("AccessRevoked")
        hub.draw(run, borrower, receiver, amount)
        run.emit(self.address, "operator.CreditLineOpened", borrower, receiver, amount)
        return ()

    def revoke(self, msg: Message) -> tuple[Any, ...]:
        run = msg.run
        if _hub(run, self.settings).operators.get(msg.sender) != self.address:
            raise Revert.error("NotOperator")
        until = run.timestamp + self.revoke_delay
        run.write(self.access_until, msg.sender, until)
        run.emit(self.address, "operator.RevokeScheduled", msg.sender, until)
        return ()

    def finalize_revoke(self, msg: Message) -> tuple[Any, ...]:
        run = msg.run
        until = self.access_until.get(msg.sender)
        if until is None:
            raise Revert.error("RevokeNotScheduled")
        if run.timestamp <= until:
            raise Revert.error("RevokeDelayNotPassed")
        run.write(self.access_until, msg.sender, until)
        self.access_until.pop(msg.sender)
        hub = _hub(run, self.settings)
        if hub.operators.get(msg.sender) == self.address:
            hub.assign_operator(run, msg.sender, ZERO)
        run.emit(self.address, "operator.RevokeFinalized", msg.sender)
        return ()


class CreditToken(ERC20):
    """A collateral token priced along a scenario path (``superUSDC``, ``yoBTC``, ...), or a
    credit asset the scenario's tokens do not list (EURe)."""

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        s = _settings(scenario, chain_id)
        if s is None:
            return []
        listed = {t.address.lower() for t in scenario.tokens if t.chain == chain_id}
        listed |= {t.address.lower() for t in scenario.amm.tokens if t.chain == chain_id}
        assets = [
            cls(h.asset_address, h.asset, h.asset_decimals)
            for h in s.others
            if h.asset_address.lower() not in listed
        ]
        underlyings = {
            c.vault.underlying[1].lower(): c.vault.underlying
            for c in s.collateral
            if c.vault is not None and c.vault.underlying is not None
        }
        assets += [cls(a, sym, d) for sym, a, d in underlyings.values() if a.lower() not in listed]
        return assets + [
            cls(c.address, c.symbol, c.decimals)
            for c in s.collateral
            if c.vault is None and c.address.lower() != s.asset_address.lower()
        ]


class EarnVault(ERC20):
    """An ERC-4626 vault over the credit asset (or its own underlying: cbBTC for yoBTC):
    synchronous ``deposit(assets, receiver)`` and ``redeem(shares, receiver, owner)`` at the
    share price of the scenario's yield path, rounded down (against the caller) both ways; the
    yield it pays comes from liquidity placed once."""

    functions: ClassVar[Mapping[str, str]] = {
        **ERC20.functions,
        "vault.deposit": "vault_deposit",
        "vault.redeem": "vault_redeem",
    }

    def __init__(self, settings: CreditSettings, collateral: CreditCollateral) -> None:
        super().__init__(collateral.address, collateral.symbol, collateral.decimals)
        self.settings = settings
        self.collateral_settings = collateral
        address, self.asset_decimals = settings.underlying_of(collateral)
        self.asset = address.lower()
        own = collateral.vault is not None and collateral.vault.underlying is not None
        #: What the strategy's yield is paid from, placed once at the first redemption.
        self.funding = 10 ** (self.asset_decimals + 6) if own else settings.liquidity
        self.supply["funded"] = 0

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        s = _settings(scenario, chain_id)
        if s is None:
            return []
        return [cls(s, c) for c in s.collateral if c.vault is not None and not c.vault.asynchronous]

    def share_price(self, now: int) -> Any:
        """Assets per share (smallest units, a Fraction) at ``now``."""
        return self.collateral_settings.share_price(now, self.asset_decimals)

    def preview_deposit(self, assets: int, now: int) -> int:
        """Shares a deposit of ``assets`` mints at ``now``."""
        return int(assets / self.share_price(now))

    def preview_redeem(self, shares: int, now: int) -> int:
        """Assets a redemption of ``shares`` pays at ``now``."""
        return int(shares * self.share_price(now))

    def vault_deposit(self, msg: Message, assets: int, receiver: str) -> tuple[Any, ...]:
        run = msg.run
        shares = self.preview_deposit(assets, run.timestamp)
        if shares == 0:
            raise Revert.error("ZeroShares")
        _token_call(
            run, self.address, self.asset, "erc20.transferFrom", msg.sender, self.address, assets
        )
        self.mint(run, receiver, shares)
        run.emit(self.address, "erc20.Transfer", ZERO, receiver, shares)
        run.emit(self.address, "vault.Deposit", msg.sender, receiver, assets, shares)
        return ()

    def vault_redeem(self, msg: Message, shares: int, receiver: str, owner: str) -> tuple[Any, ...]:
        run = msg.run
        if owner != msg.sender:
            allowed = self.allowances.get((owner, msg.sender), 0)
            if allowed < shares:
                raise Revert.error("ERC4626: redeem more than allowed")
            if allowed != 2**256 - 1:
                run.write(self.allowances, (owner, msg.sender), allowed - shares)
        have = self.balances.get(owner, 0)
        if have < shares:
            raise Revert.error("ERC4626: redeem more than max")
        assets = self.preview_redeem(shares, run.timestamp)
        run.write(self.balances, owner, have - shares)
        run.write(self.supply, "total", self.supply["total"] - shares)
        run.emit(self.address, "erc20.Transfer", owner, ZERO, shares)
        token = run.state.contracts.get(self.asset)
        if isinstance(token, ERC20) and not self.supply["funded"]:
            token.mint(run, self.address, self.funding)  # the strategy's yield
            run.write(self.supply, "funded", 1)
        _token_call(run, self.address, self.asset, "erc20.transfer", receiver, assets)
        run.emit(self.address, "vault.Withdraw", msg.sender, receiver, owner, assets, shares)
        return ()


class AsyncVault(EarnVault):
    """An ERC-7540 vault over the credit asset: deposits are synchronous; a redemption is a
    ``requestRedeem(shares, controller, owner)`` (the shares are burnt and their assets fixed at
    the request's share price, ``RedeemRequest`` carries the ``requestId``), claimable
    ``redeem_delay_seconds`` later by ``redeem(shares, receiver, controller)`` called by the
    controller, which claims its oldest claimable request of exactly ``shares``."""

    functions: ClassVar[Mapping[str, str]] = {
        **EarnVault.functions,
        "vault.requestRedeem": "request_redeem",
    }

    def __init__(self, settings: CreditSettings, collateral: CreditCollateral) -> None:
        super().__init__(settings, collateral)
        assert collateral.vault is not None and collateral.vault.redeem_delay_seconds is not None
        self.delay = collateral.vault.redeem_delay_seconds
        #: requestId → (controller, shares, assets, claimable from)
        self.requests: dict[int, tuple[str, int, int, int]] = {}
        self.claimed: dict[int, bool] = {}
        self.supply["next_request"] = 1

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        s = _settings(scenario, chain_id)
        if s is None:
            return []
        return [cls(s, c) for c in s.collateral if c.vault is not None and c.vault.asynchronous]

    def request_redeem(
        self, msg: Message, shares: int, controller: str, owner: str
    ) -> tuple[Any, ...]:
        run = msg.run
        if shares <= 0:
            raise Revert.error("ZeroShares")
        if owner != msg.sender:
            allowed = self.allowances.get((owner, msg.sender), 0)
            if allowed < shares:
                raise Revert.error("ERC7540: request more than allowed")
            if allowed != 2**256 - 1:
                run.write(self.allowances, (owner, msg.sender), allowed - shares)
        have = self.balances.get(owner, 0)
        if have < shares:
            raise Revert.error("ERC7540: request more than balance")
        run.write(self.balances, owner, have - shares)
        run.write(self.supply, "total", self.supply["total"] - shares)
        run.emit(self.address, "erc20.Transfer", owner, ZERO, shares)
        request = self.supply["next_request"]
        run.write(self.supply, "next_request", request + 1)
        assets = self.preview_redeem(shares, run.timestamp)
        run.write(self.requests, request, (controller, shares, assets, run.timestamp + self.delay))
        run.emit(
            self.address, "vault.RedeemRequest", controller, owner, request, msg.sender, shares
        )
        return ()

    def claimable(self, request: int, now: int) -> bool:
        """Whether request ``request`` exists, is unclaimed and its delay has passed."""
        entry = self.requests.get(request)
        return entry is not None and not self.claimed.get(request) and now >= entry[3]

    def vault_redeem(self, msg: Message, shares: int, receiver: str, owner: str) -> tuple[Any, ...]:
        run = msg.run
        controller = owner
        if msg.sender != controller:
            raise Revert.error("ERC7540: caller is not the controller")
        for request in sorted(self.requests):
            entry = self.requests[request]
            if (
                entry[0] == controller
                and entry[1] == shares
                and self.claimable(request, run.timestamp)
            ):
                break
        else:
            raise Revert.error("ERC7540: no claimable request of these shares")
        assets = entry[2]
        run.write(self.claimed, request, True)
        token = run.state.contracts.get(self.asset)
        if isinstance(token, ERC20) and not self.supply["funded"]:
            token.mint(run, self.address, self.funding)  # the strategy's yield
            run.write(self.supply, "funded", 1)
        _token_call(run, self.address, self.asset, "erc20.transfer", receiver, assets)
        run.emit(self.address, "vault.Withdraw", msg.sender, receiver, controller, assets, shares)
        return ()


for _cls in (
    CreditHub,
    CollateralEscrow,
    RemoteEscrow,
    CreditOperator,
    CreditToken,
    EarnVault,
    AsyncVault,
):
    register(_cls)
