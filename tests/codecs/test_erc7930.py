"""ERC-7930 codec: the ERC's and the intents protocol's vectors, rejections, round trips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.codecs import erc7930
from toolkit.codecs.erc7930 import Erc7930Error, InteropAddress

VITALIK = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"
SOLANA_REF = "45296998a6f8e2a784db5d9f95e18fc23f70441a1039446801089879b08c7ef0"
SOLANA_CHAIN = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"

# ERC-7930 text, §6.4 of the research notes: binary ↔ name in both directions.
ERC_VECTORS = [
    (
        "0x00010000010114D8DA6BF26964AF9D7EED9E03E53415D37AA96045",
        f"{VITALIK}@eip155:1#4CA88C9C",
    ),
    (
        "0x0001000220" + SOLANA_REF + "20"
        "05333498d5aea4ae009585c43f7b8c30df8e70187d4a713d134f977fc8dfe0b5",
        f"MJKqp326RZCHnAAbew9MDdui3iCKWco7fsK9sVuZTX2@{SOLANA_CHAIN}#88835C11",
    ),
    (
        "0x000100000014D8DA6BF26964AF9D7EED9E03E53415D37AA96045",
        f"{VITALIK}@eip155#B26DB7CB",
    ),
    (
        "0x0001000220" + SOLANA_REF + "00",
        f"@{SOLANA_CHAIN}#2EB18670",
    ),
]

# Vectors of the intents protocol's docs and solver (§6.5): binary, chain id, address, checksum.
PROTOCOL_VECTORS = [
    ("0x0001000002210514d8dA6BF26964aF9D7eEd9e03E53415D37aA96045", 8453, VITALIK, "17DE0709"),
    (
        "0x0001000002210514833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        8453,
        "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        "3FF051A5",
    ),
    ("0x0001000002A4B114d8dA6BF26964aF9D7eEd9e03E53415D37aA96045", 42161, VITALIK, "D2E02854"),
    (
        "0x0001000002A4B114af88d065e77c8cC2239327C5EDb3A432268e5831",
        42161,
        "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
        "CF34A8D3",
    ),
    (
        "0x0001000003aa37dc14067e39121f2bba7531ccdf393bb76306ac11cac1",
        11155420,
        "0x067E39121f2bbA7531CCdf393bB76306Ac11cac1",
        "327B6C95",
    ),
]


@pytest.mark.parametrize(("binary", "name"), ERC_VECTORS)
def test_erc_vectors_binary_to_name(binary: str, name: str) -> None:
    assert erc7930.to_name(binary) == name


@pytest.mark.parametrize(("binary", "name"), ERC_VECTORS)
def test_erc_vectors_name_to_binary(binary: str, name: str) -> None:
    assert erc7930.from_name(name) == binary.lower()


@pytest.mark.parametrize(("binary", "chain_id", "address", "checksum"), PROTOCOL_VECTORS)
def test_protocol_vectors(binary: str, chain_id: int, address: str, checksum: str) -> None:
    decoded = erc7930.decode(binary)
    assert decoded.chain_type == 0
    assert decoded.chain_id == chain_id
    assert decoded.checksum_address == address
    name = f"{address}@eip155:{chain_id}#{checksum}"
    assert erc7930.to_name(binary) == name
    assert erc7930.from_name(name) == binary.lower()
    assert erc7930.encode(chain_id, address) == binary.lower()


def test_decode_fields_of_solana_vector() -> None:
    decoded = erc7930.decode(ERC_VECTORS[1][0])
    assert decoded.namespace == "solana"
    assert decoded.chain_reference == bytes.fromhex(SOLANA_REF)
    assert len(decoded.address) == 32
    with pytest.raises(Erc7930Error, match="chainType: a numeric chain id exists for eip155 only"):
        _ = decoded.chain_id
    with pytest.raises(Erc7930Error, match="chainType: EIP-55 text exists for eip155 only"):
        _ = decoded.checksum_address


def test_encode_is_minimal_big_endian_lowercase() -> None:
    assert erc7930.encode(10, VITALIK) == "0x00010000010a14" + VITALIK[2:].lower()
    assert erc7930.encode(256, VITALIK).startswith("0x00010000020100")


def test_to_hex_and_to_bytes_round_trip() -> None:
    decoded = erc7930.decode(PROTOCOL_VECTORS[0][0])
    assert decoded.to_hex() == PROTOCOL_VECTORS[0][0].lower()
    assert erc7930.decode(decoded.to_hex()) == decoded


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("00010000010114" + VITALIK[2:], "interop address: must be 0x-prefixed hex"),
        ("0x0001000001011", "interop address: must be 0x-prefixed hex with an even number"),
        ("0x00010000010114zz", "interop address: must be 0x-prefixed hex"),
        (1, "interop address: must be 0x-prefixed hex"),
        ("0x0001000001", "interop address: must hold at least 6 bytes, got 5"),
        ("0x", "interop address: must hold at least 6 bytes, got 0"),
        ("0x00020000010114" + VITALIK[2:], "version: must be 0x0001"),
        ("0x80010000010114" + VITALIK[2:], "version: must be 0x0001"),
        ("0x00010000010114" + VITALIK[2:] + "00", r"length: .* \(trailing bytes\)"),
        ("0x00010000010114" + VITALIK[2:-2], r"length: .* \(missing bytes\)"),
        ("0x0001000005010203", "chainReference: length byte says 5 bytes but the input ends"),
        ("0x000100000000", "interop address: chain reference and address must not both be empty"),
        ("0x0001000001001400" + "11" * 19, "chainReference: chain id must not be 0"),
        ("0x000100000200011400" + "11" * 19, "chainReference: must be the chain id in minimal"),
        ("0x0001000001011f" + "11" * 31, "address: must be 20 bytes for eip155, got 31 bytes"),
        ("0x00010000010101ab", "address: must be 20 bytes for eip155, got 1 bytes"),
    ],
)
def test_decode_rejects(text: str, message: str) -> None:
    with pytest.raises(Erc7930Error, match=message):
        erc7930.decode(text)


@pytest.mark.parametrize(
    "legacy",
    [
        # Draft layout with both lengths before both payloads (§6.6): must not parse as v1.
        "0x000100000314aa37dc067e39121f2bba7531ccdf393bb76306ac11cac1",
        # Older draft: 1-byte version, then lengths, then payloads.
        "0x0100000314aa37dc487c0a0a51ab4a5c0f52e0c10c1ab7bd7fe3a5d0",
    ],
)
def test_legacy_draft_layouts_fail(legacy: str) -> None:
    with pytest.raises(Erc7930Error):
        erc7930.decode(legacy)


def test_error_carries_field_and_rule() -> None:
    with pytest.raises(Erc7930Error) as caught:
        erc7930.decode("0x00020000010114" + VITALIK[2:])
    assert (caught.value.field, caught.value.rule) == ("version", "must be 0x0001")
    assert isinstance(caught.value, ValueError)


def test_eip155_without_chain_reference_has_no_chain_id() -> None:
    decoded = erc7930.decode(ERC_VECTORS[2][0])
    assert decoded.checksum_address == VITALIK
    with pytest.raises(Erc7930Error, match="chainReference: is empty, so there is no chain id"):
        _ = decoded.chain_id


def test_no_address_has_no_checksum_address() -> None:
    decoded = InteropAddress(0, b"\x01", b"")
    assert decoded.chain_id == 1
    with pytest.raises(Erc7930Error, match="address: is empty"):
        _ = decoded.checksum_address


def test_unknown_chain_type_decodes_but_has_no_namespace_or_name() -> None:
    decoded = erc7930.decode("0x00010004010102abcd")
    assert decoded.chain_type == 4
    with pytest.raises(Erc7930Error, match="chainType: 0x0004 is not a known CAIP-350 chain type"):
        _ = decoded.namespace
    with pytest.raises(Erc7930Error, match=r"eip155 and solana only, not 0x0004$"):
        erc7930.to_name("0x00010004010102abcd")
    with pytest.raises(Erc7930Error, match=r"eip155 and solana only, not starknet$"):
        erc7930.to_name("0x00010003010102abcd")


@pytest.mark.parametrize(
    ("chain_id", "address", "message"),
    [
        (0, VITALIK, "chainId: must be positive"),
        (-1, VITALIK, "chainId: must be positive"),
        (True, VITALIK, "chainId: must be an integer"),
        ("1", VITALIK, "chainId: must be an integer"),
        (1 << (8 * 255), VITALIK, "chainId: must fit in 255 bytes"),
        (1, VITALIK[:-1], "address: must be 0x followed by 40 hex digits"),
        (1, VITALIK[2:], "address: must be 0x followed by 40 hex digits"),
        (1, b"\x00" * 20, "address: must be 0x followed by 40 hex digits"),
    ],
)
def test_encode_rejects(chain_id: object, address: object, message: str) -> None:
    with pytest.raises(Erc7930Error, match=message):
        erc7930.encode(chain_id, address)  # type: ignore[arg-type]


def test_interop_address_constructor_checks() -> None:
    with pytest.raises(Erc7930Error, match="chainType: must fit in 2 bytes"):
        InteropAddress(0x10000, b"\x01", b"")
    with pytest.raises(Erc7930Error, match="chainReference: must fit in 255 bytes"):
        InteropAddress(0, b"\x01" * 256, b"")
    with pytest.raises(Erc7930Error, match="address: must be bytes"):
        InteropAddress(0, b"\x01", "0x00")  # type: ignore[arg-type]
    with pytest.raises(Erc7930Error, match="must not both be empty"):
        InteropAddress(0, b"", b"")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (f"{VITALIK}@eip155:1", "name: must end with #<checksum>"),
        (f"{VITALIK}eip155:1#4CA88C9C", "name: must have the form"),
        (f"{VITALIK}@eip155:1#4ca88c9c", "checksum: must be 8 uppercase hex digits"),
        (
            f"{VITALIK}@eip155:1#4CA88C9D",
            r"checksum: does not match the address \(expected 4CA88C9C",
        ),
        (f"{VITALIK}@bip122:000000000019d6689c085ae165831e93#00000000", "chain: namespace must be"),
        (f"{VITALIK}@cosmos:hub#00000000", "chain: namespace must be eip155 or solana"),
        (f"{VITALIK}@eip155:#00000000", "chain: has a colon but no reference"),
        (f"{VITALIK}@eip155:01#00000000", "chain: eip155 reference must be a positive decimal"),
        (f"{VITALIK}@eip155:0#00000000", "chain: eip155 reference must be a positive decimal"),
        (f"{VITALIK.lower()[:-1]}@eip155:1#00000000", "address: must be 0x followed by 40 hex"),
        (
            VITALIK.replace("dA6B", "da6B") + "@eip155:1#00000000",
            "address: mixed-case text fails its EIP-55",
        ),
        ("@eip155#00000000", "interop address: chain reference and address must not both be"),
        ("0OIl@solana:5eykt4#00000000", "address: must be base58 text, found '0'"),
        (12, "name: must be a string"),
    ],
)
def test_from_name_rejects(name: object, message: str) -> None:
    with pytest.raises(Erc7930Error, match=message):
        erc7930.from_name(name)  # type: ignore[arg-type]


def test_from_name_accepts_single_case_addresses() -> None:
    expected = erc7930.encode(1, VITALIK)
    lower = f"{VITALIK.lower()}@eip155:1#4CA88C9C"
    upper = "0x" + VITALIK[2:].upper() + "@eip155:1#4CA88C9C"
    assert erc7930.from_name(lower) == expected
    assert erc7930.from_name(upper) == expected


def test_base58_keeps_leading_zero_bytes() -> None:
    binary = "0x00010002010220" + "00" * 2 + "ab" * 30
    name = erc7930.to_name(binary)
    assert name.startswith("11")
    assert erc7930.from_name(name) == binary


chain_ids = st.integers(min_value=1, max_value=2**64)
addresses = st.binary(min_size=20, max_size=20)


@settings(max_examples=200)
@given(chain_ids, addresses)
def test_encode_decode_round_trip(chain_id: int, address: bytes) -> None:
    text = erc7930.encode(chain_id, "0x" + address.hex())
    decoded = erc7930.decode(text)
    assert (decoded.chain_id, decoded.address) == (chain_id, address)
    assert decoded.to_hex() == text


@settings(max_examples=100)
@given(chain_ids, addresses)
def test_name_round_trip(chain_id: int, address: bytes) -> None:
    text = erc7930.encode(chain_id, "0x" + address.hex())
    name = erc7930.to_name(text)
    assert name.split("@")[1].split("#")[0] == f"eip155:{chain_id}"
    assert erc7930.from_name(name) == text


@settings(max_examples=100)
@given(st.binary(min_size=1, max_size=40), st.binary(max_size=40))
def test_solana_name_round_trip(reference: bytes, address: bytes) -> None:
    text = InteropAddress(2, reference, address).to_hex()
    assert erc7930.from_name(erc7930.to_name(text)) == text


@settings(max_examples=200)
@given(st.binary(max_size=64))
def test_decode_arbitrary_bytes_either_parses_or_names_the_rule(raw: bytes) -> None:
    try:
        decoded = erc7930.decode("0x" + raw.hex())
    except Erc7930Error as error:
        assert str(error) == f"{error.field}: {error.rule}"
    else:
        assert decoded.to_bytes() == raw


@settings(max_examples=100)
@given(chain_ids, addresses, st.binary(min_size=1, max_size=3))
def test_extended_or_truncated_encodings_are_rejected(
    chain_id: int, address: bytes, extra: bytes
) -> None:
    text = erc7930.encode(chain_id, "0x" + address.hex())
    with pytest.raises(Erc7930Error, match="length"):
        erc7930.decode(text + extra.hex())
    with pytest.raises(Erc7930Error):
        erc7930.decode(text[: -2 * len(extra)])
