"""Contracts as Python objects, called by 4-byte selector through the ABI function table.

The seam: a contract class lists the functions it implements as keys of
:data:`toolkit.codecs.function_table.FUNCTIONS` mapped to method names, says which instances a
scenario needs (:meth:`Contract.build`) and is registered with :func:`register`; every ledger
then deploys those instances at the scenario's addresses. Escrow, output settler, pools and
credit contracts are added the same way.

A method takes the :class:`Message` (sender, value, the running :class:`Execution`) and the
decoded arguments by name (addresses lowercase) and returns the function's outputs as a tuple.
It changes state only through :meth:`Execution.write`, :meth:`Execution.move_native` and
:meth:`Execution.emit`, which keep an undo journal: a :class:`Revert` anywhere in a transaction
undoes everything it did. :meth:`Revert.error` encodes a reason as Solidity's ``Error(string)``.

>>> from toolkit.codecs.functions import encode_call
>>> from toolkit.world.evm.tokens import ERC20
>>> token = ERC20("0x" + "aa" * 20, "USDC", 6)
>>> state = State()
>>> state.contracts[token.address] = token
>>> token.balances["0x" + "11" * 20] = 10
>>> run = Execution(state, timestamp=0, number=1)
>>> data = encode_call("erc20.transfer", "0x" + "22" * 20, 20)
>>> try:
...     run.call("0x" + "11" * 20, token.address, bytes.fromhex(data[2:]))
... except Revert as exc:
...     print(exc.reason)
ERC20: transfer amount exceeds balance
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

import eth_abi
from eth_utils import function_signature_to_4byte_selector, keccak

from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.events import encode_log
from toolkit.codecs.function_table import FUNCTIONS, Function
from toolkit.codecs.functions import decode_call, encode_result
from toolkit.errors import ChainError
from toolkit.scenario import Scenario
from toolkit.world.evm import gas

__all__ = [
    "CONTRACT_CLASSES",
    "Contract",
    "Execution",
    "Message",
    "RawLog",
    "Revert",
    "State",
    "register",
]

ZERO: Final = "0x" + "00" * 20
#: The selector of Solidity's ``Error(string)``.
ERROR_SELECTOR: Final = bytes.fromhex("08c379a0")
_MISSING: Final = object()


class Revert(ChainError):
    """A call reverted; ``data`` is what the contract returned (``Error(string)`` or empty)."""

    def __init__(self, data: bytes = b"", reason: str | None = None) -> None:
        super().__init__(reason or "execution reverted")
        self.data = data
        self.reason = reason

    @classmethod
    def error(cls, message: str) -> Revert:
        """A revert with ``require(false, message)``'s data.

        >>> Revert.error("no").data[:4].hex()
        '08c379a0'
        """
        return cls(ERROR_SELECTOR + eth_abi.encode(["string"], [message]), message)

    @classmethod
    def custom(cls, signature: str, *args: Any) -> Revert:
        """A revert with a custom error's selector and ABI-encoded arguments; its ``reason``
        is the error's name.

        >>> failed = Revert.custom("NotProven()")
        >>> failed.reason, failed.data.hex()
        ('NotProven', 'a506d334')
        """
        name, _, rest = signature.partition("(")
        types = [t for t in rest.rstrip(")").split(",") if t]
        data = function_signature_to_4byte_selector(signature) + eth_abi.encode(types, list(args))
        return cls(data, name)


@dataclass(frozen=True, slots=True)
class RawLog:
    """A log as a contract emits it: the emitter, topics and data (``0x`` hex)."""

    address: str
    topics: tuple[str, ...]
    data: str


@dataclass
class State:
    """The world state of one chain: native balances, nonces and contracts by address."""

    balances: dict[str, int] = field(default_factory=dict)
    nonces: dict[str, int] = field(default_factory=dict)
    contracts: dict[str, Contract] = field(default_factory=dict)


class Execution:
    """One transaction's (or ``eth_call``'s) run: its undo journal and the logs it emitted."""

    def __init__(self, state: State, *, timestamp: int, number: int) -> None:
        self.state = state
        self.timestamp = timestamp
        self.number = number
        self.logs: list[RawLog] = []
        self._journal: list[tuple[Any, Any, Any]] = []
        #: The transactions of a genesis set-up (a seeded book), each (sender, to, data, index
        #: of its first log): :meth:`Ledger.seal_genesis` mines them into blocks.
        self.seeded: list[tuple[str, str, bytes, int]] = []

    def seed_transaction(self, sender: str, to: str, data: bytes) -> None:
        """Begin a transaction of a genesis set-up: the logs emitted from here to the next one
        are its own, as if ``sender`` had sent ``data`` to ``to`` before the chain's start."""
        self.seeded.append((sender, to, data, len(self.logs)))

    def write(self, mapping: dict[Any, Any], key: Any, value: Any) -> None:
        """Set ``mapping[key] = value``, remembering the old value for a rollback."""
        self._journal.append((mapping, key, mapping.get(key, _MISSING)))
        mapping[key] = value

    def move_native(self, src: str, dst: str, amount: int) -> None:
        """Move native coin; reverts (empty data) when ``src`` holds too little."""
        if amount == 0:
            return
        balances = self.state.balances
        have = balances.get(src, 0)
        if have < amount:
            raise Revert(b"", "insufficient native balance")
        self.write(balances, src, have - amount)
        self.write(balances, dst, balances.get(dst, 0) + amount)

    def emit(self, address: str, event: str, *args: Any) -> None:
        """Emit an event of :data:`toolkit.codecs.events.EVENTS`."""
        topics, data = encode_log(event, *args)
        self.logs.append(RawLog(address, topics, data))

    def call(self, sender: str, to: str, data: bytes, value: int = 0) -> bytes:
        """A message call from ``sender`` to ``to``: moves ``value``, runs the contract if any."""
        contract = self.state.contracts.get(to)
        if contract is None:
            self.move_native(sender, to, value)
            return b""
        return contract.execute(Message(sender, value, self), data)

    def rollback(self) -> None:
        """Undo every write of this run and forget its logs."""
        for mapping, key, old in reversed(self._journal):
            if old is _MISSING:
                mapping.pop(key, None)
            else:
                mapping[key] = old
        self._journal.clear()
        self.logs.clear()


