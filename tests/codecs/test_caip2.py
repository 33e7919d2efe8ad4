"""CAIP-2 codec for the eip155 namespace."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.codecs import caip2
from toolkit.codecs.caip2 import Caip2Error


@pytest.mark.parametrize(
    ("text", "chain_id"), [("eip155:1", 1), ("eip155:8453", 8453), ("eip155:42161", 42161)]
)
def test_parse(text: str, chain_id: int) -> None:
    assert caip2.parse(text) == chain_id


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("8453", "chain: must have the form <namespace>:<reference>"),
        ("", "chain: must have the form <namespace>:<reference>"),
        ("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "chain: namespace 'solana' is not supported"),
        ("EIP155:1", "chain: namespace 'EIP155' is not a valid CAIP-2 namespace"),
        ("eip155:", "chain: chain id must be decimal digits"),
        ("eip155:0x1", "chain: chain id must be decimal digits"),
        ("eip155:-1", "chain: chain id must be decimal digits"),
        ("eip155: 1", "chain: chain id must be decimal digits"),
        ("eip155:١", "chain: chain id must be decimal digits"),
        ("eip155:1:2", "chain: chain id must be decimal digits"),
        ("eip155:0", "chain: chain id must not be 0"),
        ("eip155:01", "chain: chain id must not have leading zeros"),
        ("eip155:" + "1" * 33, "chain: chain id must have at most 32 digits"),
        (8453, "chain: must be a string"),
    ],
)
def test_parse_rejects(text: object, message: str) -> None:
    with pytest.raises(Caip2Error, match=message):
        caip2.parse(text)  # type: ignore[arg-type]


def test_parse_names_the_given_field() -> None:
    with pytest.raises(Caip2Error) as caught:
        caip2.parse("eip155:0", field="srcChain")
    assert str(caught.value) == "srcChain: chain id must not be 0"
    assert (caught.value.field, caught.value.rule) == ("srcChain", "chain id must not be 0")


def test_format() -> None:
    assert caip2.format(8453) == "eip155:8453"


@pytest.mark.parametrize(
    ("chain_id", "message"),
    [
        (0, "chainId: must be positive"),
        (-5, "chainId: must be positive"),
        (True, "chainId: must be an integer"),
        ("1", "chainId: must be an integer"),
        (10**32, "chainId: must have at most 32 digits"),
    ],
)
def test_format_rejects(chain_id: object, message: str) -> None:
    with pytest.raises(Caip2Error, match=message):
        caip2.format(chain_id)  # type: ignore[arg-type]


@settings(max_examples=200)
@given(st.integers(min_value=1, max_value=10**32 - 1))
def test_round_trip(chain_id: int) -> None:
    assert caip2.parse(caip2.format(chain_id)) == chain_id


@settings(max_examples=200)
@given(st.text(max_size=20))
def test_parse_text_either_round_trips_or_names_the_rule(text: str) -> None:
    try:
        chain_id = caip2.parse(text)
    except Caip2Error as error:
        assert str(error).startswith("chain: ")
    else:
        assert caip2.format(chain_id) == text
