"""Fills proven before the escrow pays: the fill description, the input oracle and the escrow's
finalise, over JSON-RPC with no relay (a user, a solver and the messenger's account by hand)."""

from __future__ import annotations

from typing import Any

import pytest
from eth_abi.packed import encode_packed
from eth_utils import function_signature_to_4byte_selector, keccak

from toolkit.clock import OffsetClock, VirtualClock
from toolkit.codecs.escrow import MandateOutput, StandardOrder, order_id, to_bytes32, token_id
from toolkit.codecs.functions import encode_call
from toolkit.codecs.proofs import fill_description, payload_hash, proof_series
from toolkit.scenario import load_scenario
from toolkit.world.evm import Chains, Rpc
from toolkit.world.evm.input_oracle import ATTESTER

T0 = 1_760_000_000.0
SCENARIO = load_scenario("single-pool")
UNIT = 1_000_000_000
ESCROW = SCENARIO.chain(1).escrow.lower()
ORACLE = SCENARIO.chain(1).oracle.lower()
SETTLER = SCENARIO.chain(8453).output_settler.lower()
USDC_ETH = SCENARIO.token(1, "USDC").address.lower()
USDC_BASE = SCENARIO.token(8453, "USDC").address.lower()


def _selector(error: str) -> str:
    return "0x" + function_signature_to_4byte_selector(error).hex()


def test_the_fill_description_is_oifs_packed_encoding() -> None:
    # Outside reference: eth-abi's encodePacked of MandateOutputEncodingLib's fields.
    out = MandateOutput(
        "0x" + "01" * 32, "0x" + "02" * 32, 8453, "0x" + "03" * 32, 7, "0x" + "04" * 32,
        b"\xaa\xbb", b"\xe0" + bytes(36),
    )  # fmt: skip
    solver, key = "0x" + "05" * 32, "0x" + "06" * 32
    packed = encode_packed(
        ["bytes32", "bytes32", "uint32", "bytes32", "uint256", "bytes32", "uint16", "bytes",
         "uint16", "bytes"],
        [bytes.fromhex(solver[2:]), bytes.fromhex(key[2:]), 1_760_000_123, b"\x03" * 32, 7,
         b"\x04" * 32, 2, b"\xaa\xbb", 37, out.context],
    )  # fmt: skip
    assert fill_description(solver, key, 1_760_000_123, out) == packed
    assert payload_hash(packed) == "0x" + keccak(packed).hex()
    words = proof_series([(out, payload_hash(packed))])
    assert words == (8453).to_bytes(32, "big") + b"\x01" * 32 + b"\x02" * 32 + keccak(packed)


