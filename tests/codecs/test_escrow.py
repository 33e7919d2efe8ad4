"""The escrow open() codec: the §7.2 vectors byte for byte, round trips, and every rejection."""

from __future__ import annotations

import dataclasses

import eth_abi
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.codecs import escrow
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.escrow import (
    Exclusivity,
    MandateOutput,
    StandardOrder,
    decode_open,
    encode_open,
    exclusivity_context,
    from_bytes32,
    order_id,
    parse_context,
    to_bytes32,
    token_address,
    token_id,
)

ESCROW = "0x000025c3226C00B2Cdc200005a1600509f4e00C0"
FILLER = "0x94807fe4300d15909c1a4fd39f76c61d68aee11e"

VECTOR_A_CALLDATA = (
    "0x7515fd56"
    "0000000000000000000000000000000000000000000000000000000000000020"
    "000000000000000000000000d8da6bf26964af9d7eed9e03e53415d37aa96045"
    "0000000000000000000000000000000000000000000000000000000000000001"
    "0000000000000000000000000000000000000000000000000000000000002105"
    "0000000000000000000000000000000000000000000000000000000068e78610"
    "0000000000000000000000000000000000000000000000000000000068e77800"
    "0000000000000000000000000000003e06000007a224aee90052fa6bb46d43c9"
    "0000000000000000000000000000000000000000000000000000000000000100"
    "0000000000000000000000000000000000000000000000000000000000000160"
    "0000000000000000000000000000000000000000000000000000000000000001"
    "000000000000000000000000833589fcd6edb6e08f4c7c32d4f71b54bda02913"
    "0000000000000000000000000000000000000000000000000000000000989680"
    "0000000000000000000000000000000000000000000000000000000000000001"
    "0000000000000000000000000000000000000000000000000000000000000020"
    "0000000000000000000000000000003e06000007a224aee90052fa6bb46d43c9"
    "0000000000000000000000000000000000ec36b683c2e6ac89e9a75989c22a2e"
    "000000000000000000000000000000000000000000000000000000000000a4b1"
    "000000000000000000000000af88d065e77c8cc2239327c5edb3a432268e5831"
    "0000000000000000000000000000000000000000000000000000000000981a8d"
    "000000000000000000000000d8da6bf26964af9d7eed9e03e53415d37aa96045"
    "0000000000000000000000000000000000000000000000000000000000000100"
    "0000000000000000000000000000000000000000000000000000000000000120"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
)
VECTOR_A_ORDER_ID = "0x97ab52c438080e4f456ae4d0d6f89159085971d9c77159906d93806169be7dc6"

VECTOR_B_CONTEXT = bytes.fromhex(
    "e000000000000000000000000094807fe4300d15909c1a4fd39f76c61d68aee11e68e77454"
)
# B equals A up to and including the callbackData length word; then the context tail.
VECTOR_B_CALLDATA = (
    VECTOR_A_CALLDATA[:-64]
    + "0000000000000000000000000000000000000000000000000000000000000025"
    + VECTOR_B_CONTEXT.hex().ljust(128, "0")
)
VECTOR_B_ORDER_ID = "0x3cf2e937019e4c167470559c9b7ba8a175c25176ac4cff8eabe2ee922d151f54"


# --- the worked vectors ---------------------------------------------------------------------


def test_vector_a_calldata_byte_for_byte(vector_a: StandardOrder) -> None:
    calldata = encode_open(vector_a)
    assert calldata == VECTOR_A_CALLDATA
    assert len(bytes.fromhex(calldata[2:])) == 772


def test_vector_a_order_id(vector_a: StandardOrder) -> None:
    assert order_id(vector_a, ESCROW) == VECTOR_A_ORDER_ID


def test_vector_b_calldata_and_order_id(vector_b: StandardOrder) -> None:
    calldata = encode_open(vector_b)
    assert calldata == VECTOR_B_CALLDATA
    assert len(bytes.fromhex(calldata[2:])) == 836
    assert order_id(vector_b, ESCROW) == VECTOR_B_ORDER_ID


def test_vector_b_context_is_the_exclusivity_encoding() -> None:
    assert exclusivity_context(FILLER, 1759999060) == bytes.fromhex(VECTOR_B_CALLDATA[-128:-54])


def test_vectors_decode_back(vector_a: StandardOrder, vector_b: StandardOrder) -> None:
    assert decode_open(VECTOR_A_CALLDATA) == vector_a
    assert decode_open(VECTOR_B_CALLDATA) == vector_b
    assert decode_open(bytes.fromhex(VECTOR_A_CALLDATA[2:])) == vector_a


def test_order_id_depends_on_settler_and_chain(vector_a: StandardOrder) -> None:
    other = order_id(vector_a, "0x" + "12" * 20)
    assert other != VECTOR_A_ORDER_ID
    moved = dataclasses.replace(vector_a, origin_chain_id=10)
    assert order_id(moved, ESCROW) != VECTOR_A_ORDER_ID


