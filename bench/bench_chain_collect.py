"""On-chain collection throughput: logs decoded and stored per second by ``ChainCollector``.

Stages:
- ``decode + store``: the collector's loop over ``N_SYNTHETIC`` synthetic ``eth_getLogs``
  answers (ERC-20 transfers and approvals, WETH deposits and withdrawals, ``LOGS_PER_BLOCK``
  per block), served from memory by a web3 provider, into a temporary DuckDB file: decoding,
  row building, batched idempotent appends of ``chain_logs``, the decoded tables,
  ``chain_blocks`` (one header per block) and the ``chain_ranges`` checkpoints. No RPC cost.
- ``end to end``: the same collector through web3.py and JSON-RPC against the embedded
  service's simulated Base chain in-process (``N_REAL`` transfers sent with dev accounts).

Goal: >= 50,000 logs/s into DuckDB for the first stage. Run:
``PYTHONPATH=$PWD .venv/bin/python bench/bench_chain_collect.py [N_SYNTHETIC]``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from web3 import Web3
from web3.providers.base import JSONBaseProvider
from web3.types import RPCEndpoint, RPCResponse

from toolkit.client import EmbeddedService, chain_web3
from toolkit.clock import VirtualClock
from toolkit.codecs import events, functions
from toolkit.collect import ChainCollector
from toolkit.store import Store

N_SYNTHETIC = 1_000_000
LOGS_PER_BLOCK = 100
N_REAL = 1_000
CHUNK = 200  # blocks per eth_getLogs: 20,000 logs per answer in the synthetic chain
BATCH = 200_000  # rows written per DuckDB append (the store's ingest is fastest in large batches)
TOKEN = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
WETH = "0x4200000000000000000000000000000000000006"
KINDS = (
    ("erc20.Transfer", TOKEN, 3),
    ("erc20.Approval", TOKEN, 1),
    ("weth.Deposit", WETH, 1),
    ("weth.Withdrawal", WETH, 1),
)


def _address(i: int) -> str:
    return "0x" + (i * 2654435761 % 2**160).to_bytes(20, "big").hex()


def synthetic_logs(count: int) -> list[dict[str, Any]]:
    """``count`` logs shaped like ``eth_getLogs`` answers (hex quantities and data)."""
    mix = [k for k, _, weight in KINDS for _ in range(weight)]
    addresses = {k: a for k, a, _ in KINDS}
    logs = []
    for i in range(count):
        key = mix[i % len(mix)]
        args: list[Any] = [_address(i), _address(i + 1), i * 10**6 + 1]
        if key.startswith("weth."):
            args = [_address(i), 10**15 + i]
        topics, data = events.encode_log(key, *args)
        block, index = divmod(i, LOGS_PER_BLOCK)
        logs.append(
            {
                "address": addresses[key],
                "topics": list(topics),
                "data": data,
                "blockNumber": hex(block),
                "blockHash": "0x" + block.to_bytes(32, "big").hex(),
                "transactionHash": "0x" + i.to_bytes(32, "big").hex(),
                "transactionIndex": hex(index),
                "logIndex": hex(index),
                "removed": False,
            }
        )
    return logs


class MemoryNode(JSONBaseProvider):
    """A node answering eth_chainId, eth_blockNumber, eth_getLogs and eth_getBlockByNumber from
    a list of logs (sorted by block), with no encoding or transport."""

    def __init__(self, logs: list[dict[str, Any]]) -> None:
        super().__init__()
        self.logs = logs
        self.last = int(logs[-1]["blockNumber"], 16)

    def _answer(self, method: str, params: Any) -> Any:
        if method == "eth_chainId":
            return "0x2105"
        if method == "eth_blockNumber":
            return hex(self.last)
        if method == "eth_getLogs":
            first, last = int(params[0]["fromBlock"], 16), int(params[0]["toBlock"], 16)
            return self.logs[first * LOGS_PER_BLOCK : (last + 1) * LOGS_PER_BLOCK]
        if method == "eth_getBlockByNumber":
            number = int(params[0], 16)
            return {
                "number": hex(number),
                "hash": "0x" + number.to_bytes(32, "big").hex(),
                "parentHash": "0x" + max(0, number - 1).to_bytes(32, "big").hex(),
                "timestamp": hex(1_700_000_000 + 2 * number),
                "baseFeePerGas": hex(10**7),
                "gasUsed": hex(5_000_000),
                "gasLimit": hex(30_000_000),
                "transactions": [],
            }
        raise ValueError(method)

    def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        return {"jsonrpc": "2.0", "id": 1, "result": self._answer(method, params)}

    def make_batch_request(self, requests: list[tuple[RPCEndpoint, Any]]) -> list[RPCResponse]:
        return [self.make_request(method, params) for method, params in requests]


def decode_and_store(count: int, directory: Path) -> tuple[float, float]:
    started = time.perf_counter()
    logs = synthetic_logs(count)
    built = time.perf_counter() - started
    print(f"built {count:,} synthetic logs in {built:.1f} s")
    w3 = Web3(MemoryNode(logs))
    with Store(directory / "synthetic.duckdb") as store:
        collector = ChainCollector(w3, store, chunk=CHUNK, batch_size=BATCH, progress=False)
        started = time.perf_counter()
        result = collector.run()
        first = time.perf_counter() - started
        stored = store.query("SELECT count(*) AS n FROM chain_logs")["n"][0]
        assert result.status == "completed" and stored == count, (result, stored)
        again = ChainCollector(w3, store, chunk=CHUNK, batch_size=BATCH, progress=False)
        started = time.perf_counter()
        rerun = again.run()
        second = time.perf_counter() - started
        assert rerun.rows_written == 0
    return count / first, count / second


def end_to_end(count: int, directory: Path) -> float:
    service = EmbeddedService("default", env={}, clock=VirtualClock())
    try:
        w3 = chain_web3(8453, embedded=service)
        abi = functions.json_abi("erc20") + events.json_abi("erc20")
        usdc = w3.eth.contract(address=Web3.to_checksum_address(TOKEN), abi=abi)
        accounts = w3.eth.accounts[:4]
        started = time.perf_counter()
        for i in range(count):
            usdc.functions.transfer(accounts[(i + 1) % 4], 1 + i).transact(
                {"from": accounts[i % 4]}
            )
            if i % 50 == 49:
                w3.provider.make_request(RPCEndpoint("evm_mine"), [])
        w3.provider.make_request(RPCEndpoint("evm_mine"), [])
        print(f"sent {count:,} transfers in {time.perf_counter() - started:.1f} s")
        with Store(directory / "real.duckdb") as store:
            started = time.perf_counter()
            result = ChainCollector(w3, store, progress=False).run()
            elapsed = time.perf_counter() - started
            logs = store.query("SELECT count(*) AS n FROM chain_logs")["n"][0]
            assert result.status == "completed" and logs >= count, (result, logs)
        return logs / elapsed
    finally:
        service.close()


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else N_SYNTHETIC
    with tempfile.TemporaryDirectory() as tmp:
        first, second = decode_and_store(count, Path(tmp))
        print(f"decode + store, {count:,} logs: {first:,.0f} logs/s (goal >= 50,000)")
        print(f"decode + store again (nothing new written): {second:,.0f} logs/s")
        real = end_to_end(N_REAL, Path(tmp))
        print(f"end to end over JSON-RPC in-process, {N_REAL:,} transfers: {real:,.0f} logs/s")


if __name__ == "__main__":
    main()
