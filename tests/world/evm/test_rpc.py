"""The pure ledger and JSON-RPC dispatcher: error paths, the dev namespace, properties."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import rlp
from eth_account import Account
from eth_utils import to_checksum_address
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.clock import OffsetClock
from toolkit.codecs.events import EVENTS
from toolkit.codecs.functions import encode_call
from toolkit.scenario import Scenario, load_scenario
from toolkit.world.evm import ERC20, Chains, Rpc
from toolkit.world.evm.accounts import NATIVE_FUNDING

T0 = 1_760_000_000.0
SCENARIO = load_scenario("default")
# Token properties need no seeded credit book (1,200 accounts, most of a chain's start-up time).
assert SCENARIO.credit is not None
NO_BOOK = dataclasses.replace(
    SCENARIO, credit=dataclasses.replace(SCENARIO.credit, book_accounts=0)
)
USDC = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
WETH = "0x4200000000000000000000000000000000000006"
BOB = "0x" + "b0" * 20
ERROR_STRING = "0x08c379a0"


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:  # a toolkit.clock.Clock: sleeping moves it
        self.t += seconds


def make(scenario: Scenario = SCENARIO) -> tuple[Clock, OffsetClock, Rpc]:
    base = Clock()
    clock = OffsetClock(base)
    return base, clock, Rpc(Chains(scenario, genesis=clock.now()), clock)


def call(rpc: Rpc, method: str, *params: Any, chain: int = 8453) -> Any:
    return rpc.handle(chain, {"jsonrpc": "2.0", "id": 7, "method": method, "params": list(params)})


def ok(rpc: Rpc, method: str, *params: Any, chain: int = 8453) -> Any:
    answer = call(rpc, method, *params, chain=chain)
    assert "error" not in answer, answer
    return answer["result"]


def fingerprint(rpc: Rpc) -> Any:
    out = []
    for cid, ledger in sorted(rpc.chains.ledgers.items()):
        tokens = {
            a: (dict(c.balances), dict(c.allowances), dict(c.supply))
            for a, c in ledger.state.contracts.items()
            if isinstance(c, ERC20)
        }
        pool, target = ledger.pending()
        out.append(
            (
                cid,
                dict(ledger.state.balances),
                dict(ledger.state.nonces),
                tokens,
                [t.hash for t in pool],
                target,
                list(ledger.blocks_between(0, 10**12)),
            )
        )
    return out


def dev(rpc: Rpc, i: int = 0) -> tuple[str, str]:
    account = rpc.chains.accounts[i]
    return account.address.lower(), account.key.reveal()


def signed(key: str, **fields: Any) -> str:
    tx: dict[str, Any] = {
        "type": 2,
        "chainId": 8453,
        "nonce": 0,
        "to": BOB,
        "value": 1,
        "gas": 21_000,
        "maxFeePerGas": 10**8,
        "maxPriorityFeePerGas": 10**6,
    }
    tx.update(fields)
    tx["to"] = to_checksum_address(tx["to"])
    if "gasPrice" in tx:
        for name in ("type", "maxFeePerGas", "maxPriorityFeePerGas"):
            tx.pop(name)
    return "0x" + bytes(Account.sign_transaction(tx, key).raw_transaction).hex()


# -- protocol errors -----------------------------------------------------------------------------


def test_protocol_errors_have_the_standard_codes() -> None:
    _, _, rpc = make()
    assert rpc.handle_bytes(8453, b"{not json") == (
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}'
    )
    assert rpc.handle(8453, {"id": 1, "method": "eth_chainId"})["error"]["code"] == -32600
    assert rpc.handle(8453, [])["error"]["code"] == -32600
    assert rpc.handle(8453, [1])[0]["error"]["code"] == -32600
    assert call(rpc, "eth_bogus")["error"]["code"] == -32601
    bad = call(rpc, "eth_getBalance", "0x12")["error"]
    assert bad["code"] == -32602 and "address" in bad["message"]
    bad = call(rpc, "eth_getBalance")["error"]
    assert bad["code"] == -32602 and "address: is required" in bad["message"]
    bad = call(rpc, "eth_getBlockByNumber", "0x01")["error"]
    assert bad["code"] == -32602 and "block" in bad["message"]
    assert rpc.handle(8453, {"jsonrpc": "2.0", "method": "eth_chainId"}) is None
    batch = rpc.handle(
        8453,
        [
            {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId"},
            {"jsonrpc": "2.0", "method": "eth_chainId"},
            {"jsonrpc": "2.0", "id": "b", "method": "net_version"},
        ],
    )
    assert batch == [
        {"jsonrpc": "2.0", "id": 1, "result": "0x2105"},
        {"jsonrpc": "2.0", "id": "b", "result": "8453"},
    ]


def test_eth_call_revert_is_code_3_with_the_reason_and_data() -> None:
    _, _, rpc = make()
    data = encode_call("erc20.transfer", BOB, 1)
    error = call(rpc, "eth_call", {"from": BOB, "to": USDC, "data": data}, "latest")["error"]
    assert error["code"] == 3
    assert error["message"] == "execution reverted: ERC20: transfer amount exceeds balance"
    assert error["data"].startswith(ERROR_STRING)
    assert (
        call(rpc, "eth_estimateGas", {"from": BOB, "to": USDC, "data": data})["error"]["code"] == 3
    )
    # WETH9 reverts without a reason
    withdraw = encode_call("weth.withdraw", 5)
    error = call(rpc, "eth_call", {"from": BOB, "to": WETH, "input": withdraw})["error"]
    assert (error["code"], error["message"], error["data"]) == (3, "execution reverted", "0x")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"chainId": 1}, "invalid chain id for signer"),
        ({"nonce": 5}, "nonce too high"),
        ({"gas": 20_000}, "intrinsic gas too low"),
        ({"gas": 40_000_000}, "exceeds block gas limit"),
        ({"maxFeePerGas": 1, "maxPriorityFeePerGas": 1}, "max fee per gas less than block base"),
        ({"maxPriorityFeePerGas": 10**9}, "max priority fee per gas higher than max fee"),
        ({"value": NATIVE_FUNDING}, "insufficient funds for gas * price + value"),
        ({"gasPrice": 10**8, "chainId": 10}, "invalid chain id for signer"),
    ],
)
def test_rejected_transactions_change_nothing(fields: dict[str, Any], message: str) -> None:
    _, _, rpc = make()
    _, key = dev(rpc)
    before = fingerprint(rpc)
    error = call(rpc, "eth_sendRawTransaction", signed(key, **fields))["error"]
    assert error["code"] == -32000
    assert error["message"].startswith(message)
    assert fingerprint(rpc) == before


def test_bad_signature_garbage_and_nonce_too_low_change_nothing() -> None:
    base, _, rpc = make()
    address, key = dev(rpc)
    ok(rpc, "eth_sendRawTransaction", signed(key))
    base.t += 2
    assert ok(rpc, "eth_getTransactionCount", address, "latest") == "0x1"
    before = fingerprint(rpc)
    error = call(rpc, "eth_sendRawTransaction", signed(key, value=2))["error"]
    assert (error["code"], error["message"].split(":")[0]) == (-32000, "nonce too low")
    # r = 0: no key recovers from it
    raw = bytes.fromhex(signed(key, nonce=1)[2:])
    items = rlp.decode(raw[1:])
    items[-2] = b"\x05"  # r = 5: no point of the curve has that x
    tampered = raw[:1] + rlp.encode(items)
    error = call(rpc, "eth_sendRawTransaction", "0x" + tampered.hex())["error"]
    assert error == {"code": -32000, "message": "invalid sender"}
    items[-2] = b"\x01"  # r = 1 recovers a stranger (whose nonce is 0, not 1)
    stranger = raw[:1] + rlp.encode(items)
    error = call(rpc, "eth_sendRawTransaction", "0x" + stranger.hex())["error"]
    assert error["message"].startswith("nonce too high") and address not in error["message"]
    error = call(rpc, "eth_sendRawTransaction", "0x02c0ffee")["error"]
    assert error["code"] == -32000
    assert fingerprint(rpc) == before


def test_unprotected_legacy_is_refused_and_eip155_legacy_is_mined() -> None:
    base, _, rpc = make()
    address, key = dev(rpc)
    legacy = signed(key, gasPrice=10**8)
    tx_hash = ok(rpc, "eth_sendRawTransaction", legacy)
    base.t += 2
    receipt = ok(rpc, "eth_getTransactionReceipt", tx_hash)
    assert (receipt["status"], receipt["type"], receipt["effectiveGasPrice"]) == (
        "0x1",
        "0x0",
        hex(10**8),
    )
    assert ok(rpc, "eth_getBalance", BOB, "latest") == "0x1"
    assert int(ok(rpc, "eth_getBalance", address, "latest"), 16) == (
        NATIVE_FUNDING - 1 - 21_000 * 10**8
    )


def test_a_reverted_transaction_keeps_only_nonce_and_gas() -> None:
    base, _, rpc = make()
    address, key = dev(rpc)
    data = encode_call("erc20.transfer", "0x" + "00" * 20, 1)  # to the zero address
    tx_hash = ok(
        rpc, "eth_sendRawTransaction", signed(key, to=USDC, value=0, gas=60_000, data=data)
    )
    base.t += 2
    receipt = ok(rpc, "eth_getTransactionReceipt", tx_hash)
    assert (receipt["status"], receipt["logs"]) == ("0x0", [])
    used, price = int(receipt["gasUsed"], 16), int(receipt["effectiveGasPrice"], 16)
    assert price == 10**7 + 10**6  # base fee + the whole tip (under the cap)
    assert int(ok(rpc, "eth_getBalance", address), 16) == NATIVE_FUNDING - used * price
    assert ok(rpc, "eth_getTransactionCount", address) == "0x1"
    token = rpc.chains.ledger(8453).contract(USDC)
    assert isinstance(token, ERC20)
    assert token.balances[address] == 10**12


def test_a_senders_transactions_in_one_block_all_run_in_nonce_order() -> None:
    base, _, rpc = make()
    address, key = dev(rpc)
    hashes = [ok(rpc, "eth_sendRawTransaction", signed(key, nonce=n)) for n in range(3)]
    assert ok(rpc, "eth_getTransactionCount", address, "pending") == "0x3"
    base.t += 2
    receipts = [ok(rpc, "eth_getTransactionReceipt", h) for h in hashes]
    assert [(r["status"], r["transactionIndex"]) for r in receipts] == [
        ("0x1", "0x0"),
        ("0x1", "0x1"),
        ("0x1", "0x2"),
    ]
    assert len({r["blockHash"] for r in receipts}) == 1
    assert ok(rpc, "eth_getBalance", BOB) == "0x3"


# -- blocks and time -----------------------------------------------------------------------------


def test_blocks_follow_the_slot_grid_and_cost_nothing_when_idle() -> None:
    base, _, rpc = make()
    assert ok(rpc, "eth_blockNumber", chain=42161) == "0x0"
    base.t += 3600
    assert int(ok(rpc, "eth_blockNumber", chain=42161), 16) == 14_400
    assert int(ok(rpc, "eth_blockNumber", chain=1), 16) == 300
    block = ok(rpc, "eth_getBlockByNumber", "latest", False, chain=1)
    assert int(block["timestamp"], 16) == int(T0) + 3600
    assert block["transactions"] == [] and block["baseFeePerGas"] == hex(5 * 10**9)
    assert ok(rpc, "eth_getBlockByNumber", "0x12d", False, chain=1) is None
    assert ok(rpc, "eth_getBlockByNumber", "earliest", False, chain=1)["number"] == "0x0"
    assert ok(rpc, "eth_getBlockByNumber", "pending", False, chain=1)["number"] == "0x12d"
    assert ok(rpc, "eth_getBlockByHash", block["hash"], False, chain=1)["number"] == "0x12c"
    assert rpc.chains.ledger(1).block(300) is None


def test_dev_namespace_time_snapshot_balances_deal_impersonation() -> None:
    _, clock, rpc = make()
    snap = ok(rpc, "evm_snapshot")
    ok(rpc, "evm_increaseTime", 100)
    assert clock.offset == 100
    ok(rpc, "anvil_setBalance", BOB, hex(10**18))
    ok(rpc, "anvil_dealERC20", BOB, USDC, hex(123))
    balance_of = encode_call("erc20.balanceOf", BOB)
    assert int(ok(rpc, "eth_call", {"to": USDC, "data": balance_of}), 16) == 123
    assert call(rpc, "eth_sendTransaction", {"from": BOB, "to": USDC})["error"] == {
        "code": -32000,
        "message": "unknown account",
    }
    ok(rpc, "anvil_impersonateAccount", BOB)
    data = encode_call("erc20.transfer", "0x" + "cc" * 20, 23)
    tx_hash = ok(rpc, "eth_sendTransaction", {"from": BOB, "to": USDC, "data": data})
    assert ok(rpc, "eth_getTransactionReceipt", tx_hash) is None
    ok(rpc, "evm_mine")
    assert ok(rpc, "eth_getTransactionReceipt", tx_hash)["status"] == "0x1"
    assert int(ok(rpc, "eth_call", {"to": USDC, "data": balance_of}), 16) == 100
    ok(rpc, "anvil_stopImpersonatingAccount", BOB)
    assert "error" in call(rpc, "eth_sendTransaction", {"from": BOB, "to": USDC, "data": data})
    assert ok(rpc, "evm_revert", snap) is True
    assert clock.offset == 0
    assert ok(rpc, "eth_getBalance", BOB) == "0x0"
    assert ok(rpc, "eth_getTransactionReceipt", tx_hash) is None
    assert ok(rpc, "evm_revert", snap) is False
    target = int(T0) + 1000
    ok(rpc, "evm_setNextBlockTimestamp", target)
    assert clock.now() == target
    assert call(rpc, "evm_setNextBlockTimestamp", target - 10)["error"]["code"] == -32000


# -- properties ----------------------------------------------------------------------------------

TRANSFERS = st.lists(
    st.tuples(
        st.integers(0, 3),  # sender: a dev account
        st.integers(0, 4),  # recipient: a dev account or BOB
        st.sampled_from([USDC, WETH]),
        st.integers(0, 3 * 10**24),  # amounts beyond a balance revert
        st.booleans(),  # transferFrom instead (needs an allowance: often reverts)
    ),
    max_size=12,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TRANSFERS)
def test_token_balances_are_conserved(transfers: list[tuple[int, int, str, int, bool]]) -> None:
    base, _, rpc = make(NO_BOOK)
    holders = [dev(rpc, i)[0] for i in range(4)] + [BOB]
    ledger = rpc.chains.ledger(8453)
    supply = {}
    for token in (USDC, WETH):
        contract = ledger.contract(token)
        assert isinstance(contract, ERC20)
        supply[token] = sum(contract.balances.values())
    for sender, recipient, token, amount, via_from in transfers:
        if via_from:
            data = encode_call("erc20.transferFrom", holders[recipient], BOB, amount)
        else:
            data = encode_call("erc20.transfer", holders[recipient], amount)
        answer = call(
            rpc, "eth_sendTransaction", {"from": holders[sender], "to": token, "data": data}
        )
        assert "result" in answer or answer["error"]["code"] == 3
        base.t += 1
    base.t += 2
    for token in (USDC, WETH):
        contract = ledger.contract(token)
        assert isinstance(contract, ERC20)
        assert sum(contract.balances.values()) == supply[token] == contract.supply["total"]
    weth = ledger.contract(WETH)
    assert isinstance(weth, ERC20)
    assert ledger.state.balances[WETH] == weth.supply["total"]


def _topic(address: str) -> str:
    return "0x" + "00" * 12 + address[2:]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    transfers=st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 2), st.sampled_from([USDC, WETH])),
        min_size=1,
        max_size=8,
    ),
    query=st.fixed_dictionaries(
        {},
        optional={
            "fromBlock": st.integers(0, 12).map(hex),
            "toBlock": st.integers(0, 12).map(hex),
            "address": st.one_of(
                st.sampled_from([USDC, WETH]), st.lists(st.sampled_from([USDC, WETH, BOB]))
            ),
            "topics": st.lists(
                st.one_of(
                    st.none(),
                    st.sampled_from(
                        [EVENTS["erc20.Transfer"].topic0, EVENTS["erc20.Approval"].topic0]
                    ),
                    st.lists(st.integers(0, 2)),
                ),
                max_size=4,
            ),
        },
    ),
)
def test_get_logs_agrees_with_a_brute_force_filter(
    transfers: list[tuple[int, int, str]], query: dict[str, Any]
) -> None:
    base, _, rpc = make(NO_BOOK)
    holders = [dev(rpc, i)[0] for i in range(3)]
    if "topics" in query:  # integer lists stand for OR-lists of holders' address topics
        query["topics"] = [
            [_topic(holders[i]) for i in t] if isinstance(t, list) else t for t in query["topics"]
        ]
    for i, (sender, recipient, token) in enumerate(transfers):
        data = encode_call(
            "erc20.approve" if i % 3 == 2 else "erc20.transfer", holders[recipient], i
        )
        ok(rpc, "eth_sendTransaction", {"from": holders[sender], "to": token, "data": data})
        base.t += 2 * (i % 2)
    base.t += 2
    everything = ok(rpc, "eth_getLogs", {"fromBlock": "earliest", "toBlock": "latest"})
    latest = int(ok(rpc, "eth_blockNumber"), 16)
    first = int(query.get("fromBlock", hex(latest)), 16)
    last = min(int(query.get("toBlock", hex(latest)), 16), latest)
    answer = call(rpc, "eth_getLogs", query)
    if first > last and first <= latest:
        assert answer["error"]["code"] == -32000
        return
    addresses = query.get("address")
    if isinstance(addresses, str):
        addresses = [addresses]

    def matches(log: dict[str, Any]) -> bool:
        if not first <= int(log["blockNumber"], 16) <= last:
            return False
        if addresses and log["address"] not in addresses:  # geth: an empty list is any
            return False
        topics = query.get("topics", [])
        if len(topics) > len(log["topics"]):
            return False
        for position, wanted in enumerate(topics):
            if wanted is None or wanted == []:
                continue
            options = wanted if isinstance(wanted, list) else [wanted]
            if log["topics"][position] not in options:
                return False
        return True

    assert answer["result"] == [log for log in everything if matches(log)]


def test_evm_mine_mines_the_pool_on_a_chain_faster_than_a_second() -> None:
    # Arbitrum's 0.25 s slots: block 1's timestamp is the genesis second itself, so the clock
    # must go to the slot's start, not to its (floored) timestamp, for the pool to be mined.
    _, clock, rpc = make(NO_BOOK)
    sender, _ = dev(rpc)
    data = encode_call("erc20.approve", BOB, 5)
    usdc = "0xaf88d065e77c8cc2239327c5edb3a432268e5831"
    tx_hash = ok(rpc, "eth_sendTransaction", {"from": sender, "to": usdc, "data": data},
                 chain=42161)  # fmt: skip
    ok(rpc, "evm_mine", chain=42161)
    assert ok(rpc, "eth_getTransactionReceipt", tx_hash, chain=42161)["status"] == "0x1"
    assert clock.offset == 0.25
