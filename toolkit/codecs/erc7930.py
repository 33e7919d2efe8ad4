"""ERC-7930 interoperable addresses: the v1 binary layout and its human-readable name.

Binary layout (hex text with a ``0x`` prefix)::

    version (2) | chainType (2) | chainRefLen (1) | chainRef (n) | addrLen (1) | address (m)

``encode``/``decode`` handle the binary form; ``to_name``/``from_name`` the name form
``<address>@<chain>#<checksum>``. Only ``eip155`` can be encoded from a chain id; ``decode``
reads every chain type, and the name form covers ``eip155`` and ``solana`` (base58 text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from eth_utils import keccak

from toolkit.codecs import abi
from toolkit.errors import InputError

__all__ = [
    "CHAIN_TYPES",
    "Erc7930Error",
    "InteropAddress",
    "decode",
    "encode",
    "from_name",
    "to_name",
]

VERSION: Final = 1
EIP155: Final = 0x0000
SOLANA: Final = 0x0002

# CAIP-350 binary keys of the CAIP-2 namespaces (0x0004 is unassigned).
CHAIN_TYPES: Final[dict[int, str]] = {
    0x0000: "eip155",
    0x0001: "bip122",
    0x0002: "solana",
    0x0003: "starknet",
    0x0005: "sui",
}
_NAMESPACE_TO_TYPE: Final = {name: key for key, name in CHAIN_TYPES.items()}

_HEX_RE: Final = re.compile(r"0x(?:[0-9a-fA-F]{2})*")
_ADDRESS_RE: Final = re.compile(r"0x[0-9a-fA-F]{40}")
_DECIMAL_RE: Final = re.compile(r"[1-9][0-9]*")
_CHECKSUM_RE: Final = re.compile(r"[0-9A-F]{8}")
_B58_ALPHABET: Final = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX: Final = {c: i for i, c in enumerate(_B58_ALPHABET)}


class Erc7930Error(InputError):
    """A malformed interoperable address; ``field`` names the part, ``rule`` the broken rule."""

    field: str
    rule: str

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule


@dataclass(frozen=True, slots=True)
class InteropAddress:
    """A decoded v1 interoperable address.

    >>> a = decode("0x0001000002210514833589fcd6edb6e08f4c7c32d4f71b54bda02913")
    >>> (a.namespace, a.chain_id, a.checksum_address)
    ('eip155', 8453, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913')
    """

    chain_type: int
    chain_reference: bytes
    address: bytes

    def __post_init__(self) -> None:
        if isinstance(self.chain_type, bool) or not isinstance(self.chain_type, int):
            raise Erc7930Error("chainType", "must be an integer")
        if not 0 <= self.chain_type <= 0xFFFF:
            raise Erc7930Error("chainType", "must fit in 2 bytes")
        for field, value in (("chainReference", self.chain_reference), ("address", self.address)):
            if not isinstance(value, bytes):
                raise Erc7930Error(field, "must be bytes")
            if len(value) > 255:
                raise Erc7930Error(field, "must fit in 255 bytes")
        if not self.chain_reference and not self.address:
            raise Erc7930Error(
                "interop address", "chain reference and address must not both be empty"
            )

    @property
    def namespace(self) -> str:
        """The CAIP-2 namespace of ``chain_type`` (``eip155``, ``solana``, ...)."""
        try:
            return CHAIN_TYPES[self.chain_type]
        except KeyError:
            raise Erc7930Error(
                "chainType", f"0x{self.chain_type:04x} is not a known CAIP-350 chain type"
            ) from None

    @property
    def chain_id(self) -> int:
        """The numeric eip155 chain id (an error for other chain types or no chain reference)."""
        if self.chain_type != EIP155:
            raise Erc7930Error(
                "chainType",
                f"a numeric chain id exists for eip155 only, not 0x{self.chain_type:04x}",
            )
        if not self.chain_reference:
            raise Erc7930Error("chainReference", "is empty, so there is no chain id")
        return int.from_bytes(self.chain_reference, "big")

    @property
    def checksum_address(self) -> str:
        """The EIP-55 checksummed text of a 20-byte eip155 address."""
        if self.chain_type != EIP155:
            raise Erc7930Error(
                "chainType", f"EIP-55 text exists for eip155 only, not 0x{self.chain_type:04x}"
            )
        if len(self.address) != 20:
            raise Erc7930Error("address", "is empty, so there is no EIP-55 text")
        return abi.checksum(self.address)

    def to_bytes(self) -> bytes:
        """The v1 binary form."""
        return (
            VERSION.to_bytes(2, "big")
            + self.chain_type.to_bytes(2, "big")
            + bytes([len(self.chain_reference)])
            + self.chain_reference
            + bytes([len(self.address)])
            + self.address
        )

    def to_hex(self) -> str:
        """The v1 binary form as lowercase ``0x`` hex."""
        return "0x" + self.to_bytes().hex()


def encode(chain_id: int, address: str) -> str:
    """Encode an eip155 chain id and a 20-byte hex address as lowercase ERC-7930 hex.

    >>> encode(1, "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045")
    '0x00010000010114d8da6bf26964af9d7eed9e03e53415d37aa96045'
    """
    if isinstance(chain_id, bool) or not isinstance(chain_id, int):
        raise Erc7930Error("chainId", "must be an integer")
    if chain_id <= 0:
        raise Erc7930Error("chainId", "must be positive")
    reference = chain_id.to_bytes((chain_id.bit_length() + 7) // 8, "big")
    if len(reference) > 255:
        raise Erc7930Error("chainId", "must fit in 255 bytes")
    if not isinstance(address, str) or _ADDRESS_RE.fullmatch(address) is None:
        raise Erc7930Error("address", "must be 0x followed by 40 hex digits")
    return InteropAddress(EIP155, reference, bytes.fromhex(address[2:])).to_hex()


def decode(text: str) -> InteropAddress:
    """Decode ERC-7930 v1 hex, rejecting any malformed or inconsistent layout.

    >>> decode("0x00010000010114d8da6bf26964af9d7eed9e03e53415d37aa96045").chain_id
    1
    """
    if not isinstance(text, str) or _HEX_RE.fullmatch(text) is None:
        raise Erc7930Error(
            "interop address", "must be 0x-prefixed hex with an even number of digits"
        )
    raw = bytes.fromhex(text[2:])
    if len(raw) < 6:
        raise Erc7930Error("interop address", f"must hold at least 6 bytes, got {len(raw)}")
    if int.from_bytes(raw[0:2], "big") != VERSION:
        raise Erc7930Error("version", "must be 0x0001")
    chain_type = int.from_bytes(raw[2:4], "big")
    ref_len = raw[4]
    if len(raw) < 6 + ref_len:
        raise Erc7930Error(
            "chainReference", f"length byte says {ref_len} bytes but the input ends early"
        )
    reference = raw[5 : 5 + ref_len]
    addr_len = raw[5 + ref_len]
    expected = 6 + ref_len + addr_len
    if len(raw) != expected:
        what = "missing" if len(raw) < expected else "trailing"
        raise Erc7930Error(
            "length", f"lengths give {expected} bytes but the input has {len(raw)} ({what} bytes)"
        )
    decoded = InteropAddress(chain_type, reference, raw[6 + ref_len :])
    if chain_type == EIP155:
        _check_eip155(decoded)
    return decoded


def to_name(text: str) -> str:
    """The human-readable ``<address>@<chain>#<checksum>`` name of ERC-7930 hex.

    >>> to_name("0x00010000010114d8da6bf26964af9d7eed9e03e53415d37aa96045")
    '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045@eip155:1#4CA88C9C'
    """
    decoded = decode(text)
    namespace = _named_namespace(decoded.chain_type)
    address = _address_text(namespace, decoded.address)
    chain = namespace
    if decoded.chain_reference:
        chain += ":" + _reference_text(namespace, decoded.chain_reference)
    return f"{address}@{chain}#{_checksum(decoded)}"


def from_name(name: str) -> str:
    """The lowercase ERC-7930 hex of a ``<address>@<chain>#<checksum>`` name.

    >>> from_name("0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045@eip155:1#4CA88C9C")
    '0x00010000010114d8da6bf26964af9d7eed9e03e53415d37aa96045'
    """
    if not isinstance(name, str):
        raise Erc7930Error("name", "must be a string")
    body, hash_mark, checksum = name.rpartition("#")
    if not hash_mark:
        raise Erc7930Error("name", "must end with #<checksum>")
    address_text, at, chain = body.rpartition("@")
    if not at:
        raise Erc7930Error("name", "must have the form <address>@<chain>#<checksum>")
    namespace, colon, reference_text = chain.partition(":")
    if namespace not in ("eip155", "solana"):
        raise Erc7930Error(
            "chain", f"namespace must be eip155 or solana for the name form, got {namespace!r}"
        )
    if colon and not reference_text:
        raise Erc7930Error("chain", "has a colon but no reference")
    reference = _parse_reference(namespace, reference_text) if colon else b""
    address = _parse_address(namespace, address_text)
    if len(address) > 255:
        raise Erc7930Error("address", "must fit in 255 bytes")
    decoded = InteropAddress(_NAMESPACE_TO_TYPE[namespace], reference, address)
    if _CHECKSUM_RE.fullmatch(checksum) is None:
        raise Erc7930Error("checksum", "must be 8 uppercase hex digits")
    if checksum != _checksum(decoded):
        raise Erc7930Error(
            "checksum", f"does not match the address (expected {_checksum(decoded)})"
        )
    return decoded.to_hex()


def _check_eip155(decoded: InteropAddress) -> None:
    reference = decoded.chain_reference
    if reference and int.from_bytes(reference, "big") == 0:
        raise Erc7930Error("chainReference", "chain id must not be 0")
    if reference and reference[0] == 0:
        # CAIP-350 eip155 profile: minimal big-endian, so a chain id has exactly one encoding.
        raise Erc7930Error(
            "chainReference", "must be the chain id in minimal big-endian bytes (no leading zero)"
        )
    if len(decoded.address) not in (0, 20):
        raise Erc7930Error(
            "address", f"must be 20 bytes for eip155, got {len(decoded.address)} bytes"
        )


def _checksum(decoded: InteropAddress) -> str:
    # The checksum covers the binary without its 2 version bytes.
    return keccak(decoded.to_bytes()[2:])[:4].hex().upper()


def _named_namespace(chain_type: int) -> str:
    namespace = CHAIN_TYPES.get(chain_type, f"0x{chain_type:04x}")
    if namespace not in ("eip155", "solana"):
        raise Erc7930Error(
            "chainType", f"the name form is supported for eip155 and solana only, not {namespace}"
        )
    return namespace


def _address_text(namespace: str, address: bytes) -> str:
    if not address:
        return ""
    if namespace == "eip155":
        return abi.checksum(address)
    return _b58encode(address)


def _reference_text(namespace: str, reference: bytes) -> str:
    if namespace == "eip155":
        return str(int.from_bytes(reference, "big"))
    return _b58encode(reference)


def _parse_reference(namespace: str, text: str) -> bytes:
    if namespace == "eip155":
        if _DECIMAL_RE.fullmatch(text) is None:
            raise Erc7930Error("chain", "eip155 reference must be a positive decimal chain id")
        chain_id = int(text)
        reference = chain_id.to_bytes((chain_id.bit_length() + 7) // 8, "big")
    else:
        reference = _b58decode(text, "chain")
    if len(reference) > 255:
        raise Erc7930Error("chain", "reference must fit in 255 bytes")
    return reference


def _parse_address(namespace: str, text: str) -> bytes:
    if not text:
        return b""
    if namespace == "eip155":
        if _ADDRESS_RE.fullmatch(text) is None:
            raise Erc7930Error("address", "must be 0x followed by 40 hex digits")
        has_lower, has_upper = text[2:] != text[2:].upper(), text[2:] != text[2:].lower()
        if has_lower and has_upper and abi.checksum(text) != text:
            raise Erc7930Error("address", "mixed-case text fails its EIP-55 checksum")
        return bytes.fromhex(text[2:])
    return _b58decode(text, "address")


def _b58encode(data: bytes) -> str:
    zeros = len(data) - len(data.lstrip(b"\0"))
    number = int.from_bytes(data, "big")
    digits = []
    while number:
        number, rest = divmod(number, 58)
        digits.append(_B58_ALPHABET[rest])
    return "1" * zeros + "".join(reversed(digits))


def _b58decode(text: str, field: str) -> bytes:
    number = 0
    for char in text:
        if char not in _B58_INDEX:
            raise Erc7930Error(field, f"must be base58 text, found {char!r}")
        number = number * 58 + _B58_INDEX[char]
    zeros = len(text) - len(text.lstrip("1"))
    body = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return b"\0" * zeros + body
