"""The collateral escrow: it holds locked collateral, its hub keeps the books.

``deposit`` locks a supported collateral with the hub, ``withdraw`` releases it while the
account stays healthy, and the hub's liquidation pays seized collateral out through
:meth:`CollateralEscrow.release` (see :mod:`toolkit.world.evm.credit`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from toolkit.scenario import Scenario
from toolkit.scenario.credit import CreditSettings
from toolkit.world.evm.contracts import Contract, Execution, Message, Revert
from toolkit.world.evm.credit.hub import hub_at
from toolkit.world.evm.credit.support import hubs_on, token_call

__all__ = ["CollateralEscrow"]


class CollateralEscrow(Contract):
    """Holds locked collateral; the hub keeps the books (see :mod:`toolkit.world.evm.credit`)."""

    functions: ClassVar[Mapping[str, str]] = {
        "collateralEscrow.deposit": "deposit",
        "collateralEscrow.withdraw": "withdraw",
    }

    def __init__(self, settings: CreditSettings) -> None:
        super().__init__(settings.escrow)
        self.settings = settings

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        return [cls(settings) for settings in hubs_on(scenario, chain_id)]

    def deposit(self, msg: Message, token: str, amount: int) -> tuple[Any, ...]:
        run = msg.run
        if self.settings.collateral_at(token, self.settings.chain) is None:
            raise Revert.error("UnsupportedCollateral")
        if amount <= 0:
            raise Revert.error("ZeroAmount")
        hub = hub_at(run, self.settings)
        token_call(run, self.address, token, "erc20.transferFrom", msg.sender, self.address, amount)
        hub.lock(run, msg.sender, token, amount)
        run.emit(self.address, "collateralEscrow.Deposited", msg.sender, token, amount)
        return ()

    def withdraw(self, msg: Message, token: str, amount: int) -> tuple[Any, ...]:
        run = msg.run
        if amount <= 0:
            raise Revert.error("ZeroAmount")
        if self.settings.collateral_at(token, self.settings.chain) is None:
            raise Revert.error("UnsupportedCollateral")  # remote collateral: on its chain
        hub = hub_at(run, self.settings)
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
        token_call(run, self.address, token, "erc20.transfer", msg.sender, amount)
        run.emit(self.address, "collateralEscrow.Withdrawn", msg.sender, token, amount)
        return ()

    def release(self, run: Execution, user: str, token: str, to: str, amount: int) -> None:
        """Pay out seized collateral (the hub's liquidation; the books are already moved).
        Remote collateral is paid out on its chain by the relay, which reads ``Seized``."""
        if amount and self.settings.collateral_at(token, self.settings.chain) is not None:
            token_call(run, self.address, token, "erc20.transfer", to, amount)
        run.emit(self.address, "collateralEscrow.Seized", user, token, to, amount)
