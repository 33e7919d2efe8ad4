"""The settlers' logs decoded as the chain collector stores them: every leg of a multi-leg
order, a non-address token word kept whole, amounts beyond HUGEINT kept as text, and a log of
another contract under the same topic skipped rather than failing the run."""

from __future__ import annotations

from typing import Any

from toolkit.codecs.escrow import MandateOutput, StandardOrder, order_id, to_bytes32, token_id
from toolkit.codecs.events import encode_log
from toolkit.collect.logs import log_rows

USDC_ETH = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
WETH_ETH = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"
USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
ESCROW = "0x" + "e5" * 20
SETTLER = "0x" + "5e" * 20
USER = "0x" + "11" * 20
HUGE = 2**200  # a uint256 no HUGEINT holds


def _log(address: str, topics: tuple[str, ...], data: str, index: int = 0) -> dict[str, Any]:
    return {"address": address, "topics": list(topics), "data": data, "blockNumber": "0x9",
            "logIndex": hex(index), "transactionHash": "0x" + "ab" * 32}  # fmt: skip


def _output(chain: int, token: str, amount: int) -> MandateOutput:
    return MandateOutput("0x" + "00" * 32, to_bytes32(SETTLER), chain, token, amount,
                         to_bytes32(USER))  # fmt: skip


def test_an_open_stores_the_order_and_each_of_its_legs() -> None:
    odd_token = "0x" + "ff" * 32  # not an address: kept as the whole word
    order = StandardOrder(
        USER, 7, 1, 2_000, 1_000, "0x" + "22" * 20,
        ((token_id(USDC_ETH), 5_000_000), (token_id(WETH_ETH), HUGE)),
        (_output(8453, to_bytes32(USDC_BASE), 4_990_000), _output(10, odd_token, 3)),
    )  # fmt: skip
    key = order_id(order, ESCROW)
    topics, data = encode_log("escrow.Open", bytes.fromhex(key[2:]), order.as_abi())
    tables = log_rows(1, [_log(ESCROW, topics, data)], "r1")
    (opened,) = tables["escrow_events"]
    assert (opened["event"], opened["order_id"], opened["user_address"]) == ("open", key, USER)
    assert (opened["nonce"], opened["expires"], opened["fill_deadline"]) == ("7", 2_000, 1_000)
    legs = [
        (r["leg"], r["position"], r["leg_chain"], r["token"], r["amount"], r["amount_text"])
        for r in tables["escrow_order_legs"]
    ]
    assert legs == [
        ("input", 0, 1, USDC_ETH.lower(), 5_000_000, "5000000"),
        ("input", 1, 1, WETH_ETH.lower(), None, str(HUGE)),
        ("output", 0, 8453, USDC_BASE.lower(), 4_990_000, "4990000"),
        ("output", 1, 10, odd_token, 3, "3"),
    ]
    assert {r["settler"] for r in tables["escrow_order_legs"][2:]} == {SETTLER}
    assert len(tables["chain_logs"]) == 1  # the raw log is kept as for every event


def test_finalised_refunded_and_filled_are_stored_by_order_id() -> None:
    key = bytes.fromhex("07" * 32)
    solver = bytes.fromhex(to_bytes32("0x" + "50" * 20)[2:])
    finalised = encode_log("escrow.Finalised", key, solver, solver)
    refunded = encode_log("escrow.Refunded", key)
    output = _output(8453, to_bytes32(USDC_BASE), 10**6)
    filled = encode_log("outputSettler.OutputFilled", key, solver, 1_234, output.as_abi(), 10**6)
    logs = [_log(ESCROW, *finalised, 0), _log(ESCROW, *refunded, 1), _log(SETTLER, *filled, 2)]
    tables = log_rows(8453, logs, "r1")
    assert [
        (r["event"], r.get("solver"), r.get("destination")) for r in tables["escrow_events"]
    ] == [
        ("finalised", "0x" + "50" * 20, "0x" + "50" * 20),
        ("refunded", None, None),
    ]
    (fill,) = tables["output_fills"]
    assert (fill["order_id"], fill["filled_at"], fill["token"]) == (
        "0x" + "07" * 32,
        1_234,
        USDC_BASE.lower(),
    )
    assert (fill["amount"], fill["ordered_amount"], fill["recipient"]) == (10**6, 10**6, USER)


def test_another_contracts_log_under_the_open_topic_is_skipped() -> None:
    topics, _ = encode_log("escrow.Refunded", bytes(32))
    open_topic = encode_log(
        "escrow.Open", bytes(32), StandardOrder(USER, 1, 1, 2, 1, USER, (), ()).as_abi()
    )[0][0]
    tables = log_rows(1, [_log(ESCROW, (open_topic, topics[1]), "0x1234")], "r1")
    assert len(tables["chain_logs"]) == 1
    assert not tables["escrow_events"] and not tables["escrow_order_legs"]
