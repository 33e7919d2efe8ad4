"""The records of a simulated chain's blocks: transactions as the pool holds them, mined logs,
receipts and blocks (immutable, so a ledger snapshot shares rather than copies them), and the
hash every id of the chain is derived from.

>>> digest(b"toolkit block") == digest(b"toolkit ", b"block")
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_utils import keccak

__all__ = ["Block", "CallResult", "Log", "Receipt", "Tx", "digest"]


class _Frozen:
    """Immutable records are shared, not copied, by ledger snapshots."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return self


@dataclass(frozen=True, slots=True)
class Tx(_Frozen):
    """A transaction as the pool holds it (addresses lowercase; ``to`` None: creation).

    ``type`` 0 (legacy, ``gas_price``), 1 (EIP-2930) or 2 (EIP-1559); for types 0 and 1
    ``max_fee`` and ``max_priority_fee`` both equal the gas price. ``v, r, s`` are zero for an
    unsigned transaction of the development namespace.
    """

    hash: str
    type: int
    chain_id: int | None
    sender: str
    nonce: int
    to: str | None
    value: int
    data: bytes
    gas: int
    max_fee: int
    max_priority_fee: int
    v: int = 0
    r: int = 0
    s: int = 0
    access_list: tuple[Any, ...] = ()

    def price(self, base_fee: int) -> int:
        """The effective gas price under ``base_fee``."""
        if self.type == 2:
            return base_fee + min(self.max_priority_fee, self.max_fee - base_fee)
        return self.max_fee

    @property
    def max_cost(self) -> int:
        """What the sender must hold: ``gas × max fee + value``."""
        return self.gas * self.max_fee + self.value


@dataclass(frozen=True, slots=True)
class Log(_Frozen):
    """A mined log, with its place in the chain."""

    address: str
    topics: tuple[str, ...]
    data: str
    block_number: int
    block_hash: str
    tx_hash: str
    tx_index: int
    log_index: int


@dataclass(frozen=True, slots=True)
class Receipt(_Frozen):
    """A mined transaction's outcome; ``revert`` is the revert data (status 0)."""

    tx: Tx
    status: int
    gas_used: int
    cumulative_gas_used: int
    effective_gas_price: int
    logs: tuple[Log, ...]
    block_number: int
    block_hash: str
    index: int
    revert: bytes = b""


@dataclass(frozen=True, slots=True)
class Block(_Frozen):
    """A block with transactions (empty blocks are never stored)."""

    number: int
    hash: str
    timestamp: int
    receipts: tuple[Receipt, ...]
    gas_used: int
    base_fee: int


@dataclass(frozen=True, slots=True)
class CallResult:
    """What an ``eth_call`` returned, its logs and the gas the call would use."""

    output: bytes
    gas: int


def digest(*parts: bytes) -> str:
    """The ``0x`` keccak of ``parts`` joined: transaction, block and seeding hashes."""
    return "0x" + keccak(b"".join(parts)).hex()
