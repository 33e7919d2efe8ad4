"""Wire forms: blocks, transactions, receipts and logs as geth answers them, and the bloom."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from eth_utils import keccak

from toolkit.world.evm import gas
from toolkit.world.evm.records import Block, Log, Receipt, Tx
from toolkit.world.evm.rpc.params import PENDING, to_hex
from toolkit.world.evm.rpc.registry import Call

EMPTY_TRIE: Final = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421"
EMPTY_UNCLES: Final = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347"
ZERO_HASH: Final = "0x" + "00" * 32
EMPTY_BLOOM: Final = "0x" + "00" * 256


def bloom(logs: Sequence[Log]) -> str:
    """The 2048-bit bloom filter of ``logs`` (addresses and topics), as in a receipt."""
    bits = 0
    for log in logs:
        for item in (bytes.fromhex(log.address[2:]), *(bytes.fromhex(t[2:]) for t in log.topics)):
            digest = keccak(item)
            for i in (0, 2, 4):
                bits |= 1 << ((int.from_bytes(digest[i : i + 2], "big")) & 2047)
    return "0x" + bits.to_bytes(256, "big").hex()


def log_wire(log: Log) -> dict[str, Any]:
    return {
        "address": log.address,
        "topics": list(log.topics),
        "data": log.data,
        "blockNumber": to_hex(log.block_number),
        "blockHash": log.block_hash,
        "transactionHash": log.tx_hash,
        "transactionIndex": to_hex(log.tx_index),
        "logIndex": to_hex(log.log_index),
        "removed": False,
    }


def tx_wire(tx: Tx, receipt: Receipt | None, base_fee: int) -> dict[str, Any]:
    body: dict[str, Any] = {
        "hash": tx.hash,
        "type": to_hex(tx.type),
        "nonce": to_hex(tx.nonce),
        "from": tx.sender,
        "to": tx.to,
        "value": to_hex(tx.value),
        "gas": to_hex(tx.gas),
        "gasPrice": to_hex(tx.price(base_fee) if receipt is not None else tx.max_fee),
        "input": "0x" + tx.data.hex(),
        "blockHash": None if receipt is None else receipt.block_hash,
        "blockNumber": None if receipt is None else to_hex(receipt.block_number),
        "transactionIndex": None if receipt is None else to_hex(receipt.index),
        "v": to_hex(tx.v),
        "r": to_hex(tx.r),
        "s": to_hex(tx.s),
    }
    if tx.chain_id is not None:
        body["chainId"] = to_hex(tx.chain_id)
    if tx.type:
        body["accessList"] = list(tx.access_list)
        body["yParity"] = to_hex(tx.v)
    if tx.type == 2:
        body["maxFeePerGas"] = to_hex(tx.max_fee)
        body["maxPriorityFeePerGas"] = to_hex(tx.max_priority_fee)
    return body


def receipt_wire(receipt: Receipt) -> dict[str, Any]:
    tx = receipt.tx
    return {
        "transactionHash": tx.hash,
        "transactionIndex": to_hex(receipt.index),
        "blockHash": receipt.block_hash,
        "blockNumber": to_hex(receipt.block_number),
        "from": tx.sender,
        "to": tx.to,
        "cumulativeGasUsed": to_hex(receipt.cumulative_gas_used),
        "gasUsed": to_hex(receipt.gas_used),
        "effectiveGasPrice": to_hex(receipt.effective_gas_price),
        "contractAddress": None,
        "logs": [log_wire(log) for log in receipt.logs],
        "logsBloom": bloom(receipt.logs) if receipt.logs else EMPTY_BLOOM,
        "status": to_hex(receipt.status),
        "type": to_hex(tx.type),
    }


def block_wire(c: Call, number: int, full: bool) -> dict[str, Any] | None:
    ledger = c.ledger
    latest = ledger.block_number(c.now)
    pending = number == PENDING
    if pending:
        txs, number = ledger.pending()
        if not txs:
            number = latest + 1
        block: Block | None = None
    else:
        if number > latest:
            return None
        block = ledger.block(number)
        txs = [] if block is None else [r.tx for r in block.receipts]
    receipts = {} if block is None else {r.tx.hash: r for r in block.receipts}
    logs = [log for r in receipts.values() for log in r.logs]
    tx_root = (
        EMPTY_TRIE
        if not txs
        else "0x" + keccak(b"".join(bytes.fromhex(t.hash[2:]) for t in txs)).hex()
    )
    body: dict[str, Any] = {
        "number": to_hex(number),
        "hash": None if pending else ledger.block_hash(number),
        "parentHash": ZERO_HASH if number == 0 else ledger.block_hash(number - 1),
        "nonce": None if pending else "0x0000000000000000",
        "mixHash": ZERO_HASH,
        "sha3Uncles": EMPTY_UNCLES,
        "logsBloom": bloom(logs) if logs else EMPTY_BLOOM,
        "transactionsRoot": tx_root,
        "stateRoot": "0x" + keccak(b"state" + number.to_bytes(8, "big")).hex(),
        "receiptsRoot": EMPTY_TRIE if not txs else tx_root,
        "miner": None if pending else ledger.coinbase,
        "difficulty": "0x0",
        "totalDifficulty": "0x0",
        "extraData": "0x",
        "size": to_hex(600 + 120 * len(txs)),
        "gasLimit": to_hex(gas.BLOCK_GAS_LIMIT),
        "gasUsed": to_hex(0 if block is None else block.gas_used),
        "timestamp": to_hex(ledger.block_timestamp(number)),
        "baseFeePerGas": to_hex(ledger.base_fee),
        "uncles": [],
        "withdrawals": [],
        "withdrawalsRoot": EMPTY_TRIE,
        "transactions": [
            tx_wire(t, receipts.get(t.hash), ledger.base_fee) if full else t.hash for t in txs
        ],
    }
    return body
