"""``collect chain`` against anvil behind the fault proxy: a fifth of the requests fail (429s
with and without ``Retry-After``, 503s, timeouts, answers cut mid-body, garbled JSON) and the
node refuses ranges as QuickNode and Infura do; the stored rows are those of a clean run, and
every ``Retry-After`` was waited for. ``--max-rps`` holds the rate the proxy counts."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from web3 import Web3
from web3.types import RPCEndpoint

from tests.amm.onchain.conftest import Market
from toolkit.chain.providers import PROVIDER_MESSAGES
from toolkit.cli import main
from toolkit.client import Attempt, RetryPolicy, chain_web3
from toolkit.collect import ChainCollector
from toolkit.store import Store
from toolkit.testing import FaultMix, FaultProxy, LogLimit
from toolkit.testing.faults import FAULT_KINDS

# Held requests, Retry-After waits and paced rates: seconds of waiting, little CPU.
pytestmark = pytest.mark.wallclock

#: Every table a chain run writes, but the record of its ranges (split differently by refusals).
TABLES = (
    "chain_logs",
    "chain_blocks",
    "token_transfers",
    "token_approvals",
    "weth_flows",
    "pool_swaps",
    "pool_liquidity",
    "pool_syncs",
    "pool_flashes",
    "nft_transfers",
)
QUICKNODE = next(m for m in PROVIDER_MESSAGES if m.provider == "QuickNode" and m.kind == "range")
INFURA = next(m for m in PROVIDER_MESSAGES if m.provider == "Infura" and m.kind == "size")


def rows(store: Store, table: str) -> list[tuple[object, ...]]:
    return store.query(f"SELECT * EXCLUDE (run_id) FROM {table} ORDER BY ALL").rows()


@pytest.fixture
def busy(fresh: Market) -> Market:
    """The market, then 40 blocks of one token transfer each and 150 empty blocks."""
    u, token = fresh.uniswap, fresh.tokens[0]
    for k in range(40):
        to = Web3.to_checksum_address(f"0x{k + 1:040x}")
        u.send(token.address, token.functions.transfer(to, 10**18 + k)._encode_transaction_data())
    fresh.w3.provider.make_request(RPCEndpoint("anvil_mine"), [hex(150)])
    return fresh


def test_collect_chain_keeps_exact_rows_under_a_fifth_of_requests_failing(busy: Market) -> None:
    last = busy.w3.eth.block_number
    clean = Store(":memory:")
    ChainCollector(busy.w3, clean, to_block=last, chunk=24, progress=False).run()
    per_block = clean.query("SELECT max(n) AS n FROM (SELECT count(*) AS n FROM chain_logs "
                            "GROUP BY block_number)")["n"][0]  # fmt: skip

    # QuickNode's range bound, and Infura's result bound at the busiest block's count (a range
    # holding it and more is refused; the block alone is not)
    limits = [LogLimit(QUICKNODE, max_blocks=16), LogLimit(INFURA, max_results=per_block)]
    # A timeout holds 2 s against the client's 1 s: a real answer slowed by a loaded machine is
    # not taken for one (that adds a request and shifts the seeded draws after it).
    mix = FaultMix(share=0.2, seed=24, hold_s=2.0, retry_after_s=1)
    seen: list[Attempt] = []
    policy = RetryPolicy(
        error_retries=10, error_base=0.01, error_cap=0.05, max_delay=5.0, rng=random.Random(5)
    )
    faulted = Store(":memory:")
    with FaultProxy(busy.node.url, mix=mix, log_limits=limits) as proxy:
        w3 = chain_web3(31337, url=proxy.url, timeout=1.0, retry=policy, on_attempt=seen.append)
        result = ChainCollector(w3, faulted, to_block=last, chunk=24, progress=False).run()
        w3.provider.close()  # type: ignore[attr-defined]
    assert result.status == "completed"

    for table in TABLES:
        assert rows(faulted, table) == rows(clean, table), table
    assert len(rows(clean, "chain_logs")) > 300 and len(rows(clean, "token_transfers")) >= 40
    # Every block read exactly once, in ranges the refusals made smaller.
    ranges = faulted.query("SELECT from_block, to_block FROM chain_ranges ORDER BY from_block")
    covered = [b for lo, hi in ranges.rows() for b in range(lo, hi + 1)]
    assert covered == list(range(last + 1))
    assert max(hi - lo + 1 for lo, hi in ranges.rows()) <= 16

    served = proxy.faults()
    assert set(served) == {*FAULT_KINDS, "refused"}, served
    faulted_share = sum(n for kind, n in served.items() if kind != "refused") / len(proxy.records)
    assert 0.12 < faulted_share < 0.28
    # Each 429 with Retry-After (seconds or an HTTP date) was waited for: 1 s, where the
    # backoff alone would have waited at most 0.05 s.
    honoured = [a for a in seen if a.retry_in is not None and a.retry_in >= 1.0]
    assert len(honoured) == served["rate_limit"] + served["rate_limit_date"]
    assert all(a.status == 429 and a.retry_in == 1.0 for a in honoured)


def test_max_rps_holds_the_rate_the_node_sees(busy: Market) -> None:
    last = busy.w3.eth.block_number

    def busiest(policy: RetryPolicy) -> tuple[int, int]:
        with FaultProxy(busy.node.url, mix=FaultMix(share=0.0)) as proxy:
            w3 = chain_web3(31337, url=proxy.url, retry=policy)
            ChainCollector(w3, Store(":memory:"), to_block=last, chunk=8, progress=False).run()
            w3.provider.close()  # type: ignore[attr-defined]
            return proxy.busiest(1.0), len(proxy.records)

    unpaced, requests = busiest(RetryPolicy())
    paced, same = busiest(RetryPolicy(max_rps=8, burst=2))
    assert same == requests > 20
    assert unpaced > 10  # unpaced, anvil takes them as fast as they come
    assert paced <= 8 * 1.0 + 2


def test_the_max_rps_flag_paces_collect_chain(
    busy: Market, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    last = busy.w3.eth.block_number
    with FaultProxy(busy.node.url, mix=FaultMix(share=0.0)) as proxy:
        args = ["collect", "chain", "--chain", "31337", "--rpc-url", proxy.url, "--db",
                str(tmp_path / "chain.duckdb"), "--to-block", str(last), "--chunk", "10",
                "--max-rps", "12", "--no-progress"]  # fmt: skip
        assert main(args) == 0
        assert len(proxy.records) > 20 and proxy.busiest(1.0) <= 12 + 1
    with pytest.raises(SystemExit) as refused:
        main([*args[:-3], "--max-rps", "0", "--no-progress"])
    assert refused.value.code == 2 and "--max-rps: must be a finite number > 0" in (
        capsys.readouterr().err
    )
