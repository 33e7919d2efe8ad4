"""One simulated chain: accounts, contracts, a transaction pool and lazily produced blocks.

Blocks sit on a slot grid: block ``n`` has the timestamp ``floor(genesis + n × block_time_s)``
(Unix seconds; on a chain faster than a second several blocks share a second, as on Arbitrum),
and the latest block at time ``t`` is the last whose slot has begun. An accepted transaction
waits in the pool and is mined into the next block, once the clock reaches that block's slot
(so on Ethereum a receipt appears up to 12 s after sending, on Base 2 s); transactions in one
block run in arrival order. Nothing is stored for an empty block: an idle chain costs nothing,
and every read first mines what is due at its ``now``. Time is always passed in (no clock).

State reads (balances, calls, code) see the latest block; the pool is seen only by nonces
(``pending``). Checks at submission follow geth's pool (:mod:`.admission`). A pooled
transaction that can no longer pay when its block is mined is dropped (it never gets a
receipt). The base fee is constant per chain.

>>> from toolkit.world.evm.tokens import ERC20
>>> ledger = Ledger(8453, block_time_s=2.0, base_fee=10, genesis=1000.0)
>>> ledger.block_number(1005.0), ledger.block_timestamp(2)
(2, 1004)
"""

from __future__ import annotations

import bisect
import copy
import math
from collections.abc import Iterable, Iterator
from typing import Any, Final

from toolkit.world.evm import gas, genesis
from toolkit.world.evm.admission import Rejected, admit
from toolkit.world.evm.contracts import (
    ZERO,
    Contract,
    Execution,
    RawLog,
    Revert,
    State,
)
from toolkit.world.evm.filters import Filter, Filters, changes
from toolkit.world.evm.records import Block, CallResult, Log, Receipt, Tx, digest

__all__ = ["Ledger"]

#: Receives the priority fees (the base fee is burnt).
COINBASE: Final = "0x" + "00" * 19 + "c0"


