"""The codecs' ABI fast path (:mod:`toolkit.codecs.plain_abi`) gives eth_abi's bytes and values
byte for byte, leaves to eth_abi what it does not take (so its errors are eth_abi's), and never
accepts a non-canonical encoding eth_abi's path would refuse; the cached checksum is EIP-55."""

from __future__ import annotations

from typing import Any

import eth_abi
import pytest
from eth_abi.exceptions import DecodingError, EncodingError
from eth_utils import to_checksum_address
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.codecs import abi, plain_abi
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.functions import decode_call, encode_call

_BITS = [8, 24, 128, 160, 256]
_WORD_TYPES = ["address", "bool", *(f"uint{n}" for n in _BITS), *(f"int{n}" for n in _BITS)]
_TYPES = [*_WORD_TYPES, "bytes", "address[]", "uint256[]", "bytes[]", "int24[]"]

_addresses = st.binary(min_size=20, max_size=20).flatmap(
    lambda raw: st.sampled_from(["0x" + raw.hex(), "0x" + raw.hex().upper(), abi.checksum(raw)])
)


def _value(type_: str) -> st.SearchStrategy[Any]:
    if type_.endswith("[]"):
        return st.lists(_value(type_[:-2]), max_size=4)
    if type_ == "address":
        return _addresses
    if type_ == "bool":
        return st.booleans()
    if type_ == "bytes":
        return st.binary(max_size=70)
    bits = int(type_.lstrip("uint"))
    if type_.startswith("u"):
        return st.integers(0, 2**bits - 1) | st.sampled_from([0, 2**bits - 1])
    low = -(2 ** (bits - 1))
    return st.integers(low, -low - 1) | st.sampled_from([low, -1, -low - 1])


@st.composite
def _tuples(draw: st.DrawFn) -> tuple[list[str], list[Any]]:
    types = draw(st.lists(st.sampled_from(_TYPES), min_size=1, max_size=5))
    return types, [draw(_value(t)) for t in types]


def _as_eth_abi(value: Any) -> Any:
    """eth_abi decodes arrays as tuples and addresses in lowercase."""
    if isinstance(value, list):
        return tuple(_as_eth_abi(v) for v in value)
    if isinstance(value, str):
        return value.lower()
    return value


@settings(max_examples=400)
@given(_tuples())
def test_encoding_and_decoding_are_eth_abis(drawn: tuple[list[str], list[Any]]) -> None:
    types, values = drawn
    raw = plain_abi.encode(types, values)
    assert raw == eth_abi.encode(types, values)
    assert plain_abi.decode_canonical(types, raw) == [_as_eth_abi(v) for v in values]
    assert tuple(plain_abi.decode(types, raw)) == eth_abi.decode(types, raw)


@settings(max_examples=300)
@given(_tuples(), st.data())
def test_a_changed_byte_is_read_as_eth_abi_reads_it_or_left_to_it(
    drawn: tuple[list[str], list[Any]], data: st.DataObject
) -> None:
    """Dirty padding, a bool of 2, an offset or length moved: the fast path either reads the
    canonical encoding of what it returns or says None (eth_abi decides)."""
    types, values = drawn
    raw = bytearray(plain_abi.encode(types, values))
    at = data.draw(st.integers(0, len(raw) - 1))
    raw[at] ^= data.draw(st.integers(1, 255))
    read = plain_abi.decode_canonical(types, bytes(raw))
    if read is not None:
        assert eth_abi.encode(types, read) == bytes(raw)
        assert tuple(read) == eth_abi.decode(types, bytes(raw))


@pytest.mark.parametrize(
    ("types", "values"),
    [
        (["uint8"], [256]),  # out of range
        (["int24"], [2**23]),
        (["uint256"], [-1]),
        (["address"], ["0x" + "11" * 19]),  # 19 bytes
        (["address"], ["0x" + "zz" * 20]),  # not hex
        (["bool"], [2]),  # an int for a bool
        (["uint256"], [True]),  # a bool for an int
    ],
)
def test_values_outside_the_fast_path_get_eth_abis_error(
    types: list[str], values: list[Any]
) -> None:
    assert plain_abi.word(types[0], values[0]) is None
    with pytest.raises(EncodingError):
        plain_abi.encode(types, values)


@pytest.mark.parametrize(
    ("types", "raw"),
    [
        (["bool"], bytes(31) + b"\x02"),  # not a bool
        (["address"], b"\x01" + bytes(31)),  # dirty padding
        (["uint8"], bytes(30) + b"\x01\x00"),  # past 8 bits
        (["int8"], bytes(31) + b"\x80"),  # 128 without its sign extension
    ],
)
def test_non_canonical_words_are_left_to_eth_abi_which_refuses_them(
    types: list[str], raw: bytes
) -> None:
    assert plain_abi.decode_canonical(types, raw) is None
    with pytest.raises(DecodingError):
        plain_abi.decode(types, raw)


def test_a_call_with_a_moved_offset_is_still_refused() -> None:
    """A ``bytes`` argument whose offset points back into the heads: the fast path does not
    take it, and the call codec refuses it as before, naming the data."""
    call = encode_call("universalRouter.execute", b"\x00", [b"\x01" * 3], 7)
    raw = bytearray.fromhex(call[2:])
    raw[4 + 31] = 0x40  # the first offset: 0x60 -> 0x40, the second argument's offset word
    types = ["bytes", "bytes[]", "uint256"]
    assert plain_abi.decode_canonical(types, bytes(raw[4:])) is None
    with pytest.raises(InvalidValue, match=r"^data: malformed universalRouter.execute"):
        decode_call(bytes(raw))


@given(st.binary(min_size=20, max_size=20))
def test_the_cached_checksum_is_eip55(raw: bytes) -> None:
    expected = to_checksum_address(raw)
    assert abi.checksum(raw) == abi.checksum("0x" + raw.hex().upper()) == expected
    assert abi.checksum(expected) == expected
