"""``collect chain`` against anvil, clean and behind the fault proxy: what a fifth of requests
failing costs in rows per second, and that it costs nothing in rows.

anvil (``make node``) gets Uniswap's bytecode (``deploy_uniswap``), one test token,
``--transfers`` ERC-20 transfers, one a block, then 2,000 empty blocks. The collector reads
every block's logs and headers in chunks of 100 blocks, straight from the node (for the
proxy's own cost), then through :class:`toolkit.testing.FaultProxy`: a clean pass (no faults),
then 20 % of requests failing (the default :class:`~toolkit.testing.FaultMix`: 429s with
``Retry-After: 1`` in both forms and without, 503s, timeouts held 1 s against a 0.5 s client
timeout, answers cut mid-body, garbled JSON), QuickNode's 50-block range bound refused in its
words in both passes. The retry policy allows 8 retries (the default 3 would give up on about
one run in six at this rate). Printed per pass: requests the proxy saw, faults served, ranges
refused, seconds, rows, rows per second, and whether the stored rows equal the clean pass's.
The header gives the load average (two cores shared by every job on this machine).

Run: ``.venv/bin/python bench/bench_faults.py [--transfers 600] [--seed 1]``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

from web3 import Web3
from web3.types import RPCEndpoint

from toolkit.chain.providers import PROVIDER_MESSAGES
from toolkit.client import RetryPolicy, chain_web3
from toolkit.collect import ChainCollector
from toolkit.store import Store
from toolkit.testing import FaultMix, FaultProxy, LogLimit
from toolkit.testing.anvil import AnvilUnavailable, start_anvil
from toolkit.testing.artifacts import find_artifacts
from toolkit.testing.uniswap import deploy_uniswap

TABLES = ("chain_logs", "chain_blocks", "token_transfers")
QUICKNODE = next(m for m in PROVIDER_MESSAGES if m.provider == "QuickNode" and m.kind == "range")


def _rows(store: Store) -> dict[str, list[tuple[object, ...]]]:
    return {
        t: store.query(f"SELECT * EXCLUDE (run_id) FROM {t} ORDER BY ALL").rows() for t in TABLES
    }


def _pass(url: str, last: int, mix: FaultMix, seed: int) -> tuple[dict[str, object], Store]:
    store = Store(":memory:")
    limits = [LogLimit(QUICKNODE, max_blocks=50)]
    with FaultProxy(url, mix=mix, log_limits=limits) as proxy:
        policy = RetryPolicy(error_retries=8, rng=random.Random(seed))
        w3 = chain_web3(31337, url=proxy.url, timeout=0.5, retry=policy)
        started = time.perf_counter()
        result = ChainCollector(w3, store, to_block=last, chunk=100, progress=False).run()
        seconds = time.perf_counter() - started
        w3.provider.close()  # type: ignore[attr-defined]
        faults = proxy.faults()
        requests = len(proxy.records)
    return {
        "requests": requests,
        "faults": sum(n for k, n in faults.items() if k != "refused"),
        "refused": faults.get("refused", 0),
        "seconds": seconds,
        "rows": result.rows_written,
    }, store


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transfers", type=int, default=600)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if find_artifacts() is None:
        print("skipped: Uniswap artifacts not installed (make node)")
        return 0
    try:
        node = start_anvil(args=("--gas-limit", "300000000"))
    except AnvilUnavailable as exc:
        print(f"skipped: {exc}")
        return 0
    try:
        w3 = chain_web3(31337, url=node.url, timeout=120.0)
        u = deploy_uniswap(w3)
        token = u.token()
        transfers = [
            (token.address, token.functions.transfer(
                Web3.to_checksum_address(f"0x{k + 1:040x}"), 10**18 + k)._encode_transaction_data())
            for k in range(args.transfers)
        ]  # fmt: skip
        for to, data in transfers:  # one a block
            u.send(to, data, gas=100_000)
        w3.provider.make_request(RPCEndpoint("anvil_mine"), [hex(2_000)])  # quiet blocks too
        last = w3.eth.block_number
        w3.provider.close()  # type: ignore[attr-defined]
        print(f"load average {os.getloadavg()[0]:.2f}; anvil, blocks 0..{last}, chunk 100")
        direct = Store(":memory:")
        started = time.perf_counter()
        rows = (
            ChainCollector(
                chain_web3(31337, url=node.url), direct, to_block=last, chunk=100, progress=False
            )
            .run()
            .rows_written
        )
        print(f"{'direct':<12} (no proxy) {time.perf_counter() - started:6.2f} s, {rows:>5} rows")
        clean, reference = _pass(node.url, last, FaultMix(share=0.0), args.seed)
        faulty, store = _pass(node.url, last, FaultMix(share=0.2, seed=args.seed), args.seed)
        same = _rows(store) == _rows(reference)
        for label, figures in (("clean", clean), ("20 % faults", faulty)):
            print(
                f"{label:<12} {figures['requests']:>4} requests, {figures['faults']:>3} faults, "
                f"{figures['refused']:>3} ranges refused, {figures['seconds']:6.2f} s, "
                f"{figures['rows']:>5} rows, {figures['rows'] / figures['seconds']:8,.0f} rows/s"  # type: ignore[operator]
            )
        print(f"rows under faults equal the clean pass's: {same}")
        return 0 if same else 1
    finally:
        node.stop()


if __name__ == "__main__":
    sys.exit(main())
