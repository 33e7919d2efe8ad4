"""A seeded genesis as a real chain would show it: each set-up transaction of a genesis run
(:meth:`~toolkit.world.evm.contracts.Execution.seed_transaction`: a seeded book's locks, draws
and operators, each from its account) mined with others into blocks before the chain's start,
each with its hash, nonce, receipt and logs. Its sender's gas came with the genesis allocation
(balances are left as they were); the hashes are functions of the chain, sender and nonce, so
the blocks are the same on every run. :meth:`~toolkit.world.evm.ledger.Ledger.seal_genesis`
places the blocks on the ledger's grid.

>>> from toolkit.world.evm.contracts import RawLog
>>> log = RawLog("0x" + "ee" * 20, (), "0x")
>>> block = seal_block({}, lambda to, data: 21_000, chain_id=8453, number=1, timestamp=0,
...                    base_fee=10, raw=[log], txs=[("0x" + "aa" * 20, "0x" + "ee" * 20, b"", 0)])
>>> (receipt,) = block.receipts
>>> receipt.tx.nonce, receipt.gas_used, [log.tx_hash for log in receipt.logs] == [receipt.tx.hash]
(0, 21000, True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from toolkit.world.evm.contracts import ZERO, Execution, RawLog
from toolkit.world.evm.records import Block, Log, Receipt, Tx, digest

__all__ = ["SEEDED_SENDERS_PER_BLOCK", "Seeded", "seal_block", "seeded_blocks"]

#: How many accounts' set-up transactions share a block of a seeded genesis.
SEEDED_SENDERS_PER_BLOCK: Final = 10

#: A set-up transaction: (sender, to, data, the index of its first log).
Seeded = tuple[str, str, bytes, int]


def seeded_blocks(run: Execution) -> list[tuple[list[RawLog], list[Seeded]]]:
    """The seeded transactions of ``run`` in blocks: (the logs, the transactions with their
    first log's index within the block's logs), :data:`SEEDED_SENDERS_PER_BLOCK` senders each
    (a sender's transactions stay together in one block)."""
    groups: list[tuple[list[RawLog], list[Seeded]]] = []
    senders: set[str] = set()
    for i, (sender, to, data, start) in enumerate(run.seeded):
        stop = run.seeded[i + 1][3] if i + 1 < len(run.seeded) else len(run.logs)
        if not groups or (sender not in senders and len(senders) >= SEEDED_SENDERS_PER_BLOCK):
            groups.append(([], []))
            senders = set()
        senders.add(sender)
        logs, txs = groups[-1]
        txs.append((sender, to, data, len(logs)))
        logs.extend(run.logs[start:stop])
    return groups


def seal_block(
    nonces: dict[str, int],
    gas_of: Callable[[str, bytes], int],
    *,
    chain_id: int,
    number: int,
    timestamp: int,
    base_fee: int,
    raw: list[RawLog],
    txs: list[Seeded],
) -> Block:
    """Block ``number`` of set-up transactions ``txs`` whose logs are ``raw``, as mined and
    succeeded: each sender's nonce (in ``nonces``) moves on, each uses the gas ``gas_of`` its
    call (none for the zero address's, which stands for the genesis allocation itself)."""
    chain = chain_id.to_bytes(8, "big")
    pending: list[tuple[Tx, int]] = []
    for sender, to, data, start in txs:
        nonce = nonces.get(sender, 0)
        if sender != ZERO:
            nonces[sender] = nonce + 1
        seed = digest(
            b"toolkit genesis seeding", chain, bytes.fromhex(sender[2:]), nonce.to_bytes(8, "big")
        )
        used = gas_of(to, data) if sender != ZERO else 0
        pending.append(
            (Tx(seed, 2, chain_id, sender, nonce, to, 0, data, used, base_fee, 0), start)
        )
    block_hash = digest(
        b"toolkit block",
        chain,
        number.to_bytes(8, "big"),
        *(bytes.fromhex(tx.hash[2:]) for tx, _ in pending),
    )
    receipts: list[Receipt] = []
    cumulative = 0
    for index, (tx, start) in enumerate(pending):
        stop = pending[index + 1][1] if index + 1 < len(pending) else len(raw)
        logs = tuple(
            Log(r.address, r.topics, r.data, number, block_hash, tx.hash, index, start + i)
            for i, r in enumerate(raw[start:stop])
        )
        cumulative += tx.gas
        receipts.append(
            Receipt(tx, 1, tx.gas, cumulative, base_fee, logs, number, block_hash, index)
        )
    return Block(number, block_hash, timestamp, tuple(receipts), cumulative, base_fee)
