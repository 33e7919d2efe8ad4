"""The token contracts every scenario deploys: an OpenZeppelin-style ERC-20 for each token and
WETH9 for ``WETH``, with their revert messages (:mod:`toolkit.world.evm.contracts`: the seam
they plug into). Registered first, so every ledger deploys them before the other contracts.

>>> from toolkit.world.evm.contracts import Execution, State
>>> weth = WETH("0x" + "ee" * 20, "WETH", 18)
>>> state = State()
>>> run = Execution(state, timestamp=0, number=1)
>>> weth.mint(run, "0x" + "11" * 20, 5)
>>> weth.balances["0x" + "11" * 20], state.balances[weth.address]
(5, 5)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from toolkit.scenario import Scenario
from toolkit.world.evm import gas
from toolkit.world.evm.contracts import (
    CONTRACT_CLASSES,
    ZERO,
    Contract,
    Execution,
    Message,
    Revert,
    register,
)

__all__ = ["ERC20", "WETH"]


class ERC20(Contract):
    """An OpenZeppelin-style ERC-20 token with its revert messages.

    Transfers to the zero address are refused; ``approve`` overwrites; an allowance of
    ``2**256 - 1`` is never spent down (infinite approval).
    """

    functions: ClassVar[Mapping[str, str]] = {
        "erc20.transfer": "transfer",
        "erc20.transferFrom": "transfer_from",
        "erc20.approve": "approve",
        "erc20.balanceOf": "balance_of",
        "erc20.allowance": "allowance",
        "erc20.totalSupply": "total_supply",
        "erc20.decimals": "decimals_of",
        "erc20.symbol": "symbol_of",
        "erc20.name": "name_of",
    }
    #: Whether reverts carry OpenZeppelin's messages (WETH9's carry none).
    messages: ClassVar[bool] = True

    def __init__(self, address: str, symbol: str, decimals: int, name: str | None = None) -> None:
        super().__init__(address)
        self.symbol = symbol
        self.name = name or symbol
        self.decimals = decimals
        self.balances: dict[str, int] = {}
        self.allowances: dict[tuple[str, str], int] = {}
        self.supply: dict[str, int] = {"total": 0}

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        return [
            cls(t.address, t.symbol, t.decimals)
            for t in scenario.tokens
            if t.chain == chain_id and t.symbol != "WETH"
        ]

    def _fail(self, message: str) -> Revert:
        return Revert.error(message) if self.messages else Revert(b"", message)

    def mint(self, run: Execution, account: str, amount: int, *, logged: bool = False) -> None:
        """Create ``amount`` for ``account``: with ``logged`` a ``Transfer`` from the zero
        address (a bridge's mint), else no event (the development namespace's deal)."""
        run.write(self.balances, account, self.balances.get(account, 0) + amount)
        run.write(self.supply, "total", self.supply["total"] + amount)
        if logged:
            run.emit(self.address, "erc20.Transfer", ZERO, account, amount)

    def burn(self, run: Execution, account: str, amount: int) -> None:
        """Destroy ``amount`` of ``account``'s tokens (a bridge's burn) with a ``Transfer`` to
        the zero address; reverts when the account holds less."""
        have = self.balances.get(account, 0)
        if have < amount:
            raise self._fail("ERC20: burn amount exceeds balance")
        run.write(self.balances, account, have - amount)
        run.write(self.supply, "total", self.supply["total"] - amount)
        run.emit(self.address, "erc20.Transfer", account, ZERO, amount)

    def _move(self, run: Execution, src: str, dst: str, amount: int) -> None:
        if dst == ZERO and self.messages:
            raise self._fail("ERC20: transfer to the zero address")
        have = self.balances.get(src, 0)
        if have < amount:
            raise self._fail("ERC20: transfer amount exceeds balance")
        run.write(self.balances, src, have - amount)
        run.write(self.balances, dst, self.balances.get(dst, 0) + amount)
        run.emit(self.address, "erc20.Transfer", src, dst, amount)

    def transfer(self, msg: Message, to: str, amount: int) -> tuple[Any, ...]:
        self._move(msg.run, msg.sender, to, amount)
        return (True,)

    def transfer_from(self, msg: Message, to: str, amount: int, **args: str) -> tuple[Any, ...]:
        owner = args["from"]
        if owner != msg.sender:
            allowed = self.allowances.get((owner, msg.sender), 0)
            if allowed < amount:
                raise self._fail("ERC20: insufficient allowance")
            if allowed != 2**256 - 1:
                msg.run.write(self.allowances, (owner, msg.sender), allowed - amount)
        self._move(msg.run, owner, to, amount)
        return (True,)

    def approve(self, msg: Message, spender: str, amount: int) -> tuple[Any, ...]:
        if spender == ZERO and self.messages:
            raise self._fail("ERC20: approve to the zero address")
        msg.run.write(self.allowances, (msg.sender, spender), amount)
        msg.run.emit(self.address, "erc20.Approval", msg.sender, spender, amount)
        return (True,)

    def balance_of(self, msg: Message, account: str) -> tuple[Any, ...]:
        return (self.balances.get(account, 0),)

    def allowance(self, msg: Message, owner: str, spender: str) -> tuple[Any, ...]:
        return (self.allowances.get((owner, spender), 0),)

    def total_supply(self, msg: Message) -> tuple[Any, ...]:
        return (self.supply["total"],)

    def decimals_of(self, msg: Message) -> tuple[Any, ...]:
        return (self.decimals,)

    def symbol_of(self, msg: Message) -> tuple[Any, ...]:
        return (self.symbol,)

    def name_of(self, msg: Message) -> tuple[Any, ...]:
        return (self.name,)


class WETH(ERC20):
    """WETH9: an ERC-20 backed one to one by the native coin it holds.

    ``deposit()`` (or a plain value transfer) wraps ``msg.value`` with a ``Deposit`` event,
    ``withdraw(amount)`` unwraps with a ``Withdrawal`` event; reverts carry no message, as
    WETH9's ``require`` calls have none.
    """

    functions: ClassVar[Mapping[str, str]] = {
        **ERC20.functions,
        "weth.deposit": "deposit",
        "weth.withdraw": "withdraw",
    }
    receive: ClassVar[str | None] = "weth.deposit"
    messages: ClassVar[bool] = False

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        return [
            cls(t.address, t.symbol, t.decimals, "Wrapped Ether")
            for t in scenario.tokens
            if t.chain == chain_id and t.symbol == "WETH"
        ]

    def mint(self, run: Execution, account: str, amount: int, *, logged: bool = False) -> None:
        """Create wrapped coin together with the native coin that backs it."""
        super().mint(run, account, amount, logged=logged)
        run.write(
            run.state.balances, self.address, run.state.balances.get(self.address, 0) + amount
        )

    def burn(self, run: Execution, account: str, amount: int) -> None:
        """Destroy wrapped coin together with the native coin that backs it."""
        super().burn(run, account, amount)
        run.write(run.state.balances, self.address, run.state.balances[self.address] - amount)

    def deposit(self, msg: Message) -> tuple[Any, ...]:
        run = msg.run
        run.write(self.balances, msg.sender, self.balances.get(msg.sender, 0) + msg.value)
        run.write(self.supply, "total", self.supply["total"] + msg.value)
        run.emit(self.address, "weth.Deposit", msg.sender, msg.value)
        return ()

    def withdraw(self, msg: Message, amount: int) -> tuple[Any, ...]:
        run = msg.run
        have = self.balances.get(msg.sender, 0)
        if have < amount:
            raise Revert()
        run.write(self.balances, msg.sender, have - amount)
        run.write(self.supply, "total", self.supply["total"] - amount)
        run.move_native(self.address, msg.sender, amount)
        run.emit(self.address, "weth.Withdrawal", msg.sender, amount)
        return ()


register(ERC20)
register(WETH)

assert all(key in gas.EXECUTION for cls in CONTRACT_CLASSES for key in cls.functions)