class Flow:
    """One chain pair under JSON-RPC: a user opens an order, a solver fills it."""

    def __init__(self) -> None:
        self.base = VirtualClock(T0)
        self.clock = OffsetClock(self.base)
        self.rpc = Rpc(Chains(SCENARIO, genesis=self.clock.now()), self.clock)
        accounts = self.rpc.chains.accounts
        self.user, self.solver = accounts[0].address.lower(), accounts[1].address.lower()
        now = int(self.clock.now())
        output = MandateOutput(
            oracle=to_bytes32(ORACLE),
            settler=to_bytes32(SETTLER),
            chain_id=8453,
            token=to_bytes32(USDC_BASE),
            amount=UNIT,
            recipient=to_bytes32(self.user),
        )
        self.order = StandardOrder(
            self.user, 1, 1, now + 3600, now + 360, ORACLE, ((token_id(USDC_ETH), UNIT),),
            (output,),
        )  # fmt: skip
        self.key = order_id(self.order, ESCROW)

    def ok(self, chain: int, method: str, *params: Any) -> Any:
        answer = self.rpc.handle(
            chain, {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
        )
        assert "error" not in answer, answer
        return answer["result"]

    def send(self, chain: int, sender: str, to: str, data: str) -> dict[str, Any]:
        tx = self.ok(chain, "eth_sendTransaction", {"from": sender, "to": to, "data": data})
        self.ok(chain, "evm_mine")
        receipt: dict[str, Any] = self.ok(chain, "eth_getTransactionReceipt", tx)
        return receipt

    def revert_data(self, chain: int, sender: str, to: str, data: str) -> str:
        answer = self.rpc.handle(
            chain,
            {"jsonrpc": "2.0", "id": 1, "method": "eth_call",
             "params": [{"from": sender, "to": to, "data": data}, "latest"]},
        )  # fmt: skip
        assert "error" in answer, answer
        data_hex: str = answer["error"].get("data", "0x")
        return data_hex

    def balance(self, chain: int, token: str, holder: str) -> int:
        return int(self.ok(chain, "eth_call", {"to": token, "data": encode_call(
            "erc20.balanceOf", holder)}), 16)  # fmt: skip

    def open(self) -> None:
        self.send(1, self.user, USDC_ETH, encode_call("erc20.approve", ESCROW, 2**256 - 1))
        assert (
            self.send(1, self.user, ESCROW, encode_call("escrow.open", self.order))["status"]
            == "0x1"
        )

    def fill(self) -> dict[str, Any]:
        self.send(8453, self.solver, USDC_BASE, encode_call("erc20.approve", SETTLER, 2**256 - 1))
        data = encode_call(
            "outputSettler.fill", self.key, self.order.outputs[0].as_abi(),
            self.order.fill_deadline, bytes.fromhex(to_bytes32(self.solver)[2:]),
        )  # fmt: skip
        return self.send(8453, self.solver, SETTLER, data)

    def finalise_call(self, timestamp: int) -> str:
        solver = bytes.fromhex(to_bytes32(self.solver)[2:])
        return encode_call(
            "escrow.finalise", self.order.as_abi(), [(timestamp, solver)], to_bytes32(self.solver),
            b"",
        )  # fmt: skip

    def attestation(self, log: dict[str, Any], sender: str = ATTESTER) -> str:
        """``receiveMessage`` of a filled event's log; ``sender`` may send it."""
        self.ok(1, "anvil_impersonateAccount", sender)
        self.ok(1, "anvil_setBalance", sender, hex(10**18))
        return encode_call(
            "inputOracle.receiveMessage", 8453, log["address"],
            [bytes.fromhex(t[2:]) for t in log["topics"]], bytes.fromhex(log["data"][2:]),
        )  # fmt: skip


def test_finalise_pays_only_once_the_fill_is_attested_on_the_origin() -> None:
    flow = Flow()
    flow.open()
    not_proven = _selector("NotProven()")
    now = int(flow.clock.now())
    # nothing was filled: the oracle holds no proof for any timestamp the solver may claim
    assert flow.revert_data(1, flow.solver, ESCROW, flow.finalise_call(now)) == not_proven
    receipt = flow.fill()
    assert receipt["status"] == "0x1"
    stamp = int(
        flow.ok(8453, "eth_getBlockByNumber", receipt["blockNumber"], False)["timestamp"], 16
    )
    # filled on Base, not yet attested on Ethereum
    assert flow.revert_data(1, flow.solver, ESCROW, flow.finalise_call(stamp)) == not_proven
    (filled,) = receipt["logs"][-1:]
    # only the messenger's account may attest (the simulation verifies no proof)
    forged = flow.attestation(filled, sender=flow.user)
    assert flow.revert_data(1, flow.user, ORACLE, forged)[:10] == _selector(
        "UnknownAttester(address)"
    )
    attested = flow.send(1, ATTESTER, ORACLE, flow.attestation(filled))
    assert attested["status"] == "0x1" and len(attested["logs"]) == 1  # OutputProven
    # a solver claiming another timestamp than the one proven is still refused
    assert flow.revert_data(1, flow.solver, ESCROW, flow.finalise_call(stamp - 1)) == not_proven
    # the user's own call is refused before any proof is read: only the solver is paid
    assert flow.revert_data(1, flow.user, ESCROW, flow.finalise_call(stamp)) == _selector(
        "NotOrderOwner()"
    )
    paid = flow.send(1, flow.solver, ESCROW, flow.finalise_call(stamp))
    assert paid["status"] == "0x1"
    assert flow.balance(1, USDC_ETH, ESCROW) == 0
    status = flow.ok(
        1, "eth_call", {"to": ESCROW, "data": encode_call("escrow.orderStatus", flow.key)}
    )
    assert int(status, 16) == 2  # Claimed
    again = flow.revert_data(1, flow.solver, ESCROW, flow.finalise_call(stamp))
    assert again == _selector("InvalidOrderStatus()")


def test_the_oracle_checks_what_it_is_given() -> None:
    flow = Flow()
    is_proven = encode_call("inputOracle.isProven", 8453, b"\x01" * 32, b"\x02" * 32, b"\x03" * 32)
    assert int(flow.ok(1, "eth_call", {"to": ORACLE, "data": is_proven}), 16) == 0
    series = encode_call("inputOracle.efficientRequireProven", bytes(127))
    data = flow.revert_data(1, flow.user, ORACLE, series)
    assert data[:10] == _selector("NotDivisible(uint256,uint256)")
    assert int(data[10:74], 16) == 127 and int(data[74:], 16) == 128
    # an empty series is proven, as OIF's is
    flow.ok(1, "eth_call", {"to": ORACLE, "data": encode_call(
        "inputOracle.efficientRequireProven", b"")})  # fmt: skip
    wrong = {"address": SETTLER, "topics": ["0x" + "11" * 32, "0x" + "22" * 32], "data": "0x"}
    data = flow.attestation(wrong)
    assert flow.revert_data(1, ATTESTER, ORACLE, data) == _selector("WrongEventSignature()")


@pytest.mark.parametrize(
    ("destination", "error"),
    [("0x" + "00" * 32, "NoDestination()"), (None, "InvalidTimestampLength()")],
)
def test_finalise_checks_its_arguments_in_oifs_order(destination: str | None, error: str) -> None:
    flow = Flow()
    flow.open()
    solver = bytes.fromhex(to_bytes32(flow.solver)[2:])
    params = [(1, solver)] if destination is not None else [(1, solver), (1, solver)]
    data = encode_call(
        "escrow.finalise", flow.order.as_abi(), params, destination or to_bytes32(flow.solver), b""
    )
    assert flow.revert_data(1, flow.solver, ESCROW, data) == _selector(error)
