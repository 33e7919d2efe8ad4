"""Validation and conversion helpers shared by the encoders (private).

Every helper takes the name of the field it checks so that errors read ``"<field>: <rule>"``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from eth_utils import to_checksum_address

from toolkit.codecs.errors import InvalidValue

ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"
UINT256_MAX = 2**256 - 1

_ADDRESS_RE = re.compile(r"^0x[0-9a-fA-F]{40}$")
_HEX_RE = re.compile(r"^0x(?:[0-9a-fA-F]{2})*$")
_BYTES32_RE = re.compile(r"^0x[0-9a-fA-F]{64}$")


def checksum(value: str | bytes) -> str:
    """The EIP-55 checksummed form of an address given as hex (any case) or as 20 raw bytes.

    A checksum is a keccak of the address, and the simulated chains checksum the same few
    hundred addresses (tokens, pools, the router, users) thousands of times a run: so the
    answers are cached, by the lowercase address. Input eth_utils refuses raises its error.

    >>> checksum("0x" + "ab" * 20), checksum(bytes.fromhex("ab" * 20)) == checksum("0x" + "AB" * 20)
    ('0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB', True)
    """
    if isinstance(value, str):
        return _checksum(value.lower())
    if len(value) == 20:
        return _checksum("0x" + bytes(value).hex())
    return str(to_checksum_address(value))  # eth_utils' own error


@lru_cache(maxsize=16_384)  # bounded: a served instance sees any address a client sends
def _checksum(lower: str) -> str:
    return str(to_checksum_address(lower))


def address(value: Any, field: str) -> str:
    """Return ``value`` as an EIP-55 checksummed address, any input case accepted."""
    if not isinstance(value, str) or not _ADDRESS_RE.match(value):
        raise InvalidValue(field, "must be a 0x-prefixed 20-byte hex address")
    return checksum(value)


def uint(value: Any, bits: int, field: str) -> int:
    """Return ``value`` if it is an int in ``[0, 2**bits)`` (bool is rejected)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidValue(field, "must be an integer")
    if value < 0 or value >= 2**bits:
        raise InvalidValue(field, f"must be between 0 and 2**{bits}-1")
    return value


def data(value: Any, field: str) -> bytes:
    """Return ``value`` as bytes; accepts bytes or a ``0x`` hex string of whole bytes."""
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, str) and _HEX_RE.match(value):
        return bytes.fromhex(value[2:])
    raise InvalidValue(field, "must be bytes or a 0x-prefixed hex string of whole bytes")


def bytes32(value: Any, field: str) -> str:
    """Return ``value`` as a lowercase ``0x`` + 64 hex string (the one bytes32 representation)."""
    if not isinstance(value, str) or not _BYTES32_RE.match(value):
        raise InvalidValue(field, "must be a 0x-prefixed 32-byte hex string")
    return value.lower()


def to_bytes32(value: str, field: str = "address") -> str:
    """Left-pad a 20-byte address to a lowercase bytes32 hex string."""
    return "0x" + "00" * 12 + address(value, field)[2:].lower()


def from_bytes32(value: str, field: str = "bytes32") -> str:
    """Return the checksummed address held in a bytes32; the upper 12 bytes must be zero."""
    word = bytes32(value, field)
    if word[2:26] != "0" * 24:
        raise InvalidValue(field, "upper 12 bytes must be zero to hold an address")
    return checksum("0x" + word[26:])


def hexstr(raw: bytes) -> str:
    """``0x`` + lowercase hex of ``raw``."""
    return "0x" + raw.hex()
