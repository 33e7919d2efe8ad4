"""The on-chain collector against the embedded chain: exact, idempotent, resumable, and robust
to nodes that refuse large ranges, answer 5xx or time out."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from web3 import Web3
from web3.types import Wei

from toolkit.client import ChainProvider, EmbeddedService, RetryPolicy, chain_web3
from toolkit.clock import VirtualClock
from toolkit.codecs import events, functions
from toolkit.collect import CHAIN_EVENTS, ChainCollector
from toolkit.store import Store

#: Retries without waiting: the tests' fault injection needs no real backoff.
QUICK = RetryPolicy(error_base=0.0, error_cap=0.0)

USDC_BASE = Web3.to_checksum_address("0x833589fcd6edb6e08f4c7c32d4f71b54bda02913")
WETH_BASE = Web3.to_checksum_address("0x4200000000000000000000000000000000000006")
ABI = functions.json_abi("erc20", "weth") + events.json_abi("erc20", "weth")
TOPICS = [events.EVENTS[key].topic0 for keys in CHAIN_EVENTS.values() for key in keys]


@dataclass
class Node:
    service: EmbeddedService
    w3: Web3
    last: int
    expected: list[dict[str, Any]] = field(default_factory=list)
    first: int = 0  # the head before the traffic (Base's seeded book is mined before it)


def _mine(w3: Web3) -> None:
    w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def node() -> Iterator[Node]:
    service = EmbeddedService("default", env={}, clock=VirtualClock())
    w3 = chain_web3(8453, embedded=service, retry=QUICK)
    first = w3.eth.block_number
    accounts = w3.eth.accounts[:4]
    usdc = w3.eth.contract(address=USDC_BASE, abi=ABI)
    weth = w3.eth.contract(address=WETH_BASE, abi=ABI)
    for i in range(30):
        sender, receiver = accounts[i % 4], accounts[(i + 1) % 4]
        usdc.functions.transfer(receiver, 1_000_000 + i).transact({"from": sender})
        if i % 3 == 0:
            usdc.functions.approve(receiver, 2**256 - 1).transact({"from": sender})
        if i % 5 == 0:
            weth.functions.deposit().transact({"from": sender, "value": Wei(10**18 + i)})
        if i % 10 == 9:
            weth.functions.withdraw(10**17).transact({"from": sender})
        _mine(w3)
    last = w3.eth.block_number
    expected = w3.provider.make_request(
        "eth_getLogs",  # type: ignore[arg-type]
        [{"fromBlock": "0x0", "toBlock": hex(last), "topics": [TOPICS]}],
    )["result"]
    try:
        yield Node(service, w3, last, expected, first)
    finally:
        service.close()


def _keys(store: Store, table: str = "chain_logs") -> list[tuple[int, int, str]]:
    frame = store.query(
        f"SELECT block_number, log_index, tx_hash FROM {table} ORDER BY block_number, log_index"
    )
    return list(frame.iter_rows())


def _expected_keys(node: Node, topic: str | None = None) -> list[tuple[int, int, str]]:
    return [
        (int(log["blockNumber"], 16), int(log["logIndex"], 16), log["transactionHash"])
        for log in node.expected
        if topic is None or log["topics"][0] == topic
    ]


def test_collects_exactly_the_logs_of_eth_getlogs(node: Node) -> None:
    assert len(node.expected) == 30 + 10 + 6 + 3  # transfers, approvals, deposits, withdrawals
    store = Store(":memory:")
    result = ChainCollector(node.w3, store, to_block=node.last, chunk=7, progress=False).run()
    assert result.status == "completed"
    assert _keys(store) == _expected_keys(node)
    transfer = events.EVENTS["erc20.Transfer"].topic0
    assert _keys(store, "token_transfers") == _expected_keys(node, transfer)
    # the decoded values are the codec's
    frame = store.query(
        "SELECT t.from_address, t.to_address, t.amount, t.amount_text, l.topic0, l.topic1, "
        "l.topic2, l.data FROM token_transfers t JOIN chain_logs l USING (chain, block_number, "
        "log_index)"
    )
    for sender, receiver, amount, text, *topics, data in frame.iter_rows():
        decoded = events.decode_log(topics, data)
        assert decoded.args["from"].lower() == sender
        assert decoded.args["to"].lower() == receiver
        assert decoded.args["value"] == amount == int(text)
    approvals = store.query("SELECT amount, amount_text FROM token_approvals")
    assert approvals.height == 10
    assert set(approvals.iter_rows()) == {(None, str(2**256 - 1))}  # beyond HUGEINT: text only
    flows = store.query("SELECT kind, count(*) AS n FROM weth_flows GROUP BY kind ORDER BY kind")
    assert list(flows.iter_rows()) == [("deposit", 6), ("withdrawal", 3)]
    blocks = store.query("SELECT number, hash, timestamp, base_fee FROM chain_blocks")
    assert sorted(blocks["number"]) == sorted({k[0] for k in _expected_keys(node)})
    for number, block_hash, timestamp, base_fee in blocks.iter_rows():
        block = node.w3.eth.get_block(number)
        assert (block_hash, timestamp, base_fee) == (
            "0x" + block["hash"].hex().removeprefix("0x"),
            block["timestamp"],
            block["baseFeePerGas"],
        )
    assert result.rows_written == result.total_rows == sum(result.by_table.values())
    ranges = store.query("SELECT from_block, to_block FROM chain_ranges ORDER BY from_block")
    assert ranges["from_block"][0] == 0 and ranges["to_block"][-1] == node.last
    record = store.run_record(result.run_id)
    assert record["parameters"]["events"] == list(CHAIN_EVENTS)
    assert record["target_url"].startswith("http://embedded-")


def test_a_second_run_writes_nothing_new(node: Node) -> None:
    store = Store(":memory:")
    first = ChainCollector(node.w3, store, to_block=node.last, progress=False).run()
    second = ChainCollector(node.w3, store, to_block=node.last, progress=False).run()
    assert first.rows_written > 0
    assert (second.status, second.rows_written, second.total_rows) == ("completed", 0, 0)
    assert _keys(store) == _expected_keys(node)


def test_events_choose_what_is_read(node: Node) -> None:
    store = Store(":memory:")
    ChainCollector(node.w3, store, to_block=node.last, events=["deposits"], progress=False).run()
    deposit = events.EVENTS["weth.Deposit"].topic0
    assert _keys(store) == _expected_keys(node, deposit)
    assert store.query("SELECT count(*) AS n FROM token_transfers")["n"][0] == 0


def _label(fault: Any) -> str:
    if isinstance(fault, BaseException):
        return type(fault).__name__
    return str(fault["code"]) if isinstance(fault, dict) else str(fault)


class Faulty(httpx.BaseTransport):
    """The in-process transport, with faults injected by a rule on each JSON-RPC request."""

    def __init__(
        self, inner: httpx.BaseTransport, rule: Callable[[int, dict[str, Any]], Any]
    ) -> None:
        self.inner = inner
        self.rule = rule
        self.calls = 0
        self.faults: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.read())
        if isinstance(body, dict) and body.get("method") == "eth_getLogs":
            self.calls += 1
            fault = self.rule(self.calls, body)
            if fault is not None:
                self.faults.append(_label(fault))
                if isinstance(fault, BaseException):
                    raise fault
                if isinstance(fault, int):
                    return httpx.Response(fault, text="upstream unavailable")
                return httpx.Response(
                    200, json={"jsonrpc": "2.0", "id": body["id"], "error": fault}
                )
        return self.inner.handle_request(request)


def _faulty_w3(node: Node, rule: Callable[[int, dict[str, Any]], Any]) -> tuple[Web3, Faulty]:
    transport = Faulty(node.service.sync_transport(), rule)
    url = f"{node.service.base_url}/rpc/8453"
    return Web3(ChainProvider(url, transport=transport, retry=QUICK)), transport


def test_range_too_large_5xx_and_timeouts_are_survived(node: Node) -> None:
    def rule(call: int, body: dict[str, Any]) -> Any:
        query = body["params"][0]
        width = int(query["toBlock"], 16) - int(query["fromBlock"], 16) + 1
        if width > 4:
            return {"code": -32005, "message": "query returned more than 10000 results"}
        if call == 5:
            return 503
        if call == 9:
            return httpx.ReadTimeout("timed out")
        if call == 12:
            return 502
        return None

    w3, transport = _faulty_w3(node, rule)
    store = Store(":memory:")
    collector = ChainCollector(
        w3, store, from_block=node.first, to_block=node.last, chunk=64, progress=False
    )
    result = collector.run()
    assert result.status == "completed"
    assert _keys(store) == _expected_keys(node)
    assert {"503", "ReadTimeout", "502", "-32005"} <= set(transport.faults)
    assert collector.size <= 8  # halved to 4 on each refusal, grown back to 8 after successes


def test_the_chunk_grows_back_after_successes(node: Node) -> None:
    refused = {"done": False}

    def rule(call: int, body: dict[str, Any]) -> Any:
        if call == 1:  # one refusal only
            refused["done"] = True
            return {"code": -32602, "message": "eth_getLogs block range too large"}
        return None

    w3, _ = _faulty_w3(node, rule)
    store = Store(":memory:")
    collector = ChainCollector(w3, store, to_block=node.last, chunk=8, progress=False)
    assert collector.run().status == "completed"
    assert refused["done"] and collector.size == 8
    assert _keys(store) == _expected_keys(node)


def test_other_rpc_errors_fail_the_run(node: Node) -> None:
    w3, _ = _faulty_w3(node, lambda call, body: {"code": -32000, "message": "header not found"})
    store = Store(":memory:")
    with pytest.raises(Exception, match="header not found"):
        ChainCollector(w3, store, to_block=node.last, progress=False).run()
    runs = store.query("SELECT status FROM collection_runs")
    assert list(runs["status"]) == ["failed"]


def test_an_interrupted_run_resumes_without_duplicate_or_gap(node: Node) -> None:
    def rule(call: int, body: dict[str, Any]) -> Any:
        return KeyboardInterrupt() if call == 6 else None

    w3, _ = _faulty_w3(node, rule)
    store = Store(":memory:")
    first = ChainCollector(
        w3, store, from_block=node.first, to_block=node.last, chunk=3, batch_size=4, progress=False
    )
    interrupted = first.run()
    assert interrupted.status == "interrupted"
    partial = _keys(store)
    assert 0 < len(partial) < len(node.expected)
    stored_to = store.query("SELECT max(to_block) AS b FROM chain_ranges")["b"][0]
    assert stored_to is not None and stored_to < node.last
    again = ChainCollector(node.w3, store, progress=False)
    resumed = again.run(resume=interrupted.run_id)
    assert resumed.status == "completed" and resumed.run_id == interrupted.run_id
    assert _keys(store) == _expected_keys(node)  # ordered, so no duplicates either
    assert resumed.total_rows == interrupted.rows_written + resumed.rows_written
    ranges = store.query("SELECT from_block, to_block FROM chain_ranges ORDER BY from_block")
    starts, ends = list(ranges["from_block"]), list(ranges["to_block"])
    assert starts[0] == node.first and ends[-1] == node.last
    assert all(s == e + 1 for s, e in zip(starts[1:], ends[:-1], strict=True))


def test_the_node_must_serve_the_chain(node: Node) -> None:
    with pytest.raises(ValueError, match="chain: the node serves chain 8453, not 1"):
        ChainCollector(node.w3, Store(":memory:"), chain=1, progress=False).run()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"from_block": -1}, "from_block"),
        ({"from_block": 5, "to_block": 4}, "to_block"),
        ({"chunk": 0}, "chunk"),
        ({"events": ["bridges"]}, "events"),
        ({"events": []}, "events"),
    ],
)
def test_options_are_checked(node: Node, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ChainCollector(node.w3, Store(":memory:"), progress=False, **options)


# -- the command -------------------------------------------------------------------------


def run_cli(*argv: str) -> int:
    import argparse

    from toolkit.cli import collect as command

    parser = argparse.ArgumentParser(prog="toolkit collect")
    command.add_arguments(parser)
    return command.run(parser.parse_args(list(argv)))


def test_the_command_collects_a_chain_in_process(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLKIT_RPC_URL_8453", raising=False)
    db = tmp_path / "chain.duckdb"
    # Block 0 alone (Base's seeded book is in the blocks after it): a range within the head.
    argv = ("chain", "--embedded", "--chain", "8453", "--to-block", "0", "--db", str(db))
    assert run_cli(*argv, "--no-progress", "--events", "transfers,deposits", "--chunk", "10") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("run ") and out[0].endswith("(chain) completed")
    with Store(db, read_only=True) as store:
        (record,) = store.runs().iter_rows(named=True)
        assert record["kind"] == "chain" and record["target_url"].startswith("http://embedded-")
        ranges = store.query("SELECT count(*) AS n, max(to_block) AS b FROM chain_ranges")
        assert list(ranges.row(0)) == [1, 0]
        assert record["target_kind"] == "embedded"


def test_the_command_reads_the_rpc_url_from_the_environment(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLKIT_RPC_URL_8453", "http://127.0.0.1:9/v2/s3cr3t-key")
    code = run_cli("chain", "--chain", "8453", "--db", str(tmp_path / "x.duckdb"), "--no-progress")
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("toolkit collect: cannot reach the node at http://127.0.0.1:9/v2/*** (")
    assert "s3cr3t" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--chain", "0"], "argument --chain: must be an integer >= 1, got '0'"),
        (["--chain", "8453", "--from-block", "-1"], "argument --from-block: must be an integer"),
        (["--chain", "8453", "--chunk", "0"], "argument --chunk: must be an integer >= 1"),
        (
            ["--chain", "8453", "--events", "bridges"],
            "argument --events: must be a comma-separated",
        ),
    ],
)
def test_the_command_refuses_bad_options(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        run_cli("chain", *argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_a_range_beyond_the_head_is_refused_with_the_head(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "x.duckdb"
    argv = ("--embedded", "--chain", "8453", "--to-block", "99999999", "--db", str(db))
    assert run_cli("chain", *argv, "--no-progress") == 2
    err = capsys.readouterr().err
    assert re.search(r"--to-block: block 99999999 is beyond the chain head \(\d+\)", err), err
    with Store(db, read_only=True) as store:
        assert store.runs().height == 0  # refused before a run was recorded


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "--chain: required for chain"),
        (["--chain", "8453", "--from-block", "9", "--to-block", "3"], "--to-block: must be >="),
        (["--chain", "8453", "--rpc-url", "ftp://node"], "--rpc-url: must be an absolute"),
    ],
)
def test_the_command_one_line_errors(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code = run_cli("chain", "--db", str(tmp_path / "x.duckdb"), "--no-progress", *argv)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("toolkit collect: ") and message in err