def test_selector_is_the_keccak_of_the_signature() -> None:
    from eth_utils import function_signature_to_4byte_selector

    sig = f"open({escrow.ORDER_TYPE})"
    assert "0x" + function_signature_to_4byte_selector(sig).hex() == escrow.SELECTOR


# --- decode rejections ----------------------------------------------------------------------


def test_decode_rejects_a_wrong_selector() -> None:
    with pytest.raises(InvalidValue, match=r"calldata: selector 0x48f49eaf is not open\(\)"):
        decode_open("0x48f49eaf" + VECTOR_A_CALLDATA[10:])


def test_decode_rejects_truncated_data() -> None:
    with pytest.raises(InvalidValue, match="calldata: truncated open"):
        decode_open(VECTOR_A_CALLDATA[:-64])


def test_decode_rejects_too_short_and_non_hex() -> None:
    with pytest.raises(InvalidValue, match="calldata: too short to hold a function selector"):
        decode_open("0x7515")
    with pytest.raises(InvalidValue, match="calldata: must be bytes or a 0x-prefixed hex"):
        decode_open("7515fd56")
    with pytest.raises(InvalidValue, match="calldata: must be bytes or a 0x-prefixed hex"):
        decode_open("0x7515fd5")


def test_decode_rejects_dirty_token_id_bits() -> None:
    word = "000000000000000000000000833589fcd6edb6e08f4c7c32d4f71b54bda02913"
    dirty = VECTOR_A_CALLDATA.replace(word, "01" + word[2:])
    with pytest.raises(InvalidValue, match=r"inputs\[0\]\.tokenId: upper 12 bytes must be zero"):
        decode_open(dirty)


def test_decode_rejects_trailing_bytes() -> None:
    with pytest.raises(
        InvalidValue, match=r"not the canonical ABI encoding of open\(\) \(32 trailing"
    ):
        decode_open(VECTOR_A_CALLDATA + "00" * 32)


def test_decode_rejects_a_dirty_user_address() -> None:
    dirty = VECTOR_A_CALLDATA.replace(
        "000000000000000000000000d8da6bf2", "ff0000000000000000000000d8da6bf2", 1
    )
    with pytest.raises(InvalidValue, match="calldata: malformed open"):
        decode_open(dirty)


# --- the dataclasses ------------------------------------------------------------------------


def test_bytes32_helpers_round_trip() -> None:
    word = to_bytes32("0x0000000000eC36B683C2E6AC89e9A75989C22a2e")
    assert word == "0x" + "00" * 12 + "0000000000ec36b683c2e6ac89e9a75989c22a2e"
    assert from_bytes32(word) == "0x0000000000eC36B683C2E6AC89e9A75989C22a2e"
    with pytest.raises(InvalidValue, match="bytes32: upper 12 bytes must be zero"):
        from_bytes32("0x" + "11" * 32)
    with pytest.raises(InvalidValue, match="address: must be a 0x-prefixed 20-byte hex address"):
        to_bytes32("0x1234")


def test_token_id_helpers() -> None:
    assert token_address(token_id("0x833589fcd6edb6e08f4c7c32d4f71b54bda02913")) == (
        "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
    )
    with pytest.raises(InvalidValue, match="tokenId: upper 12 bytes must be zero"):
        token_address(2**200)


def test_mandate_output_normalises_case_and_hex_bytes(vector_a: StandardOrder) -> None:
    out = vector_a.outputs[0]
    upper = MandateOutput(
        oracle=out.oracle.upper().replace("0X", "0x"),
        settler=out.settler,
        chain_id=out.chain_id,
        token=out.token,
        amount=out.amount,
        recipient=out.recipient,
        callback_data="0xabcd",  # type: ignore[arg-type]
        context="0x",  # type: ignore[arg-type]
    )
    assert upper.oracle == out.oracle
    assert upper.callback_data == b"\xab\xcd"
    assert upper.context == b""


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"oracle": "0x1234"}, "oracle: must be a 0x-prefixed 32-byte hex string"),
        ({"chain_id": -1}, "chainId: must be between 0 and 2\\*\\*256-1"),
        ({"amount": 1.5}, "amount: must be an integer"),
        ({"amount": True}, "amount: must be an integer"),
        ({"context": "e0"}, "context: must be bytes or a 0x-prefixed hex string"),
    ],
)
def test_mandate_output_rejections(vector_a: StandardOrder, change: dict, message: str) -> None:
    with pytest.raises(InvalidValue, match=message):
        dataclasses.replace(vector_a.outputs[0], **change)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"user": "0xd8da"}, "user: must be a 0x-prefixed 20-byte hex address"),
        ({"expires": 2**32}, "expires: must be between 0 and 2\\*\\*32-1"),
        ({"fill_deadline": -5}, "fillDeadline: must be between 0 and 2\\*\\*32-1"),
        ({"nonce": "1"}, "nonce: must be an integer"),
        ({"inputs": ((1,),)}, r"inputs\[0\]: must be a \(tokenId, amount\) pair"),
        ({"inputs": ((2**160, 1),)}, r"inputs\[0\]\.tokenId: upper 12 bytes must be zero"),
        ({"inputs": ((1, -1),)}, r"inputs\[0\]\.amount: must be between"),
        ({"inputs": "0x"}, "inputs: must be a sequence"),
        ({"outputs": ({"amount": 1},)}, r"outputs\[0\]: must be a MandateOutput"),
    ],
)
def test_standard_order_rejections(vector_a: StandardOrder, change: dict, message: str) -> None:
    with pytest.raises(InvalidValue, match=message):
        dataclasses.replace(vector_a, **change)