class Ledger:
    """The state and blocks of one chain (see the module docstring for the block rules)."""

    def __init__(
        self,
        chain_id: int,
        *,
        block_time_s: float,
        base_fee: int,
        genesis: float,
        coinbase: str = COINBASE,
    ) -> None:
        self.chain_id = chain_id
        self.block_time_s = float(block_time_s)
        self.base_fee = int(base_fee)
        self.genesis = math.floor(genesis)
        self.coinbase = coinbase
        self.state = State()
        self._blocks: dict[int, Block] = {}
        self._numbers: list[int] = []  # the stored (non-empty) block numbers, ascending
        self._receipts: dict[str, Receipt] = {}
        self._pool: list[Tx] = []
        self._pool_block = 0  # the block the pool will be mined into
        self._pool_hashes: dict[str, Tx] = {}
        self._known_hashes: dict[str, int] = {}  # block hash -> number: stored or read blocks
        #: Installed ``eth_newFilter``/``eth_newBlockFilter`` filters (:mod:`.filters`).
        self.filters = Filters(chain_id)

    # -- time and blocks ------------------------------------------------------------------------

    def slot(self, now: float) -> int:
        """The number of the grid's last slot at or before ``now`` (mined or not)."""
        return max(0, math.floor((now - self.genesis) / self.block_time_s))

    def block_timestamp(self, number: int) -> int:
        """The timestamp of block ``number`` (on the slot grid)."""
        return math.floor(self.genesis + number * self.block_time_s)

    def block_number(self, now: float) -> int:
        """The latest block at ``now`` (mining the pool when its slot has come)."""
        self.mine_due(now)
        latest = self.slot(now)
        if self._numbers and self._numbers[-1] > latest:
            latest = self._numbers[-1]  # time went back under a snapshot revert
        return latest

    def next_slot_time(self, now: float) -> int:
        """When the next block after the latest at ``now`` is due."""
        return self.block_timestamp(self.block_number(now) + 1)

    def block_hash(self, number: int) -> str:
        """The hash of block ``number`` (its number and its transactions' hashes)."""
        block = self._blocks.get(number)
        if block is not None:
            return block.hash
        found = digest(
            b"toolkit block",
            self.chain_id.to_bytes(8, "big"),
            number.to_bytes(8 if number < 2**64 else 32, "big"),
        )
        self._known_hashes[found] = number
        return found

    def block(self, number: int) -> Block | None:
        """The stored block ``number``, or None when it has no transactions."""
        return self._blocks.get(number)

    def number_of(self, block_hash: str, now: float) -> int | None:
        """The number of the block with ``block_hash`` (a block seen before), or None."""
        latest = self.block_number(now)
        found = self._known_hashes.get(block_hash)
        if found is None and block_hash == self.block_hash(latest):
            found = latest
        return found if found is not None and found <= latest else None

    def blocks_between(self, first: int, last: int) -> Iterator[Block]:
        """The stored blocks with ``first <= number <= last``, ascending."""
        numbers = self._numbers
        start = bisect.bisect_left(numbers, first)
        stop = bisect.bisect_right(numbers, last)
        for number in numbers[start:stop]:
            yield self._blocks[number]

    def pending(self) -> tuple[list[Tx], int]:
        """The pooled transactions and the block they go into."""
        return list(self._pool), self._pool_block

    # -- accounts -------------------------------------------------------------------------------

    def balance(self, address: str, now: float) -> int:
        """Native balance at the latest block."""
        self.mine_due(now)
        return self.state.balances.get(address, 0)

    def nonce(self, address: str, now: float, *, pending: bool = False) -> int:
        """The account's nonce; with ``pending`` counting its pooled transactions."""
        self.mine_due(now)
        nonce = self.state.nonces.get(address, 0)
        if pending:
            nonce += sum(1 for tx in self._pool if tx.sender == address)
        return nonce

    def code(self, address: str, now: float) -> bytes:
        """The code at ``address`` (empty for an account without a contract)."""
        self.mine_due(now)
        contract = self.state.contracts.get(address)
        return b"" if contract is None else contract.code

    def contract(self, address: str) -> Contract | None:
        """The contract at ``address``, if any."""
        return self.state.contracts.get(address)

    def deploy(self, contract: Contract) -> None:
        """Place ``contract`` at its address (scenario set-up; no transaction)."""
        self.state.contracts[contract.address] = contract

    def set_balance(self, address: str, amount: int, now: float) -> None:
        """Set a native balance directly (set-up and the development namespace)."""
        self.mine_due(now)
        self.state.balances[address] = amount

    def direct(self, now: float) -> Execution:
        """An execution on the latest state whose writes are kept (set-up, deals)."""
        self.mine_due(now)
        number = self.block_number(now)
        return Execution(self.state, timestamp=self.block_timestamp(number), number=number)

    # -- calls ----------------------------------------------------------------------------------

    def gas_of(self, to: str | None, data: bytes) -> int:
        """The gas a transaction to ``to`` with ``data`` uses (intrinsic plus execution)."""
        contract = self.state.contracts.get(to) if to is not None else None
        if contract is None:
            return gas.intrinsic(data)
        return gas.intrinsic(data) + contract.gas(data)

    def call(self, sender: str, to: str | None, data: bytes, value: int, now: float) -> CallResult:
        """Run a call on the latest state and undo it (``eth_call``); :class:`Revert` if it
        reverts, :class:`Rejected` when the sender cannot pay ``value``."""
        latest = self.block_number(now)
        have = self.state.balances.get(sender, 0)
        if have < value:
            raise Rejected(
                f"insufficient funds for gas * price + value: address {sender} have {have} "
                f"want {value}"
            )
        run = Execution(self.state, timestamp=self.block_timestamp(latest + 1), number=latest + 1)
        try:
            output = run.call(sender, to or ZERO, data, value)
        finally:
            run.rollback()
        return CallResult(output, self.gas_of(to, data))

    # -- transactions ---------------------------------------------------------------------------

    def receipt(self, tx_hash: str, now: float) -> Receipt | None:
        """The receipt of a mined transaction, or None (unknown or still pooled)."""
        self.mine_due(now)
        return self._receipts.get(tx_hash)

    def transaction(self, tx_hash: str, now: float) -> tuple[Tx, Receipt | None] | None:
        """A known transaction and its receipt (None while pooled), or None if unknown."""
        self.mine_due(now)
        receipt = self._receipts.get(tx_hash)
        if receipt is not None:
            return receipt.tx, receipt
        tx = self._pool_hashes.get(tx_hash)
        return None if tx is None else (tx, None)

    def submit(self, tx: Tx, now: float) -> str:
        """Check ``tx`` as geth's pool does and pool it; :class:`Rejected` changes nothing."""
        self.mine_due(now)
        if tx.hash in self._receipts or tx.hash in self._pool_hashes:
            raise Rejected("already known")
        mine = [p for p in self._pool if p.sender == tx.sender]
        admit(tx, self.chain_id, self.base_fee, self.state.nonces.get(tx.sender, 0), mine,
              self.state.balances.get(tx.sender, 0))  # fmt: skip
        if not self._pool:
            self._pool_block = self.slot(now) + 1
            if self._numbers and self._numbers[-1] >= self._pool_block:
                self._pool_block = self._numbers[-1] + 1
        self._pool.append(tx)
        self._pool_hashes[tx.hash] = tx
        return tx.hash

    def mine_due(self, now: float) -> None:
        """Mine the pool into its block when the clock has reached that block's slot."""
        if self._pool and self._pool_block <= self.slot(now):
            self.mine()

    def mine(self) -> Block | None:
        """Mine the pool into its block now, whatever the clock (None when the pool is empty)."""
        if not self._pool:
            return None
        number = self._pool_block
        txs, self._pool = self._pool, []
        self._pool_hashes = {}
        timestamp = self.block_timestamp(number)
        # The hash covers every pooled transaction (a dropped one included): it must be known
        # before the transactions run, since their logs carry it.
        block_hash = digest(
            b"toolkit block",
            self.chain_id.to_bytes(8, "big"),
            number.to_bytes(8, "big"),
            *(bytes.fromhex(tx.hash[2:]) for tx in txs),
        )
        receipts: list[Receipt] = []
        cumulative = 0
        log_index = 0
        for tx in txs:
            if not self._payable(tx):  # checked in order: earlier ones moved nonce and funds
                continue
            index = len(receipts)
            receipt = self._run(tx, number, timestamp, block_hash, index, cumulative, log_index)
            cumulative = receipt.cumulative_gas_used
            log_index += len(receipt.logs)
            receipts.append(receipt)
            self._receipts[tx.hash] = receipt
        if not receipts:
            return None
        block = Block(number, block_hash, timestamp, tuple(receipts), cumulative, self.base_fee)
        self._blocks[number] = block
        self._numbers.append(number)
        self._known_hashes[block_hash] = number
        return block

    def seal_genesis(self, run: Execution) -> Block | None:
        """Keep the logs of the genesis set-up ``run`` as a chain would show them
        (:mod:`.genesis`): its seeded transactions (a seeded book's locks, draws and operators,
        each from its account) mined, :data:`~.genesis.SEEDED_SENDERS_PER_BLOCK` senders a
        block, into blocks 1 to K before the chain's start. The genesis moves back K + 1
        blocks, so the last of them is one block before the start and the grid's timestamps are
        unchanged (K rounded up where ``block_time_s`` is fractional). Logs before the first
        seeded transaction stay in block 0, in one transaction from the zero address. The last
        block sealed, or None when it emitted nothing."""
        if self._numbers or not run.logs:
            return None
        first = run.seeded[0][3] if run.seeded else len(run.logs)
        sealed = self._seal(0, run.logs[:first], [(ZERO, ZERO, b"", 0)]) if first else None
        groups = genesis.seeded_blocks(run)
        if not groups:
            return sealed
        shift = len(groups) + 1
        while not float(shift * self.block_time_s).is_integer():
            shift += 1
        self.genesis -= int(shift * self.block_time_s)
        for number, (logs, txs) in enumerate(groups, start=shift - len(groups)):
            sealed = self._seal(number, logs, txs)
        return sealed

    def _seal(self, number: int, raw: list[RawLog], txs: list[genesis.Seeded]) -> Block:
        block = genesis.seal_block(
            self.state.nonces,
            self.gas_of,
            chain_id=self.chain_id,
            number=number,
            timestamp=self.block_timestamp(number),
            base_fee=self.base_fee,
            raw=raw,
            txs=txs,
        )
        for receipt in block.receipts:
            self._receipts[receipt.tx.hash] = receipt
        self._blocks[number] = block
        self._numbers.append(number)
        self._known_hashes[block.hash] = number
        return block

    def _payable(self, tx: Tx) -> bool:
        return (
            self.state.nonces.get(tx.sender, 0) == tx.nonce
            and self.state.balances.get(tx.sender, 0) >= tx.max_cost
        )

    def _run(
        self,
        tx: Tx,
        number: int,
        timestamp: int,
        block_hash: str,
        index: int,
        cumulative: int,
        log_index: int,
    ) -> Receipt:
        state = self.state
        # _payable was checked just before: nonce matches and the sender can pay.
        state.nonces[tx.sender] = tx.nonce + 1
        price = tx.price(self.base_fee)
        assert tx.to is not None
        needed = self.gas_of(tx.to, tx.data)
        run = Execution(state, timestamp=timestamp, number=number)
        status, revert, used = 1, b"", needed
        if tx.gas < needed:
            status, used = 0, tx.gas  # out of gas: all of it is spent
        else:
            try:
                run.call(tx.sender, tx.to, tx.data, tx.value)
            except Revert as exc:
                run.rollback()
                status, revert = 0, exc.data
        raw_logs: list[RawLog] = run.logs if status else []
        fee = used * price
        state.balances[tx.sender] = state.balances.get(tx.sender, 0) - fee
        tip = used * (price - self.base_fee)
        if tip:
            state.balances[self.coinbase] = state.balances.get(self.coinbase, 0) + tip
        logs = tuple(
            Log(
                raw.address, raw.topics, raw.data, number, block_hash, tx.hash, index, log_index + i
            )
            for i, raw in enumerate(raw_logs)
        )
        return Receipt(
            tx, status, used, cumulative + used, price, logs, number, block_hash, index, revert
        )

    # -- logs -----------------------------------------------------------------------------------

    def logs(self, first: int, last: int) -> Iterable[Log]:
        """Every log of blocks ``first..last``, in chain order."""
        for block in self.blocks_between(first, last):
            for receipt in block.receipts:
                yield from receipt.logs

    # -- filters --------------------------------------------------------------------------------

    def install_filter(self, flt: Filter, now: float) -> str:
        """Install ``flt``, reporting from the block after the latest at ``now``; its id."""
        flt.seen = self.block_number(now)
        return self.filters.install(flt)

    def filter_changes(
        self, fid: str, now: float, limit: int | None = None
    ) -> list[Log] | list[str] | None:
        """What filter ``fid`` has not reported yet at ``now`` (:func:`.filters.changes`; with
        ``limit``, about that many items, whole blocks); None: no such filter."""
        flt = self.filters.get(fid)
        if flt is None:
            return None
        return changes(flt, self.block_number(now), self.blocks_between, self.block_hash, limit)

    # -- snapshots ------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """A copy of everything (blocks and receipts are shared: they never change)."""
        return copy.deepcopy(self.__dict__)

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Go back to a :meth:`snapshot` (which stays usable); filter ids keep counting on."""
        serial = self.filters.serial
        self.__dict__.update(copy.deepcopy(snapshot))
        self.filters.serial = max(serial, self.filters.serial)
