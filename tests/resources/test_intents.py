"""Partner-intents resources: rules, wire names and round trips."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.codecs import erc7930
from toolkit.resources import (
    FAILURE_HANDLING,
    PROVIDER,
    Input,
    InvalidInput,
    Metadata,
    OrderOverrides,
    Output,
    Preview,
    Quote,
    RfqQuery,
    RfqResponse,
    TransactionRequest,
    parse,
    parse_query,
)

from .conftest import ESCROW, FILLER, PAYER, USDC_ARBITRUM, USDC_BASE, interop


def first_error(model: Any, data: Any) -> str:
    with pytest.raises(InvalidInput) as caught:
        parse(model, data)
    return str(caught.value)


def test_quote_parses_and_exposes_typed_values(quote_wire: dict[str, Any]) -> None:
    quote = parse(Quote, quote_wire)
    assert quote.quote_id == "q-1"
    assert quote.provider == PROVIDER
    assert quote.failure_handling == FAILURE_HANDLING
    assert quote.preview.origin_chain_id == 8453
    item = quote.preview.inputs[0]
    assert (item.chain_id, item.user_address, item.asset_address) == (8453, PAYER, USDC_BASE)
    assert item.amount_int == 10_000_000
    out = quote.preview.outputs[0]
    assert (out.chain_id, out.receiver_address, out.asset_address) == (42161, PAYER, USDC_ARBITRUM)
    assert quote.order is not None and quote.order.nonce_int == 7
    assert quote.transaction_request is not None
    assert quote.transaction_request.from_ == PAYER
    assert quote.transaction_request.value_int == 0


def test_quote_wire_round_trip(quote_wire: dict[str, Any]) -> None:
    quote = parse(Quote, quote_wire)
    wire = quote.to_wire()
    assert wire == quote_wire
    assert Quote.model_validate(wire) == quote


def test_transaction_request_wire_name_is_from() -> None:
    tx = TransactionRequest(from_=PAYER, to=ESCROW, chain_id=1, data="0x")
    wire = tx.to_wire()
    assert wire["from"] == PAYER and "from_" not in wire
    assert wire["value"] == "0x0"
    assert TransactionRequest.model_validate(wire) == tx


def test_quote_with_preview_only_is_valid(quote_wire: dict[str, Any]) -> None:
    quote = parse(Quote, {"preview": quote_wire["preview"]})
    assert quote.quote_id is None and quote.transaction_request is None
    assert quote.to_wire() == {"preview": quote_wire["preview"]}


def test_unknown_quote_members_are_ignored(quote_wire: dict[str, Any]) -> None:
    quote_wire["somethingNew"] = {"x": 1}
    assert "somethingNew" not in parse(Quote, quote_wire).to_wire()


def test_preview_is_required() -> None:
    assert first_error(Quote, {"quoteId": "x"}) == "preview: is required"


def test_preview_needs_inputs_and_outputs(quote_wire: dict[str, Any]) -> None:
    quote_wire["preview"]["inputs"] = []
    assert first_error(Quote, quote_wire) == "preview.inputs: must hold at least one item"
    quote_wire["preview"]["outputs"] = []
    with pytest.raises(InvalidInput) as caught:
        parse(Quote, quote_wire)
    assert [e.field for e in caught.value.errors] == ["preview.inputs", "preview.outputs"]


def test_inputs_on_two_origin_chains_are_rejected(quote_wire: dict[str, Any]) -> None:
    second = {"user": interop(10, PAYER), "asset": interop(10, USDC_BASE), "amount": "1"}
    quote_wire["preview"]["inputs"].append(second)
    assert first_error(Quote, quote_wire) == (
        "preview.inputs: all inputs must be on one origin chain"
    )


def test_input_user_and_asset_on_different_chains_are_rejected(
    quote_wire: dict[str, Any],
) -> None:
    quote_wire["preview"]["inputs"][0]["user"] = interop(1, PAYER)
    assert first_error(Quote, quote_wire) == (
        "preview.inputs: all inputs must be on one origin chain"
    )


def test_two_inputs_on_one_chain_are_accepted(quote_wire: dict[str, Any]) -> None:
    quote_wire["preview"]["inputs"].append(dict(quote_wire["preview"]["inputs"][0]))
    assert len(parse(Quote, quote_wire).preview.inputs) == 2


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("amount", "-1", "must be a string of digits"),
        ("amount", 5, "must be a string of digits"),
        ("user", PAYER, "must be an ERC-7930 interoperable address (version:"),
        ("asset", "0x00010000010114", "must be an ERC-7930 interoperable address (length:"),
        ("user", "0x000100000014" + PAYER[2:], "must name a chain"),
        ("asset", "0x00010000022105" + "00", "must name an address"),
    ],
)
def test_input_rules(quote_wire: dict[str, Any], field: str, value: Any, rule: str) -> None:
    quote_wire["preview"]["inputs"][0][field] = value
    assert first_error(Quote, quote_wire).startswith(f"preview.inputs[0].{field}: {rule}")


def test_inputs_must_be_on_an_eip155_chain(quote_wire: dict[str, Any]) -> None:
    solana = erc7930.InteropAddress(2, b"\x01" * 32, b"\x02" * 32).to_hex()
    quote_wire["preview"]["inputs"][0]["asset"] = solana
    assert first_error(Quote, quote_wire) == (
        "preview.inputs[0].asset: must be on an eip155 chain (inputs are escrowed on an EVM chain)"
    )


def test_outputs_may_be_on_other_chain_types(quote_wire: dict[str, Any]) -> None:
    solana = erc7930.InteropAddress(2, b"\x01" * 32, b"\x02" * 32).to_hex()
    quote_wire["preview"]["outputs"][0]["receiver"] = solana
    output = parse(Quote, quote_wire).preview.outputs[0]
    assert output.receiver == solana


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("receiver", "0x1234", "must be an ERC-7930 interoperable address"),
        ("amount", "", "must be a string of digits"),
    ],
)
def test_output_rules(quote_wire: dict[str, Any], field: str, value: Any, rule: str) -> None:
    quote_wire["preview"]["outputs"][0][field] = value
    assert first_error(Quote, quote_wire).startswith(f"preview.outputs[0].{field}: {rule}")


def test_interop_addresses_are_stored_lowercase(quote_wire: dict[str, Any]) -> None:
    upper = "0x" + quote_wire["preview"]["inputs"][0]["asset"][2:].upper()
    quote_wire["preview"]["inputs"][0]["asset"] = upper
    assert parse(Quote, quote_wire).preview.inputs[0].asset == upper.lower()


def test_metadata_exclusive_for_is_a_plain_address(quote_wire: dict[str, Any]) -> None:
    quote_wire["metadata"]["exclusiveFor"] = interop(8453, FILLER)
    assert first_error(Quote, quote_wire) == (
        "metadata.exclusiveFor: must be a 0x-prefixed 20-byte hex address"
    )
    assert Metadata(exclusive_for=FILLER.lower()).exclusive_for == FILLER


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("nonce", 7, "order.nonce: must be a string of digits"),
        ("expires", -1, "order.expires: must be between 0 and 4294967295"),
        ("expires", 2**32, "order.expires: must be between 0 and 4294967295"),
        ("fillDeadline", "soon", "order.fillDeadline: must be an integer"),
        ("fillDeadline", 10**10, "order.fillDeadline: must be between 0 and 4294967295"),
        ("inputOracle", "0x1", "order.inputOracle: must be a 0x-prefixed 20-byte hex address"),
    ],
)
def test_order_override_rules(
    quote_wire: dict[str, Any], field: str, value: Any, message: str
) -> None:
    quote_wire["order"][field] = value
    assert first_error(Quote, quote_wire) == message


def test_fill_deadline_must_not_be_after_expires(quote_wire: dict[str, Any]) -> None:
    quote_wire["order"]["fillDeadline"] = quote_wire["order"]["expires"] + 1
    assert first_error(Quote, quote_wire) == "order.fillDeadline: must not be after expires"
    assert OrderOverrides(fill_deadline=5).expires is None


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("from", "0x12", "transactionRequest.from: must be a 0x-prefixed 20-byte hex address"),
        ("chainId", "x", "transactionRequest.chainId: must be an integer"),
        ("chainId", 0, "transactionRequest.chainId: must be at least 1"),
        ("data", "0x7", "transactionRequest.data: must be 0x-prefixed hex with an even number"),
        ("value", "0", "transactionRequest.value: must be a 0x-prefixed hex number"),
        ("value", "0x00", "transactionRequest.value: must be a 0x-prefixed hex number"),
        ("gasPrice", "1 gwei", "transactionRequest.gasPrice: must be an integer as decimal"),
    ],
)
def test_transaction_request_rules(
    quote_wire: dict[str, Any], field: str, value: Any, message: str
) -> None:
    quote_wire["transactionRequest"][field] = value
    assert first_error(Quote, quote_wire).startswith(message)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("quoteId", "", "quoteId: must not be empty"),
        ("validUntil", -1, "validUntil: must be at least 0"),
        ("eta", 1.5, "eta: must be an integer"),
    ],
)
def test_quote_member_rules(
    quote_wire: dict[str, Any], field: str, value: Any, message: str
) -> None:
    quote_wire[field] = value
    assert first_error(Quote, quote_wire) == message


def test_rfq_response_holds_exactly_one_quote(quote_wire: dict[str, Any]) -> None:
    response = parse(RfqResponse, {"quotes": [quote_wire]})
    assert response.quote.quote_id == "q-1"
    assert RfqResponse.model_validate(response.to_wire()) == response
    assert first_error(RfqResponse, {"quotes": []}) == (
        "quotes: must hold exactly one quote, got 0"
    )
    two = {"quotes": [quote_wire, copy.deepcopy(quote_wire)]}
    assert first_error(RfqResponse, two) == "quotes: must hold exactly one quote, got 2"


def rfq_params(**changes: str) -> dict[str, str]:
    params = {
        "srcChain": "eip155:8453",
        "dstChain": "eip155:42161",
        "amount": "1000000",
        "token": USDC_ARBITRUM.lower(),
        "user": PAYER,
    }
    params.update(changes)
    return params


def test_rfq_query_defaults_and_accessors() -> None:
    query = parse_query(RfqQuery, rfq_params())
    assert (query.src_chain_id, query.dst_chain_id, query.amount_int) == (8453, 42161, 1_000_000)
    assert query.type == "ExactInput"
    assert query.token == USDC_ARBITRUM
    assert query.receiver_or_user == PAYER
    assert query.src_token is None


def test_rfq_query_round_trip() -> None:
    query = parse_query(
        RfqQuery, rfq_params(type="ExactOutput", receiver=FILLER, srcToken=USDC_BASE)
    )
    assert query.receiver_or_user == FILLER
    wire = query.to_wire()
    assert wire["srcToken"] == USDC_BASE and wire["type"] == "ExactOutput"
    assert parse_query(RfqQuery, {k: str(v) for k, v in wire.items()}) == query


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"srcChain": "8453"}, "srcChain: must have the form <namespace>:<reference>"),
        ({"dstChain": "eip155:0"}, "dstChain: chain id must not be 0"),
        ({"amount": "0"}, "amount: must be greater than 0"),
        ({"amount": "1,000"}, "amount: must be a string of digits"),
        ({"token": "USDC"}, "token: must be a 0x-prefixed 20-byte hex address"),
        ({"user": interop(8453, PAYER)}, "user: must be a 0x-prefixed 20-byte hex address"),
        ({"receiver": ""}, "receiver: must be a 0x-prefixed 20-byte hex address"),
        ({"type": "exactInput"}, "type: must be 'ExactInput' or 'ExactOutput'"),
        ({"protocol": "partner-escrow"}, "protocol: is not a known parameter"),
    ],
)
def test_rfq_query_rules(changes: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_query(RfqQuery, rfq_params(**changes))
    assert str(caught.value).startswith(message)


def test_models_are_immutable(quote_wire: dict[str, Any]) -> None:
    quote = parse(Quote, quote_wire)
    with pytest.raises(ValueError, match="frozen"):
        quote.quote_id = "other"  # type: ignore[misc]


@settings(max_examples=50)
@given(
    st.integers(min_value=1, max_value=2**64),
    st.integers(min_value=1, max_value=2**64),
    st.binary(min_size=20, max_size=20),
    st.integers(min_value=0, max_value=2**256 - 1),
)
def test_input_output_round_trip(src: int, dst: int, raw: bytes, amount: int) -> None:
    address = "0x" + raw.hex()
    preview = Preview(
        inputs=[Input(user=interop(src, address), asset=interop(src, address), amount=str(amount))],
        outputs=[Output(receiver=interop(dst, address), asset=interop(dst, address), amount="1")],
    )
    assert Preview.model_validate(preview.to_wire()) == preview
    assert preview.origin_chain_id == src
    assert preview.inputs[0].amount_int == amount
    assert preview.outputs[0].chain_id == dst