@dataclass(frozen=True, slots=True)
class Message:
    """A message call as a contract sees it: ``msg.sender``, ``msg.value`` and the run."""

    sender: str
    value: int
    run: Execution


Handler = Callable[..., tuple[Any, ...]]


class Contract:
    """A contract: an address, code (for ``eth_getCode``) and functions by selector.

    Subclasses set ``functions`` (table key → method name) and implement :meth:`build`.
    """

    functions: ClassVar[Mapping[str, str]] = {}
    #: The table key whose gas a plain value transfer (no calldata) costs, or None: refused.
    receive: ClassVar[str | None] = None
    _selectors: ClassVar[dict[bytes, Function]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._selectors = {
            bytes.fromhex(FUNCTIONS[key].selector[2:]): FUNCTIONS[key] for key in cls.functions
        }

    def __init__(self, address: str) -> None:
        self.address = address.lower()

    @property
    def code(self) -> bytes:
        """Stand-in runtime code: non-empty, distinct per contract class."""
        return bytes.fromhex("6080604052") + keccak(text=type(self).__name__)

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        """The instances of this class that ``scenario`` deploys on ``chain_id``."""
        return ()

    def genesis(self, run: Execution) -> None:
        """Place the state this contract starts with, once every contract of the chain is
        deployed (a pool mints its reserves, the credit hub seeds its book); nothing by default."""

    def function_of(self, data: bytes) -> str:
        """The table key ``data`` calls on this contract (for gas), or ``""``."""
        if not data:
            return self.receive or ""
        fn = self._selectors.get(data[:4])
        return "" if fn is None else fn.key

    def gas(self, data: bytes) -> int:
        """Execution gas of a call with ``data`` (the ledger adds the intrinsic gas): the
        function's entry in :data:`~toolkit.world.evm.gas.EXECUTION`; a contract whose cost
        depends on its arguments (the swap router) overrides this."""
        return gas.execution(self.function_of(data))

    def execute(self, msg: Message, data: bytes) -> bytes:
        """Run ``data`` sent with ``msg``: decode by selector, check payability, call the method."""
        if not data:
            if self.receive is None:
                raise Revert()
            key, args = self.receive, {}
        else:
            fn = self._selectors.get(data[:4])
            if fn is None:
                raise Revert()
            try:
                decoded = decode_call(data, checksum=False)  # addresses lowercase
            except InvalidValue:
                raise Revert() from None
            key = fn.key
            args = decoded.args
        if msg.value and FUNCTIONS[key].mutability != "payable" and key != self.receive:
            raise Revert()
        msg.run.move_native(msg.sender, self.address, msg.value)
        handler: Handler = getattr(self, self.functions[key])
        return encode_result(key, *handler(msg, **args))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.address})"


#: Every registered contract class; each ledger deploys what their :meth:`Contract.build` give.
CONTRACT_CLASSES: list[type[Contract]] = []


def register(cls: type[Contract]) -> type[Contract]:
    """Register a contract class (a decorator): scenarios deploy its instances on every chain."""
    if cls not in CONTRACT_CLASSES:
        CONTRACT_CLASSES.append(cls)
    return cls
