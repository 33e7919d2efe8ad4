"""The collateral escrow on a chain other than the hub's (:class:`RemoteEscrow`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from toolkit.scenario import Scenario
from toolkit.scenario.credit import CreditSettings
from toolkit.world.evm.contracts import Contract, Execution, Message, Revert
from toolkit.world.evm.credit.support import token_call

__all__ = ["RemoteEscrow"]


class RemoteEscrow(Contract):
    """A collateral escrow on a chain other than the hub's (see :mod:`toolkit.world.evm.credit`).

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
        token_call(run, self.address, token, "erc20.transferFrom", msg.sender, self.address, amount)
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
            token_call(run, self.address, token, "erc20.transfer", user, amount)
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
        token_call(run, self.address, token, "erc20.transfer", to, amount)
        run.emit(self.address, "collateralEscrow.Seized", user, token, to, amount)