def test_standard_order_checksums_addresses_and_tuples_lists(vector_a: StandardOrder) -> None:
    lower = dataclasses.replace(
        vector_a,
        user=vector_a.user.lower(),
        inputs=[list(vector_a.inputs[0])],  # type: ignore[arg-type]
        outputs=list(vector_a.outputs),  # type: ignore[arg-type]
    )
    assert lower == vector_a
    assert lower.user == "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"


def test_encode_open_requires_an_order() -> None:
    with pytest.raises(InvalidValue, match="order: must be a StandardOrder"):
        encode_open({"user": "0x"})  # type: ignore[arg-type]


# --- exclusivity context --------------------------------------------------------------------


def test_parse_context_plain_and_exclusive() -> None:
    assert parse_context(b"") is None
    assert parse_context("0x") is None
    assert parse_context(b"\x00") is None
    parsed = parse_context(exclusivity_context(FILLER, 1759999060))
    assert parsed == Exclusivity("0x94807fE4300D15909C1a4fd39f76c61D68aee11E", 1759999060)


@pytest.mark.parametrize(
    ("context", "message"),
    [
        (b"\x00\x00", "context: a 0x00 context must be exactly 1 byte, got 2"),
        (b"\xe0" + b"\x00" * 35, "context: a 0xe0 context must be exactly 37 bytes, got 36"),
        (b"\xe0" + b"\x00" * 37, "context: a 0xe0 context must be exactly 37 bytes, got 38"),
        (b"\x01" + b"\x00" * 40, r"context: Dutch auction orders \(0x01\) are not supported"),
        (b"\xe1" + b"\x00" * 72, r"context: exclusive Dutch auction orders \(0xe1\) are not"),
        (b"\x05", "context: unknown order type 0x05"),
        (b"\xe0" + b"\x11" * 32 + b"\x00" * 4, "context: exclusiveFor upper 12 bytes must be"),
    ],
)
def test_parse_context_rejections(context: bytes, message: str) -> None:
    with pytest.raises(InvalidValue, match=message):
        parse_context(context)


def test_exclusivity_context_rejects_bad_values() -> None:
    with pytest.raises(InvalidValue, match="startTime: must be between 0 and 2\\*\\*32-1"):
        exclusivity_context(FILLER, 2**32)
    with pytest.raises(InvalidValue, match="filler: must be a 0x-prefixed 20-byte hex address"):
        exclusivity_context("0xnope", 1)


# --- round trips ----------------------------------------------------------------------------

addresses = st.binary(min_size=20, max_size=20).map(lambda b: "0x" + b.hex())
words = st.binary(min_size=32, max_size=32).map(lambda b: "0x" + b.hex())
uint256 = st.integers(min_value=0, max_value=2**256 - 1)
uint32 = st.integers(min_value=0, max_value=2**32 - 1)

outputs = st.builds(
    MandateOutput,
    oracle=words,
    settler=words,
    chain_id=uint256,
    token=words,
    amount=uint256,
    recipient=words,
    callback_data=st.binary(max_size=80),
    context=st.binary(max_size=80),
)
orders = st.builds(
    StandardOrder,
    user=addresses,
    nonce=uint256,
    origin_chain_id=uint256,
    expires=uint32,
    fill_deadline=uint32,
    input_oracle=addresses,
    inputs=st.lists(
        st.tuples(st.integers(min_value=0, max_value=2**160 - 1), uint256), max_size=4
    ).map(tuple),
    outputs=st.lists(outputs, max_size=3).map(tuple),
)


@settings(max_examples=60, deadline=None)
@given(orders)
def test_open_round_trip(order: StandardOrder) -> None:
    calldata = encode_open(order)
    assert calldata.startswith(escrow.SELECTOR)
    assert decode_open(calldata) == order


@settings(max_examples=40, deadline=None)
@given(orders)
def test_open_calldata_matches_plain_eth_abi(order: StandardOrder) -> None:
    body = eth_abi.encode([escrow.ORDER_TYPE], [order.as_abi()])
    assert encode_open(order) == escrow.SELECTOR + body.hex()


@settings(max_examples=40, deadline=None)
@given(addresses, uint32)
def test_context_round_trip(filler: str, start: int) -> None:
    parsed = parse_context(exclusivity_context(filler, start))
    assert parsed is not None
    assert parsed.filler.lower() == filler
    assert parsed.start_time == start


def test_every_prefix_of_a_valid_call_is_rejected() -> None:
    raw = bytes.fromhex(VECTOR_B_CALLDATA[2:])
    for cut in range(4, len(raw), 7):
        with pytest.raises(InvalidValue, match="calldata: "):
            decode_open(raw[:cut])
