"""The rebalancing bridge: a burn on send, a mint on delivery by its relayer only, once."""

from __future__ import annotations

from typing import Any

from toolkit.clock import OffsetClock, VirtualClock
from toolkit.codecs.events import EVENTS
from toolkit.codecs.functions import encode_call
from toolkit.scenario import load_scenario
from toolkit.world.evm import Chains, Rpc
from toolkit.world.evm.bridge import BRIDGE, BRIDGE_FEES, BRIDGE_RELAYER

SCENARIO = load_scenario("single-pool")
USDC_ETH = SCENARIO.token(1, "USDC").address.lower()
USDC_BASE = SCENARIO.token(8453, "USDC").address.lower()
UNIT = 1_000_000_000


class _Chains:
    def __init__(self) -> None:
        clock = OffsetClock(VirtualClock(1_760_000_000.0))
        self.rpc = Rpc(Chains(SCENARIO, genesis=clock.now()), clock)
        self.sender = self.rpc.chains.accounts[0].address.lower()
        for chain in (1, 8453):
            self.ok(chain, "anvil_impersonateAccount", BRIDGE_RELAYER)
            self.ok(chain, "anvil_setBalance", BRIDGE_RELAYER, hex(10**18))

    def ok(self, chain: int, method: str, *params: Any) -> Any:
        answer = self.rpc.handle(
            chain, {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
        )
        assert "error" not in answer, answer
        return answer["result"]

    def error(self, chain: int, sender: str, to: str, data: str) -> str:
        call = {"from": sender, "to": to, "data": data}
        answer = self.rpc.handle(
            chain, {"jsonrpc": "2.0", "id": 1, "method": "eth_call", "params": [call, "latest"]}
        )
        message: str = answer["error"]["message"]
        return message

    def send(self, chain: int, sender: str, to: str, data: str) -> dict[str, Any]:
        tx = self.ok(chain, "eth_sendTransaction", {"from": sender, "to": to, "data": data})
        self.ok(chain, "evm_mine")
        receipt: dict[str, Any] = self.ok(chain, "eth_getTransactionReceipt", tx)
        return receipt

    def view(self, chain: int, to: str, key: str, *args: Any) -> int:
        return int(self.ok(chain, "eth_call", {"to": to, "data": encode_call(key, *args)}), 16)


def test_a_transfer_burns_on_send_and_mints_once_on_delivery() -> None:
    c = _Chains()
    supply = c.view(1, USDC_ETH, "erc20.totalSupply") + c.view(8453, USDC_BASE, "erc20.totalSupply")
    c.send(1, c.sender, USDC_ETH, encode_call("erc20.approve", BRIDGE, 2**256 - 1))
    sent = c.send(1, c.sender, BRIDGE, encode_call("bridge.send", USDC_ETH, UNIT, 8453, c.sender))
    assert sent["status"] == "0x1"
    (event,) = [e for e in sent["logs"] if e["topics"][0] == EVENTS["bridge.TransferSent"].topic0]
    assert int(event["topics"][1], 16) == 1  # the bridge numbers its transfers
    in_flight = c.view(1, BRIDGE, "bridge.sentTotal", USDC_ETH)
    assert in_flight == UNIT and c.view(1, USDC_ETH, "erc20.balanceOf", BRIDGE) == 0
    total = c.view(1, USDC_ETH, "erc20.totalSupply") + c.view(8453, USDC_BASE, "erc20.totalSupply")
    assert total + in_flight == supply  # burnt: carried, not held

    deliver = encode_call("bridge.deliver", 1, 1, USDC_BASE, UNIT, 10**5, c.sender)
    assert c.error(8453, c.sender, BRIDGE, deliver).endswith("bridge: only the relayer delivers")
    too_dear = encode_call("bridge.deliver", 1, 1, USDC_BASE, UNIT, UNIT + 1, c.sender)
    assert c.error(8453, BRIDGE_RELAYER, BRIDGE, too_dear).endswith("bridge: fee above the amount")
    before = c.view(8453, USDC_BASE, "erc20.balanceOf", c.sender)
    assert c.send(8453, BRIDGE_RELAYER, BRIDGE, deliver)["status"] == "0x1"
    assert c.view(8453, USDC_BASE, "erc20.balanceOf", c.sender) == before + UNIT - 10**5
    assert c.view(8453, USDC_BASE, "erc20.balanceOf", BRIDGE_FEES) == 10**5
    assert c.view(8453, BRIDGE, "bridge.deliveredTotal", USDC_BASE) == UNIT
    after = c.view(1, USDC_ETH, "erc20.totalSupply") + c.view(8453, USDC_BASE, "erc20.totalSupply")
    assert after == supply
    assert "already delivered" in c.error(8453, BRIDGE_RELAYER, BRIDGE, deliver)


def test_send_refuses_what_it_cannot_carry() -> None:
    c = _Chains()
    poor = "0x" + "77" * 20
    c.ok(1, "anvil_impersonateAccount", poor)
    c.ok(1, "anvil_setBalance", poor, hex(10**18))
    same_chain = encode_call("bridge.send", USDC_ETH, UNIT, 1, c.sender)
    assert c.error(1, c.sender, BRIDGE, same_chain).endswith("dstChain must be another chain")
    unapproved = encode_call("bridge.send", USDC_ETH, UNIT, 8453, c.sender)
    assert c.error(1, poor, BRIDGE, unapproved).endswith("ERC20: insufficient allowance")
    not_a_token = encode_call("bridge.send", "0x" + "99" * 20, UNIT, 8453, c.sender)
    assert "is not a token of this chain" in c.error(1, c.sender, BRIDGE, not_a_token)
