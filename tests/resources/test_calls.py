"""ContractCall, Calls and the two error bodies."""

from __future__ import annotations

import pytest

from toolkit.resources import (
    Calls,
    ContractCall,
    ErrorBody,
    InvalidInput,
    SwapErrorBody,
    parse,
)

from .conftest import USDC_BASE

CALL = {"chain": "8453", "to": USDC_BASE, "data": "0x095ea7b3", "value": "0"}


def test_contract_call_round_trip() -> None:
    call = parse(ContractCall, CALL)
    assert (call.chain_id, call.value_int) == (8453, 0)
    assert call.to_wire() == CALL
    assert ContractCall.model_validate(call.to_wire()) == call


def test_contract_call_normalises_caip2_chain() -> None:
    call = parse(ContractCall, {**CALL, "chain": "eip155:8453"})
    assert call.chain == "8453"
    assert call == parse(ContractCall, CALL)


def test_contract_call_value_defaults_to_zero() -> None:
    assert ContractCall(chain="1", to=USDC_BASE, data="0x").value == "0"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("chain", "0", "chain: must be a numeric chain id such as 8453 (or eip155:8453)"),
        ("chain", "08453", "chain: must be a numeric chain id such as 8453 (or eip155:8453)"),
        ("chain", 8453, "chain: must be a numeric chain id such as 8453 (or eip155:8453)"),
        ("chain", "eip155:0", "chain: chain id must not be 0"),
        ("to", "0x00", "to: must be a 0x-prefixed 20-byte hex address"),
        ("data", "095ea7b3", "data: must be 0x-prefixed hex with an even number of digits"),
        ("value", "0x0", "value: must be a string of digits"),
    ],
)
def test_contract_call_rules(field: str, value: object, message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse(ContractCall, {**CALL, field: value})
    assert str(caught.value) == message


def test_calls_may_be_empty_and_round_trip() -> None:
    assert parse(Calls, {"calls": []}).calls == []
    calls = parse(Calls, {"calls": [CALL, CALL]})
    assert Calls.model_validate(calls.to_wire()) == calls
    with pytest.raises(InvalidInput, match=r"^calls\[1\]\.to: is required$"):
        parse(Calls, {"calls": [CALL, {"chain": "1", "data": "0x"}]})
    with pytest.raises(InvalidInput, match=r"^calls: is required$"):
        parse(Calls, {})


def test_error_body() -> None:
    body = parse(ErrorBody, {"error": "no route", "debug": "pair not onboarded"})
    assert body.to_wire() == {"error": "no route", "debug": "pair not onboarded"}
    assert ErrorBody(error="x").to_wire() == {"error": "x"}
    with pytest.raises(InvalidInput, match=r"^error: is required$"):
        parse(ErrorBody, {"debug": "x"})


def test_swap_error_body() -> None:
    wire = {"code": 400, "requestId": "0x" + "0a" * 16, "error": "bad amountIn"}
    body = parse(SwapErrorBody, wire)
    assert body.request_id == "0x" + "0a" * 16
    assert body.to_wire() == wire
    with pytest.raises(InvalidInput, match=r"^requestId: must be 0x followed by 32 hex digits$"):
        parse(SwapErrorBody, {**wire, "requestId": "abc"})
    with pytest.raises(InvalidInput, match=r"^code: must be an integer$"):
        parse(SwapErrorBody, {**wire, "code": "E400"})
