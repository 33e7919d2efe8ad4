"""Address and key checks shared by the parser and the validator."""

from __future__ import annotations

import re
from functools import lru_cache

from eth_utils import to_checksum_address

from toolkit.scenario.errors import ScenarioError

__all__ = ["check_private_key", "checksum"]

_HEX40 = re.compile(r"^0x[0-9a-fA-F]{40}$")
_HEX64 = re.compile(r"^0x[0-9a-fA-F]{64}$")
# secp256k1 group order: a private key must lie in [1, n-1].
_SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def checksum(value: object, path: str) -> str:
    """Return the EIP-55 form of a hex address; reject a malformed or mis-checksummed one.

    >>> checksum("0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "tokens[0].address")
    '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'
    """
    if not isinstance(value, str) or not _HEX40.match(value):
        raise ScenarioError(path, "must be a 0x-prefixed 20-byte hex address")
    body = value[2:]
    result = _eip55(value)
    # All-lower or all-upper carries no checksum; mixed case must match EIP-55.
    if body != body.lower() and body != body.upper() and result != value:
        raise ScenarioError(path, "bad EIP-55 checksum")
    return str(result)


def check_private_key(value: object, path: str) -> str:
    """Check a secp256k1 private key given as 0x + 64 hex digits; never echo the value."""
    if not isinstance(value, str) or not _HEX64.match(value):
        raise ScenarioError(path, "must be a 0x-prefixed 32-byte hex private key")
    if not 0 < int(value, 16) < _SECP256K1_N:
        raise ScenarioError(path, "is not a valid secp256k1 private key")
    return value.lower()


@lru_cache(maxsize=4096)
def _eip55(value: str) -> str:
    # keccak per call: a scenario names each address on every load, and checks it again when built
    return str(to_checksum_address(value))
