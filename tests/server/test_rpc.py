"""The JSON-RPC route end to end: web3.py in-process against the embedded app's chains."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from eth_account import Account
from web3 import Web3
from web3.exceptions import ContractLogicError, TransactionNotFound, Web3RPCError
from web3.types import Wei

from toolkit.client import EmbeddedService, chain_provider
from toolkit.clock import VirtualClock
from toolkit.codecs import events, functions
from toolkit.world.evm.accounts import NATIVE_FUNDING, dev_accounts

from .conftest import USDC, WETH_BASE

BOB = Web3.to_checksum_address("0x" + "b0" * 20)
ABI = functions.json_abi("erc20", "weth") + events.json_abi("erc20", "weth")


@pytest.fixture
def node() -> Iterator[tuple[VirtualClock, EmbeddedService, Web3]]:
    clock = VirtualClock()
    service = EmbeddedService("default", env={}, clock=clock)
    try:
        yield clock, service, Web3(chain_provider(service, 8453))
    finally:
        service.close()


def test_web3_reads_signs_sends_and_finds_the_transfer(
    node: tuple[VirtualClock, EmbeddedService, Web3],
) -> None:
    clock, service, w3 = node
    dev = dev_accounts(service.app.state.service.scenario)[0]  # type: ignore[attr-defined]
    address = Web3.to_checksum_address(dev.address)
    assert w3.is_connected()
    assert w3.eth.chain_id == 8453
    assert w3.eth.get_balance(address) == NATIVE_FUNDING
    assert dev.address in w3.eth.accounts
    usdc = w3.eth.contract(address=USDC[8453], abi=ABI)
    start = usdc.functions.balanceOf(dev.address).call()
    assert start == 10**6 * 10**6
    assert (usdc.functions.symbol().call(), usdc.functions.decimals().call()) == ("USDC", 6)

    tx = usdc.functions.transfer(BOB, 5_000_000).build_transaction(
        {"from": address, "nonce": w3.eth.get_transaction_count(address)}
    )
    signed = Account.sign_transaction(tx, dev.key.reveal())
    tx_hash = w3.eth.send_raw_transaction(signed.raw_transaction)
    with pytest.raises(TransactionNotFound):
        w3.eth.get_transaction_receipt(tx_hash)  # pooled until Base's next 2 s slot
    assert w3.eth.get_transaction(tx_hash)["blockNumber"] is None
    clock.advance(2)
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash, timeout=5, poll_latency=0.01)
    assert receipt["status"] == 1
    block = w3.eth.get_block(receipt["blockNumber"], full_transactions=True)
    mined = block["transactions"][0]  # full transactions: not their hashes
    assert not isinstance(mined, bytes) and mined["hash"] == tx_hash
    assert block["timestamp"] <= clock.now()

    assert usdc.functions.balanceOf(BOB).call() == 5_000_000
    assert usdc.functions.balanceOf(dev.address).call() == start - 5_000_000
    fee = receipt["gasUsed"] * receipt["effectiveGasPrice"]
    assert w3.eth.get_balance(address) == NATIVE_FUNDING - fee

    transfer_topic = events.EVENTS["erc20.Transfer"].topic0
    logs = w3.eth.get_logs({"fromBlock": 0, "address": USDC[8453], "topics": [transfer_topic]})
    assert [log["transactionHash"] for log in logs] == [tx_hash]
    found = usdc.events.Transfer().get_logs(from_block=0, argument_filters={"from": dev.address})
    assert [(e["args"]["to"], e["args"]["value"]) for e in found] == [(BOB, 5_000_000)]
    assert usdc.events.Transfer().process_receipt(receipt)[0]["args"]["value"] == 5_000_000


def test_web3_sees_reverts_with_their_reason(
    node: tuple[VirtualClock, EmbeddedService, Web3],
) -> None:
    _clock, service, w3 = node
    usdc = w3.eth.contract(address=USDC[8453], abi=ABI)
    with pytest.raises(ContractLogicError, match="ERC20: transfer amount exceeds balance"):
        usdc.functions.transfer(BOB, 1).call({"from": BOB})
    with pytest.raises(Web3RPCError, match="nonce too low"):
        dev = dev_accounts(service.app.state.service.scenario)[0]  # type: ignore[attr-defined]
        tx = {
            "to": BOB,
            "value": 1,
            "gas": 21_000,
            "maxFeePerGas": 10**9,
            "maxPriorityFeePerGas": 1,
            "nonce": 0,
            "chainId": 8453,
        }
        w3.eth.send_raw_transaction(Account.sign_transaction(tx, dev.key.reveal()).raw_transaction)
        tx["value"] = 2  # the same nonce again, another transaction
        w3.eth.send_raw_transaction(Account.sign_transaction(tx, dev.key.reveal()).raw_transaction)


def test_wrapped_native_and_dev_sending(node: tuple[VirtualClock, EmbeddedService, Web3]) -> None:
    _clock, _service, w3 = node
    dev = w3.eth.accounts[1]  # type: ignore[misc]  # web3 types accounts as a 1-tuple
    weth = w3.eth.contract(address=Web3.to_checksum_address(WETH_BASE), abi=ABI)
    before = weth.functions.balanceOf(dev).call()
    tx_hash = weth.functions.deposit().transact({"from": dev, "value": Wei(10**18)})
    w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash, timeout=5, poll_latency=0.01)
    assert receipt["status"] == 1
    assert weth.functions.balanceOf(dev).call() == before + 10**18
    (deposit,) = weth.events.Deposit().process_receipt(receipt)
    assert deposit["args"]["wad"] == 10**18


def test_unknown_chain_is_404(node: tuple[VirtualClock, EmbeddedService, Web3]) -> None:
    _, service, _ = node
    import httpx

    with httpx.Client(transport=service.sync_transport(), base_url=service.base_url) as client:
        answer = client.post("/rpc/999", json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId"})
        assert answer.status_code == 404
        answer = client.post("/rpc/8453", content=b"{nope")
        assert answer.json()["error"]["code"] == -32700
        answer = client.post(
            "/rpc/8453", json=[{"jsonrpc": "2.0", "method": "eth_chainId"}]
        )  # only notifications
        assert answer.status_code == 204
