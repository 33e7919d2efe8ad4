"""Field types: every rule accepts what it should and names what it rejects."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from toolkit.resources import (
    MAX_UINT256,
    Amount,
    Caip2,
    DateTimeText,
    DecimalText,
    DigitString,
    Flag,
    FlagText,
    Hash32,
    HealthFactorText,
    HexAddress,
    HexData,
    HexQuantity,
    Int,
    InteropAddress,
    InvalidInput,
    NonEmptyStr,
    Number,
    PositiveAmount,
    QuantityText,
    RequestId,
    Uint32,
    at_least,
    between,
    parse_value,
)

from .conftest import PAYER, interop


def reject(type_: Any, value: Any) -> str:
    with pytest.raises(InvalidInput) as caught:
        parse_value(type_, value, "field")
    assert caught.value.field == "field"
    return caught.value.rule


@pytest.mark.parametrize("value", ["0", "1", "007", str(MAX_UINT256)])
def test_amount_accepts_digit_strings_below_2_256(value: str) -> None:
    assert parse_value(Amount, value, "amount") == value


@pytest.mark.parametrize("value", ["", "-1", "1.5", " 1", "1e6", "0x10", "١", 10, None])
def test_amount_rejects_non_digit_strings(value: object) -> None:
    assert reject(Amount, value) == "must be a string of digits"


def test_amount_rejects_2_256() -> None:
    assert reject(Amount, str(MAX_UINT256 + 1)) == "must be less than 2**256"


def test_positive_amount_rejects_zero() -> None:
    assert reject(PositiveAmount, "0") == "must be greater than 0"
    assert parse_value(PositiveAmount, "1", "amount") == "1"


def test_digit_string_has_no_upper_bound() -> None:
    assert parse_value(DigitString, "9" * 100, "x") == "9" * 100
    assert reject(DigitString, "1.0") == "must be a string of digits"


def test_hex_address_is_checksummed_and_case_insensitive() -> None:
    assert parse_value(HexAddress, PAYER.lower(), "a") == PAYER
    assert parse_value(HexAddress, "0x" + PAYER[2:].upper(), "a") == PAYER


@pytest.mark.parametrize("value", [PAYER[:-1], PAYER[2:], PAYER + "0", "0x" + "g" * 40, 1])
def test_hex_address_rejects(value: object) -> None:
    assert reject(HexAddress, value) == "must be a 0x-prefixed 20-byte hex address"


def test_hex_data() -> None:
    assert parse_value(HexData, "0x", "data") == "0x"
    assert parse_value(HexData, "0xABcd", "data") == "0xabcd"
    for bad in ("0xabc", "abcd", "0xzz", None):
        assert reject(HexData, bad) == "must be 0x-prefixed hex with an even number of digits"


def test_hex_quantity() -> None:
    assert parse_value(HexQuantity, "0x0", "value") == "0x0"
    assert parse_value(HexQuantity, "0xDE0B6B3A7640000", "value") == "0xde0b6b3a7640000"
    for bad in ("0x", "0x00", "0x01", "10", "0xg"):
        assert reject(HexQuantity, bad).startswith("must be a 0x-prefixed hex number")
    assert reject(HexQuantity, hex(MAX_UINT256 + 1)) == "must be less than 2**256"


def test_quantity_text() -> None:
    assert parse_value(QuantityText, "21000", "gas") == "21000"
    assert parse_value(QuantityText, "0x5208", "gas") == "0x5208"
    assert reject(QuantityText, "1.5") == "must be an integer as decimal digits or 0x-prefixed hex"


def test_hash32_and_request_id() -> None:
    assert parse_value(Hash32, "0x" + "AB" * 32, "txHash") == "0x" + "ab" * 32
    assert reject(Hash32, "0x" + "ab" * 31) == "must be 0x followed by 64 hex digits"
    assert parse_value(RequestId, "0x" + "0f" * 16, "requestId") == "0x" + "0f" * 16
    assert reject(RequestId, "0x" + "0f" * 15) == "must be 0x followed by 32 hex digits"


def test_caip2() -> None:
    assert parse_value(Caip2, "eip155:8453", "chain") == "eip155:8453"
    assert reject(Caip2, "eip155:08453") == "chain id must not have leading zeros"
    assert reject(Caip2, "solana:abc").startswith("namespace 'solana' is not supported")
    assert reject(Caip2, 8453) == "must be a CAIP-2 string like eip155:8453"


def test_interop_address() -> None:
    text = interop(8453, PAYER)
    assert parse_value(InteropAddress, text.upper().replace("0X", "0x"), "user") == text
    assert reject(InteropAddress, "0x0002" + text[6:]) == (
        "must be an ERC-7930 interoperable address (version: must be 0x0001)"
    )
    assert reject(InteropAddress, 5).startswith("must be an ERC-7930 interoperable address")


def test_decimal_and_health_factor_text() -> None:
    assert parse_value(DecimalText, "750.25", "debt") == "750.25"
    for bad in ("-1", "1.", ".5", "1e3", "Infinity", 1.5):
        assert reject(DecimalText, bad) == "must be a decimal number in a string, e.g. 12.34"
    assert parse_value(HealthFactorText, "Infinity", "healthFactor") == "Infinity"
    assert parse_value(HealthFactorText, "1.25", "healthFactor") == "1.25"
    assert reject(HealthFactorText, "inf").endswith("or Infinity")


def test_date_time_text() -> None:
    assert parse_value(DateTimeText, "2025-07-15T23:59:59Z", "dueDate") == "2025-07-15T23:59:59Z"
    assert reject(DateTimeText, "2025-07-15T23:59:59") == (
        "must be an ISO 8601 date-time with a time zone"
    )
    assert reject(DateTimeText, "tomorrow") == "must be an ISO 8601 date-time string"


def test_non_empty_str() -> None:
    assert reject(NonEmptyStr, "  ") == "must not be empty"
    assert reject(NonEmptyStr, 3) == "must be a string"


def test_int_from_json_or_query_text() -> None:
    assert parse_value(Int, "42", "n") == 42
    assert parse_value(Int, "-3", "n") == -3
    assert parse_value(Int, 7, "n") == 7
    for bad in ("4.0", 4.0, True, "", " 1", "1_000"):
        assert reject(Int, bad) == "must be an integer"


def test_ranges() -> None:
    assert reject(Annotated[Int, between(0, 10)], "11") == "must be between 0 and 10"
    assert reject(Annotated[Int, at_least(1)], 0) == "must be at least 1"
    assert reject(Uint32, 2**32) == "must be between 0 and 4294967295"


def test_number() -> None:
    assert parse_value(Number, "0.5", "slippage") == 0.5
    assert parse_value(Number, 3, "slippage") == 3.0
    for bad in ("abc", True, "nan", None):
        assert reject(Number, bad) == "must be a number"
    assert reject(Number, float("inf")) == "must be a finite number"


def test_flags() -> None:
    assert parse_value(Flag, "TRUE", "unwrap") is True
    assert parse_value(Flag, False, "unwrap") is False
    assert reject(Flag, "yes") == "must be true or false"
    assert reject(Flag, 1) == "must be true or false"
    adapter = TypeAdapter(FlagText)
    assert adapter.dump_python(adapter.validate_python("false")) == "false"
    assert adapter.dump_python(True) == "true"


@settings(max_examples=100)
@given(st.integers(min_value=0, max_value=MAX_UINT256))
def test_amount_round_trip(value: int) -> None:
    assert int(parse_value(Amount, str(value), "amount")) == value


@settings(max_examples=100)
@given(st.binary(min_size=20, max_size=20), st.booleans())
def test_hex_address_round_trip(raw: bytes, upper: bool) -> None:
    text = "0x" + (raw.hex().upper() if upper else raw.hex())
    parsed = parse_value(HexAddress, text, "address")
    assert parsed.lower() == text.lower()
    assert parse_value(HexAddress, parsed, "address") == parsed
