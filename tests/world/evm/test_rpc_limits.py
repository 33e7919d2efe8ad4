"""The dispatcher's bounds on one request's work, quantity ranges, and the anvil parity that
clients rely on (mining block counts, evm_mine's forms, impersonated accounts listed)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolkit.world.evm.rpc import limits

from .test_rpc import BOB, call, dev, fingerprint, make, ok

HUGE = 2**300


def encoded(rpc: Any, body: Any, chain: int = 8453) -> Any:
    answer = rpc.handle_bytes(chain, json.dumps(body).encode())
    return None if answer is None else json.loads(answer)


@pytest.mark.parametrize("levels", [65, 10_000, 1_000_000])
def test_deep_bodies_are_refused_naming_the_limit(levels: int) -> None:
    _, _, rpc = make()
    raw = rpc.handle_bytes(8453, b"[" * levels + b"]" * levels)
    assert raw is not None
    answer = json.loads(raw)
    assert answer["error"] == {
        "code": -32600,
        "message": "body: JSON nesting deeper than 64 levels (the limit)",
    }


def test_depth_ignores_brackets_inside_strings_and_escapes() -> None:
    text = json.dumps({"a": ["[" * 200, '\\"[[[', {"b": "{" * 100}]}).encode()
    assert not limits.depth_exceeds(text)
    assert limits.loads(text)["a"][0] == "[" * 200
    assert limits.depth_exceeds(b"[" * 64 + b"[]" + b"]" * 64)
    assert not limits.depth_exceeds(b"[" * 64 + b"]" * 64)


def test_a_batch_past_the_limit_is_refused_whole() -> None:
    _, _, rpc = make()
    request = {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId"}
    answer = encoded(rpc, [request] * 1001)
    assert answer["error"]["code"] == -32600
    assert answer["error"]["message"] == "batch too large: 1001 requests (the limit is 1000)"
    assert len(encoded(rpc, [request] * 1000)) == 1000


def test_answers_past_the_response_cap_are_errors_and_left_unrun(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("toolkit.world.evm.rpc.dispatcher.MAX_RESPONSE_BYTES", 2_000)
    base, _, rpc = make()
    batch = [
        {"jsonrpc": "2.0", "id": i, "method": "eth_getBlockByNumber", "params": ["latest", False]}
        for i in range(5)
    ] + [{"jsonrpc": "2.0", "id": 9, "method": "evm_increaseTime", "params": [10]}]
    answers = encoded(rpc, batch)
    assert "result" in answers[0]
    assert answers[-1]["error"]["code"] == -32003
    assert answers[-1]["id"] == 9
    assert "the limit is 2000 bytes" in answers[-1]["error"]["message"]
    assert rpc.clock.offset == 0  # refused past the cap: never run
    base.t += 3600
    single = encoded(rpc, {"jsonrpc": "2.0", "id": 3, "method": "eth_feeHistory", "params": [
        "0x400", "latest", [50]]})  # fmt: skip
    assert single["error"]["code"] == -32003


def test_fee_history_block_count_is_capped() -> None:
    _, _, rpc = make()
    answer = call(rpc, "eth_feeHistory", "0x401", "latest", [])
    assert answer["error"]["code"] == -32602
    assert "blockCount: must be between 1 and 1024" in answer["error"]["message"]
    assert len(ok(rpc, "eth_feeHistory", "0x400", "latest", [])["gasUsedRatio"]) <= 1024


def test_get_logs_range_and_result_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    base, _, rpc = make()
    base.t += 3 * 86_400  # Base: two-second blocks, so 129,600 of them
    wide = call(rpc, "eth_getLogs", {"fromBlock": "0x0", "toBlock": "latest"})
    assert wide["error"]["code"] == -32005
    assert "the limit is 100000" in wide["error"]["message"]
    sender, _ = dev(rpc)
    for _ in range(3):
        transfer = "0xa9059cbb" + BOB[2:].rjust(64, "0") + "1".rjust(64, "0")
        usdc = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
        ok(rpc, "eth_sendTransaction", {"from": sender, "to": usdc, "data": transfer})
    ok(rpc, "evm_mine")
    monkeypatch.setattr("toolkit.world.evm.rpc.logs.MAX_LOG_RESULTS", 2)
    many = call(rpc, "eth_getLogs", {"fromBlock": "latest"})
    assert many["error"] == {
        "code": -32005,
        "message": "query returned more than 2 results (the limit): narrow the block range or "
        "the filter",
    }


def test_a_block_filter_poll_answers_at_most_the_cap_and_keeps_the_rest() -> None:
    _, _, rpc = make()
    fid = ok(rpc, "eth_newBlockFilter", chain=42161)
    ok(rpc, "evm_increaseTime", 2_600_000, chain=42161)  # ten million quarter-second blocks
    first = ok(rpc, "eth_getFilterChanges", fid, chain=42161)
    second = ok(rpc, "eth_getFilterChanges", fid, chain=42161)
    assert len(first) == len(second) == limits.MAX_FILTER_CHANGES
    assert int(ok(rpc, "eth_getBlockByHash", second[0], False, chain=42161)["number"], 16) == (
        int(ok(rpc, "eth_getBlockByHash", first[-1], False, chain=42161)["number"], 16) + 1
    )


@pytest.mark.parametrize(
    ("method", "params", "name"),
    [
        ("evm_increaseTime", [HUGE], "seconds"),
        ("evm_increaseTime", [hex(2**1100)], "seconds"),
        ("evm_increaseTime", [2**64 - 1], "seconds"),
        ("evm_setNextBlockTimestamp", [HUGE], "timestamp"),
        ("evm_mine", [HUGE], "timestamp"),
        ("evm_mine", [{"timestamp": hex(HUGE)}], "options.timestamp"),
        ("anvil_mine", [hex(2**64)], "blocks"),
        ("anvil_setBalance", [BOB, hex(2**256)], "balance"),
        ("eth_sendTransaction", [{"from": "DEV", "to": BOB, "nonce": hex(HUGE)}], "nonce"),
        ("eth_sendTransaction", [{"from": "DEV", "to": BOB, "value": hex(2**256)}], "value"),
        ("eth_getBlockByNumber", [hex(2**64), False], "block"),
    ],
)
def test_out_of_range_quantities_are_refused_naming_them_and_change_nothing(
    method: str, params: list[Any], name: str
) -> None:
    _, clock, rpc = make()
    sender, _ = dev(rpc)
    params = json.loads(json.dumps(params).replace('"DEV"', json.dumps(sender)))
    before = fingerprint(rpc), clock.offset
    answer = encoded(rpc, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    assert answer["error"]["code"] == -32602, answer
    assert name in answer["error"]["message"]
    assert (fingerprint(rpc), clock.offset) == before
    assert ok(rpc, "eth_getBlockByNumber", "latest", False)["number"]


def test_anvil_mine_mines_the_block_count() -> None:
    _, _, rpc = make()
    for method in ("anvil_mine", "hardhat_mine"):
        start = int(ok(rpc, "eth_blockNumber"), 16)
        assert ok(rpc, method, "0x5") is None
        assert int(ok(rpc, "eth_blockNumber"), 16) == start + 5
    start = int(ok(rpc, "eth_blockNumber"), 16)
    ok(rpc, "anvil_mine")
    assert int(ok(rpc, "eth_blockNumber"), 16) == start + 1
    stamp = ok(rpc, "eth_getBlockByNumber", "latest", False)["timestamp"]
    ok(rpc, "anvil_mine", "0x2", "0x3c")  # a minute between blocks: the clock moves 2 minutes
    later = ok(rpc, "eth_getBlockByNumber", "latest", False)["timestamp"]
    assert int(later, 16) - int(stamp, 16) >= 120


def test_evm_mine_takes_anvils_and_ganaches_forms() -> None:
    _, _, rpc = make()
    start = int(ok(rpc, "eth_blockNumber"), 16)
    assert ok(rpc, "evm_mine") == "0x0"
    assert ok(rpc, "evm_mine", {"blocks": 3}) == "0x0"
    assert int(ok(rpc, "eth_blockNumber"), 16) == start + 4
    target = int(ok(rpc, "eth_getBlockByNumber", "latest", False)["timestamp"], 16) + 100
    ok(rpc, "evm_mine", {"timestamp": target, "blocks": 2})
    assert int(ok(rpc, "eth_getBlockByNumber", "latest", False)["timestamp"], 16) >= target
    ok(rpc, "evm_mine", hex(target + 100))
    assert int(ok(rpc, "eth_getBlockByNumber", "latest", False)["timestamp"], 16) >= target + 100


def test_impersonated_accounts_are_listed_until_stopped() -> None:
    _, _, rpc = make()
    listed = ok(rpc, "eth_accounts")
    ok(rpc, "anvil_impersonateAccount", BOB)
    assert ok(rpc, "eth_accounts") == [*listed, BOB]
    assert ok(rpc, "eth_accounts", chain=1) == listed  # per chain
    ok(rpc, "anvil_stopImpersonatingAccount", BOB)
    assert ok(rpc, "eth_accounts") == listed
