"""The operator contract of the spec (see :mod:`toolkit.world.evm.credit`): receivers a
borrower whitelists, credit lines the caller opens to them, and the borrower's revocation."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from toolkit.scenario import Scenario
from toolkit.scenario.credit import CreditSettings
from toolkit.world.evm.contracts import ZERO, Contract, Message, Revert
from toolkit.world.evm.credit.hub import hub_at
from toolkit.world.evm.credit.support import hubs_on

__all__ = ["CreditOperator"]


class CreditOperator(Contract):
    """The operator contract of the spec (see :mod:`toolkit.world.evm.credit`)."""

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
                revoke_delay=s.revoke_delay_s,
            )
            for s in hubs_on(scenario, chain_id)
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
        hub = hub_at(run, self.settings)
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
        if hub_at(run, self.settings).operators.get(msg.sender) != self.address:
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
        hub = hub_at(run, self.settings)
        if hub.operators.get(msg.sender) == self.address:
            hub.assign_operator(run, msg.sender, ZERO)
        run.emit(self.address, "operator.RevokeFinalized", msg.sender)
        return ()
