"""Log and block filters end to end: web3.py's contract event filters and block filters against
the embedded service's chains, in process and over loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from eth_account import Account
from eth_typing import HexStr
from hexbytes import HexBytes
from web3 import Web3
from web3.exceptions import Web3RPCError

from toolkit.client import chain_provider, chain_web3
from toolkit.clock import VirtualClock
from toolkit.codecs import events, functions
from toolkit.scenario import load_scenario
from toolkit.server import create_app, serve_in_thread
from toolkit.testing import embedded_service
from toolkit.world.evm.accounts import dev_accounts

from .conftest import USDC

BOB = Web3.to_checksum_address("0x" + "b0" * 20)
ABI = functions.json_abi("erc20") + events.json_abi("erc20")
SCENARIO = load_scenario("default")


@pytest.fixture(params=["in-process", pytest.param("loopback", marks=pytest.mark.loopback)])
def node(request: pytest.FixtureRequest) -> Iterator[tuple[VirtualClock, Web3]]:
    """A web3 on Base of an embedded service, and the virtual clock the service reads."""
    if request.param == "in-process":
        with embedded_service(SCENARIO) as svc:
            yield svc.clock, Web3(chain_provider(svc.embedded, 8453))
        return
    clock = VirtualClock()
    with serve_in_thread(create_app(SCENARIO, clock=clock)) as url:
        w3 = chain_web3(8453, url=f"{url}/rpc/8453")
        try:
            yield clock, w3
        finally:
            w3.provider.close()  # type: ignore[attr-defined]


def _transfer(w3: Web3, amount: int) -> HexBytes:
    dev = Web3.to_checksum_address(dev_accounts(SCENARIO)[0].address)
    usdc = w3.eth.contract(address=USDC[8453], abi=ABI)
    tx = usdc.functions.transfer(BOB, amount).build_transaction(
        {"from": dev, "nonce": w3.eth.get_transaction_count(dev, "pending")}
    )
    signed = Account.sign_transaction(tx, dev_accounts(SCENARIO)[0].key.reveal())
    return w3.eth.send_raw_transaction(signed.raw_transaction)


def test_a_contract_event_filter_finds_the_transfer(node: tuple[VirtualClock, Web3]) -> None:
    clock, w3 = node
    dev = dev_accounts(SCENARIO)[0].address
    usdc = w3.eth.contract(address=USDC[8453], abi=ABI)
    earlier = _transfer(w3, 1_000_000)
    clock.advance(2)
    w3.eth.wait_for_transaction_receipt(earlier, timeout=5, poll_latency=0.01)
    start = w3.eth.block_number
    transfers = usdc.events.Transfer.create_filter(from_block=start + 1)
    to_bob = usdc.events.Transfer.create_filter(from_block=0, argument_filters={"to": BOB})
    from_bob = usdc.events.Transfer.create_filter(from_block=0, argument_filters={"from": BOB})
    blocks = w3.eth.filter("latest")
    assert transfers.get_new_entries() == [] and blocks.get_new_entries() == []

    tx_hash = _transfer(w3, 5_000_000)
    assert transfers.get_new_entries() == []  # pooled until Base's next 2 s slot
    clock.advance(2)
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash, timeout=5, poll_latency=0.01)
    (entry,) = transfers.get_new_entries()
    assert entry["event"] == "Transfer" and entry["transactionHash"] == tx_hash
    assert dict(entry["args"]) == {"from": dev, "to": BOB, "value": 5_000_000}
    assert entry["blockNumber"] == receipt["blockNumber"] > start
    assert transfers.get_new_entries() == []  # each log once
    assert [e["args"]["value"] for e in to_bob.get_new_entries()] == [5_000_000]
    assert from_bob.get_new_entries() == []
    # all entries read the filter's whole range: the earlier transfer too
    assert [e["args"]["value"] for e in to_bob.get_all_entries()] == [1_000_000, 5_000_000]
    assert [e["transactionHash"] for e in transfers.get_all_entries()] == [tx_hash]

    # the block filter saw every block since it was installed, the transfer's among them
    hashes = blocks.get_new_entries()
    assert receipt["blockHash"] in hashes
    assert len(hashes) == w3.eth.block_number - start
    assert blocks.get_new_entries() == []

    assert w3.eth.uninstall_filter(transfers.filter_id) is True
    assert w3.eth.uninstall_filter(transfers.filter_id) is False
    with pytest.raises(Web3RPCError, match="filter not found"):
        transfers.get_new_entries()
    assert blocks.filter_id is not None
    with pytest.raises(Web3RPCError, match="filter not found"):
        w3.eth.get_filter_logs(blocks.filter_id)  # a block filter has no logs


def test_a_raw_log_filter_with_topics_and_an_address_list(node: tuple[VirtualClock, Web3]) -> None:
    clock, w3 = node
    transfer = events.EVENTS["erc20.Transfer"].topic0
    bob_topic = "0x" + "00" * 12 + BOB[2:].lower()
    flt = w3.eth.filter(
        {
            "fromBlock": "latest",
            "address": [USDC[8453], BOB],
            "topics": [HexStr(transfer), None, [HexStr(bob_topic)]],
        }
    )
    tx_hash = _transfer(w3, 7)
    clock.advance(2)
    assert flt.filter_id is not None
    (log,) = w3.eth.get_filter_changes(flt.filter_id)
    assert log["transactionHash"] == tx_hash and log["topics"][2].to_0x_hex() == bob_topic
    assert w3.eth.get_filter_changes(flt.filter_id) == []
