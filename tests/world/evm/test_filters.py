"""Log and block filters of the pure dispatcher: geth's semantics, errors, snapshots, and a
property against a brute-force filter over every log."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.codecs.events import EVENTS
from toolkit.codecs.functions import encode_call
from toolkit.world.evm import filters

from .test_rpc import BOB, SCENARIO, USDC, WETH, call, dev, make, ok

# The brute-force comparison reads every log of the chain for each example: without the
# seeded credit book (3,009 logs in 120 blocks before the start) it checks the same rules on
# the logs its own operations emit, sixty times over, in a fraction of the time.
assert SCENARIO.credit is not None
UNSEEDED = dataclasses.replace(
    SCENARIO, credit=dataclasses.replace(SCENARIO.credit, book_accounts=0)
)

TRANSFER = EVENTS["erc20.Transfer"].topic0
APPROVAL = EVENTS["erc20.Approval"].topic0


def _send(rpc: Any, sender: str, token: str, data: str) -> str:
    result: str = ok(rpc, "eth_sendTransaction", {"from": sender, "to": token, "data": data})
    return result


def test_a_log_filter_reports_new_logs_once_and_all_logs_on_request() -> None:
    base, _, rpc = make()
    alice, _ = dev(rpc)
    _send(rpc, alice, USDC, encode_call("erc20.transfer", BOB, 1))
    base.t += 2  # block 1 holds the first transfer, before the filter exists
    fid = ok(rpc, "eth_newFilter", {"fromBlock": "earliest", "address": USDC})
    assert fid.startswith("0x") and len(fid) <= 34
    assert ok(rpc, "eth_getFilterChanges", fid) == []  # only what is mined after installing
    tx = _send(rpc, alice, USDC, encode_call("erc20.transfer", BOB, 2))
    _send(rpc, alice, WETH, encode_call("erc20.transfer", BOB, 3))  # another address
    assert ok(rpc, "eth_getFilterChanges", fid) == []  # still in the pool
    ok(rpc, "evm_mine")
    (change,) = ok(rpc, "eth_getFilterChanges", fid)
    assert change["transactionHash"] == tx and change["topics"][0] == TRANSFER
    assert ok(rpc, "eth_getFilterChanges", fid) == []  # reported once
    every = ok(rpc, "eth_getFilterLogs", fid)
    assert [int(log["data"], 16) for log in every] == [1, 2]
    assert every == ok(rpc, "eth_getLogs", {"fromBlock": "earliest", "address": USDC})
    assert ok(rpc, "eth_uninstallFilter", fid) is True
    assert ok(rpc, "eth_uninstallFilter", fid) is False
    for method in ("eth_getFilterChanges", "eth_getFilterLogs"):
        assert call(rpc, method, fid)["error"] == {"code": -32000, "message": "filter not found"}


def test_a_block_filter_reports_every_new_block_hash() -> None:
    base, _, rpc = make()
    alice, _ = dev(rpc)
    start = int(ok(rpc, "eth_blockNumber"), 16)
    fid = ok(rpc, "eth_newBlockFilter")
    assert ok(rpc, "eth_getFilterChanges", fid) == []
    _send(rpc, alice, USDC, encode_call("erc20.transfer", BOB, 1))
    base.t += 7  # Base: 2 s blocks, empty ones included
    latest = int(ok(rpc, "eth_blockNumber"), 16)
    assert latest == start + 3
    hashes = [
        ok(rpc, "eth_getBlockByNumber", hex(n), False)["hash"] for n in range(start + 1, latest + 1)
    ]
    assert ok(rpc, "eth_getFilterChanges", fid) == hashes
    assert ok(rpc, "eth_getFilterChanges", fid) == []
    # the hashes are known blocks, one of them with the transfer
    assert any(ok(rpc, "eth_getBlockByHash", h, False)["transactions"] for h in hashes)
    # a block filter has no logs
    assert call(rpc, "eth_getFilterLogs", fid)["error"]["message"] == "filter not found"


def test_filter_ranges_follow_geth() -> None:
    base, _, rpc = make()
    alice, _ = dev(rpc)
    start = int(ok(rpc, "eth_blockNumber"), 16)  # Base's seeded book is mined before the start
    for amount in range(1, 5):  # blocks start+1..start+4, one transfer each
        _send(rpc, alice, USDC, encode_call("erc20.transfer", BOB, amount))
        base.t += 2
    assert ok(rpc, "eth_blockNumber") == hex(start + 4)
    bounded = ok(rpc, "eth_newFilter", {"fromBlock": hex(start + 2), "toBlock": hex(start + 5)})
    newest = ok(rpc, "eth_newFilter", {})  # latest..latest
    pending = ok(rpc, "eth_newFilter", {"fromBlock": "pending", "toBlock": "pending"})
    assert [int(x["data"], 16) for x in ok(rpc, "eth_getFilterLogs", bounded)] == [2, 3, 4]
    assert [int(x["data"], 16) for x in ok(rpc, "eth_getFilterLogs", newest)] == [4]
    for amount in (5, 6):  # blocks start+5 and start+6
        _send(rpc, alice, USDC, encode_call("erc20.transfer", BOB, amount))
        base.t += 2
    assert [int(x["data"], 16) for x in ok(rpc, "eth_getFilterChanges", bounded)] == [5]
    assert [int(x["data"], 16) for x in ok(rpc, "eth_getFilterChanges", newest)] == [5, 6]
    assert [int(x["data"], 16) for x in ok(rpc, "eth_getFilterChanges", pending)] == [5, 6]
    assert [int(x["data"], 16) for x in ok(rpc, "eth_getFilterLogs", newest)] == [6]
    for query in (
        {"fromBlock": hex(start + 3), "toBlock": hex(start + 2)},
        {"fromBlock": "latest", "toBlock": hex(start + 9)},
        {"toBlock": "earliest"},
    ):
        answer = call(rpc, "eth_newFilter", query)["error"]
        assert answer == {"code": -32000, "message": "invalid from and to block combination"}


def test_a_block_hash_filter_holds_that_block_only() -> None:
    base, _, rpc = make()
    alice, _ = dev(rpc)
    tx = _send(rpc, alice, USDC, encode_call("erc20.transfer", BOB, 1))
    base.t += 2
    block_hash = ok(rpc, "eth_getTransactionReceipt", tx)["blockHash"]
    fid = ok(rpc, "eth_newFilter", {"blockHash": block_hash, "topics": [TRANSFER]})
    _send(rpc, alice, USDC, encode_call("erc20.transfer", BOB, 2))
    base.t += 2
    assert [x["transactionHash"] for x in ok(rpc, "eth_getFilterLogs", fid)] == [tx]
    assert ok(rpc, "eth_getFilterChanges", fid) == []
    both = {"blockHash": block_hash, "fromBlock": "0x1"}
    assert call(rpc, "eth_newFilter", both)["error"]["message"] == (
        "can't specify fromBlock/toBlock with blockHash"
    )
    unknown = {"blockHash": "0x" + "ee" * 32}
    assert call(rpc, "eth_newFilter", unknown)["error"]["message"] == "unknown block"


def test_filter_parameter_errors() -> None:
    _, _, rpc = make()
    for params, name in (
        ([], "filter: is required"),
        (["0x1"], "filter: must be a filter object"),
        ([{"address": "0x12"}], "filter.address"),
        ([{"topics": [None] * 5}], "filter.topics"),
        ([{"topics": ["0x12"]}], "filter.topics[0]"),
        ([{"fromBlock": "0x01"}], "filter.fromBlock"),
        ([{"toBlock": "soon"}], "filter.toBlock"),
    ):
        error = call(rpc, "eth_newFilter", *params)["error"]
        assert error["code"] == -32602 and name in error["message"], (params, error)
    for method in ("eth_getFilterChanges", "eth_getFilterLogs", "eth_uninstallFilter"):
        error = call(rpc, method, 7)["error"]
        assert error["code"] == -32602 and "filterId" in error["message"]
        error = call(rpc, method)["error"]
        assert error["code"] == -32602 and "filterId: is required" in error["message"]
    assert call(rpc, "eth_getFilterChanges", "0xabc")["error"]["code"] == -32000
    assert len(rpc.chains.ledger(8453).filters) == 0  # nothing was installed by an error


def test_filters_belong_to_one_chain() -> None:
    _, _, rpc = make()
    fid = ok(rpc, "eth_newBlockFilter", chain=8453)
    assert call(rpc, "eth_getFilterChanges", fid, chain=1)["error"]["message"] == (
        "filter not found"
    )
    assert ok(rpc, "eth_uninstallFilter", fid, chain=1) is False
    assert ok(rpc, "eth_getFilterChanges", fid.upper().replace("0X", "0x")) == []


def test_evm_revert_takes_filters_back_with_the_chain() -> None:
    base, _, rpc = make()
    alice, _ = dev(rpc)
    kept = ok(rpc, "eth_newFilter", {"address": USDC})
    snapshot = ok(rpc, "evm_snapshot")
    later = ok(rpc, "eth_newFilter", {"address": USDC})
    _send(rpc, alice, USDC, encode_call("erc20.transfer", BOB, 1))
    base.t += 2
    assert len(ok(rpc, "eth_getFilterChanges", kept)) == 1
    assert ok(rpc, "evm_revert", snapshot) is True
    # installed after the snapshot: gone; installed before: back where it stood
    assert call(rpc, "eth_getFilterChanges", later)["error"]["message"] == "filter not found"
    assert ok(rpc, "eth_getFilterChanges", kept) == []  # the transfer was reverted too
    _send(rpc, alice, USDC, encode_call("erc20.transfer", BOB, 9))
    base.t += 2
    assert [int(x["data"], 16) for x in ok(rpc, "eth_getFilterChanges", kept)] == [9]
    # ids are never handed out twice, even after a revert
    assert ok(rpc, "eth_newBlockFilter") not in (kept, later)


def test_the_least_recently_polled_filter_goes_when_too_many_are_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(filters, "MAX_FILTERS", 3)
    _, _, rpc = make()
    first, second, third = (ok(rpc, "eth_newBlockFilter") for _ in range(3))
    ok(rpc, "eth_getFilterChanges", first)  # polled: now the most recently used
    fourth = ok(rpc, "eth_newBlockFilter")
    assert call(rpc, "eth_getFilterChanges", second)["error"]["message"] == "filter not found"
    for fid in (first, third, fourth):
        assert ok(rpc, "eth_getFilterChanges", fid) == []


# -- the property --------------------------------------------------------------------------------

_BOUNDS = st.one_of(
    st.none(),
    st.sampled_from(["latest", "earliest", "pending", "safe"]),
    st.integers(0, 14).map(hex),
)
_QUERIES = st.fixed_dictionaries(
    {},
    optional={
        "fromBlock": _BOUNDS,
        "toBlock": _BOUNDS,
        "address": st.one_of(
            st.sampled_from([USDC, WETH]), st.lists(st.sampled_from([USDC, WETH, BOB]))
        ),
        "topics": st.lists(
            st.one_of(
                st.none(), st.sampled_from([TRANSFER, APPROVAL]), st.lists(st.integers(0, 2))
            ),
            max_size=4,
        ),
    },
)
_OPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("send"),
            st.integers(0, 2),
            st.integers(0, 2),
            st.sampled_from([USDC, WETH]),
            st.booleans(),
        ),
        st.tuples(st.just("mine")),
        st.tuples(st.just("wait"), st.integers(0, 5)),
        st.tuples(st.just("poll"), st.integers(0, 7)),
        st.tuples(st.just("install"), _QUERIES),
        st.tuples(st.just("blocks")),
    ),
    min_size=1,
    max_size=30,
)


def _bound(value: str | None) -> int | None:
    if value is None or value in ("latest", "pending", "safe"):
        return None
    return 0 if value == "earliest" else int(value, 16)


def _topic(address: str) -> str:
    return "0x" + "00" * 12 + address[2:]


def _matches(log: dict[str, Any], query: dict[str, Any], lo: int, hi: int) -> bool:
    """The brute-force filter: the block range, then geth's address and topic rules."""
    if not lo <= int(log["blockNumber"], 16) <= hi:
        return False
    addresses = query.get("address")
    addresses = [addresses] if isinstance(addresses, str) else addresses
    if addresses and log["address"] not in addresses:  # an empty list is any address
        return False
    topics = query.get("topics", [])
    if len(topics) > len(log["topics"]):
        return False
    return all(
        wanted in (None, [])
        or log["topics"][i] in (wanted if isinstance(wanted, list) else [wanted])
        for i, wanted in enumerate(topics)
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_OPS)
def test_filter_changes_agree_with_a_brute_force_filter(ops: list[tuple[Any, ...]]) -> None:
    base, _, rpc = make(UNSEEDED)
    holders = [dev(rpc, i)[0] for i in range(3)]
    installed: list[dict[str, Any]] = []  # id, query, bounds, the block at install, changes
    for step, op in enumerate(ops):
        if op[0] == "send":
            _, sender, recipient, token, approve = op
            name = "erc20.approve" if approve else "erc20.transfer"
            _send(rpc, holders[sender], token, encode_call(name, holders[recipient], step))
        elif op[0] == "mine":
            ok(rpc, "evm_mine")
        elif op[0] == "wait":
            base.t += op[1]
        elif op[0] == "poll" and installed:
            entry = installed[op[1] % len(installed)]
            entry["changes"] += ok(rpc, "eth_getFilterChanges", entry["id"])
        elif op[0] in ("install", "blocks"):
            query = dict(op[1]) if op[0] == "install" else None
            if query is not None and "topics" in query:  # integers: OR-lists of holder topics
                query["topics"] = [
                    [_topic(holders[i]) for i in t] if isinstance(t, list) else t
                    for t in query["topics"]
                ]
            at = int(ok(rpc, "eth_blockNumber"), 16)
            if query is None:
                fid = ok(rpc, "eth_newBlockFilter")
                installed.append({"id": fid, "query": None, "at": at, "changes": []})
                continue
            first, last = _bound(query.get("fromBlock")), _bound(query.get("toBlock"))
            answer = call(rpc, "eth_newFilter", query)
            if last is not None and (first is None or last < first):
                assert answer["error"]["message"] == "invalid from and to block combination"
                continue
            entry = {"id": answer["result"], "query": query, "at": at, "changes": []}
            installed.append({**entry, "first": first, "last": last})
    base.t += 13  # the pool is mined
    latest = int(ok(rpc, "eth_blockNumber"), 16)
    everything = ok(rpc, "eth_getLogs", {"fromBlock": "earliest", "toBlock": "latest"})
    for entry in installed:
        entry["changes"] += ok(rpc, "eth_getFilterChanges", entry["id"])
        query = entry["query"]
        if query is None:
            hashes = [
                ok(rpc, "eth_getBlockByNumber", hex(n), False)["hash"]
                for n in range(entry["at"] + 1, latest + 1)
            ]
            assert entry["changes"] == hashes
            continue
        first, last = entry["first"], entry["last"]
        lo = entry["at"] + 1 if first is None else max(first, entry["at"] + 1)
        hi = latest if last is None else last
        assert entry["changes"] == [log for log in everything if _matches(log, query, lo, hi)]
        lo = latest if first is None else first
        hi = latest if last is None else min(last, latest)
        assert ok(rpc, "eth_getFilterLogs", entry["id"]) == [
            log for log in everything if _matches(log, query, lo, hi)
        ]
