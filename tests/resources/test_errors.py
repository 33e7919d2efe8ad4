"""InvalidInput and the parse functions: wire paths, plain-words rules, every problem kept."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit.resources import (
    ErrorBody,
    FieldError,
    InvalidInput,
    ProtocolConfig,
    Quote,
    RfqQuery,
    RouteQuery,
    parse,
    parse_query,
)

from .conftest import PAYER


def test_invalid_input_message_and_attributes() -> None:
    error = InvalidInput("amount", "must be a string of digits")
    assert str(error) == "amount: must be a string of digits"
    assert (error.field, error.rule) == ("amount", "must be a string of digits")
    assert error.errors == (FieldError("amount", "must be a string of digits"),)
    assert isinstance(error, ValueError)


def test_parse_accepts_mapping_text_and_bytes() -> None:
    assert parse(ErrorBody, {"error": "x"}) == ErrorBody(error="x")
    assert parse(ErrorBody, '{"error": "x"}') == ErrorBody(error="x")
    assert parse(ErrorBody, b'{"error": "x", "debug": "y"}').debug == "y"


def test_parse_rejects_bad_json_and_non_objects() -> None:
    with pytest.raises(InvalidInput, match=r"^body: must be valid JSON$"):
        parse(ErrorBody, b"{")
    with pytest.raises(InvalidInput, match=r"^body: must be an object$"):
        parse(ErrorBody, [1])
    with pytest.raises(InvalidInput, match=r"^payload: must be valid JSON$"):
        parse(ErrorBody, "nope", root="payload")


def test_parse_reads_wire_names_only() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse(Quote, {"preview": {"inputs": [], "outputs": []}, "quote_id": "x"})
    # The snake_case key is not a wire name: it is ignored, so only the preview errors remain.
    assert [e.field for e in caught.value.errors] == ["preview.inputs", "preview.outputs"]


def test_every_problem_is_kept_and_the_first_is_reported(quote_wire: dict[str, Any]) -> None:
    quote_wire["preview"]["inputs"][0]["amount"] = "1.5"
    quote_wire["transactionRequest"]["chainId"] = 0
    del quote_wire["transactionRequest"]["to"]
    with pytest.raises(InvalidInput) as caught:
        parse(Quote, quote_wire)
    assert str(caught.value) == "preview.inputs[0].amount: must be a string of digits"
    assert caught.value.errors == (
        FieldError("preview.inputs[0].amount", "must be a string of digits"),
        FieldError("transactionRequest.to", "is required"),
        FieldError("transactionRequest.chainId", "must be at least 1"),
    )


def test_rules_are_plain_words(quote_wire: dict[str, Any]) -> None:
    quote_wire["metadata"] = "filler"
    quote_wire["preview"]["outputs"] = {}
    quote_wire["partialFill"] = "maybe"
    with pytest.raises(InvalidInput) as caught:
        parse(Quote, quote_wire)
    assert caught.value.errors == (
        FieldError("preview.outputs", "must be a list"),
        FieldError("partialFill", "must be true or false"),
        FieldError("metadata", "must be an object"),
    )


def test_dict_key_errors_name_the_key() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse(ProtocolConfig, {"chains": {"eip155:01": {}}})
    assert caught.value.errors[0] == FieldError(
        "chains.eip155:01 (key)", "chain id must not have leading zeros"
    )


def test_parse_query_names_parameters() -> None:
    params = {"amountIn": "1", "tokenIn": PAYER, "tokenOut": PAYER, "slippage_bps": "5"}
    with pytest.raises(InvalidInput, match=r"^slippage_bps: is not a known parameter$"):
        parse_query(RouteQuery, params)


def test_a_parameter_named_like_an_index_is_named_as_given() -> None:
    # found by tests/server/test_fuzz.py: "[" was reported as "query["
    params = {"amountIn": "1", "tokenIn": PAYER, "tokenOut": PAYER, "[": ""}
    with pytest.raises(InvalidInput, match=r"^\[: is not a known parameter$"):
        parse_query(RouteQuery, params)


def test_parse_query_missing_parameters() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_query(RfqQuery, {})
    assert [e.field for e in caught.value.errors] == [
        "srcChain",
        "dstChain",
        "amount",
        "token",
        "user",
    ]
    assert {e.rule for e in caught.value.errors} == {"is required"}


def test_parse_query_needs_string_values() -> None:
    with pytest.raises(InvalidInput, match=r"^amountIn: must be a string$"):
        parse_query(RouteQuery, {"amountIn": 1})  # type: ignore[dict-item]
    with pytest.raises(InvalidInput, match=r"^query: must be a mapping"):
        parse_query(RouteQuery, [("amountIn", "1")])  # type: ignore[arg-type]


def test_literal_rule_lists_the_choices() -> None:
    params = {
        "srcChain": "eip155:1",
        "dstChain": "eip155:10",
        "amount": "1",
        "token": PAYER,
        "user": PAYER,
        "type": "exact",
    }
    with pytest.raises(InvalidInput, match=r"^type: must be 'ExactInput' or 'ExactOutput'$"):
        parse_query(RfqQuery, params)
