"""EIP-712 borrow authorizations for the liquidity pool.

The pool accepts ``borrow(...)`` only with a signature over the typed struct
``Borrow(address caller,address borrowToken,uint256 amount,address target,bytes targetCallData,
uint256 nonce,uint256 deadline)`` in the domain ``LiquidityPool`` / ``1.0.0`` / destination chain
id / pool address. eth-account does the hashing and the cryptography.

Private keys are taken as arguments and never appear in a repr or an error message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_utils import keccak

from toolkit.codecs import abi
from toolkit.codecs.errors import InvalidValue

__all__ = [
    "BORROW_TYPE",
    "DOMAIN_NAME",
    "DOMAIN_VERSION",
    "Borrow",
    "borrow_digest",
    "borrow_typed_data",
    "recover_borrow_signer",
    "sign_borrow",
]

DOMAIN_NAME = "LiquidityPool"
DOMAIN_VERSION = "1.0.0"
BORROW_TYPE = (
    "Borrow(address caller,address borrowToken,uint256 amount,address target,"
    "bytes targetCallData,uint256 nonce,uint256 deadline)"
)

_KEY_RE = re.compile(r"^(0x)?[0-9a-fA-F]{64}$")
_SIGNATURE_RE = re.compile(r"^0x[0-9a-fA-F]{130}$")

_TYPES = {
    "EIP712Domain": [
        {"name": "name", "type": "string"},
        {"name": "version", "type": "string"},
        {"name": "chainId", "type": "uint256"},
        {"name": "verifyingContract", "type": "address"},
    ],
    "Borrow": [
        {"name": "caller", "type": "address"},
        {"name": "borrowToken", "type": "address"},
        {"name": "amount", "type": "uint256"},
        {"name": "target", "type": "address"},
        {"name": "targetCallData", "type": "bytes"},
        {"name": "nonce", "type": "uint256"},
        {"name": "deadline", "type": "uint256"},
    ],
}


@dataclass(frozen=True)
class Borrow:
    """What a borrow authorization covers: the struct fields plus the domain (chain, pool).

    Example:
        >>> b = Borrow(
        ...     chain_id=42161,
        ...     pool="0x" + "11" * 20,
        ...     caller="0x" + "22" * 20,
        ...     borrow_token="0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
        ...     amount=1_000_000,
        ...     target="0x0000000000eC36B683C2E6AC89e9A75989C22a2e",
        ...     target_call_data=b"",
        ...     nonce=7,
        ...     deadline=1_760_000_000,
        ... )
        >>> b.pool
        '0x1111111111111111111111111111111111111111'
    """

    chain_id: int
    pool: str
    caller: str
    borrow_token: str
    amount: int
    target: str
    target_call_data: bytes
    nonce: int
    deadline: int

    def __post_init__(self) -> None:
        abi.uint(self.chain_id, 256, "chainId")
        if self.chain_id == 0:
            raise InvalidValue("chainId", "must be positive")
        for name, wire in (
            ("pool", "pool"),
            ("caller", "caller"),
            ("borrow_token", "borrowToken"),
            ("target", "target"),
        ):
            object.__setattr__(self, name, abi.address(getattr(self, name), wire))
        abi.uint(self.amount, 256, "amount")
        object.__setattr__(
            self, "target_call_data", abi.data(self.target_call_data, "targetCallData")
        )
        abi.uint(self.nonce, 256, "nonce")
        abi.uint(self.deadline, 256, "deadline")


def _check(borrow: Any) -> Borrow:
    if not isinstance(borrow, Borrow):
        raise InvalidValue("borrow", "must be a Borrow")
    return borrow


def borrow_typed_data(borrow: Borrow) -> dict[str, Any]:
    """The full EIP-712 typed data (JSON-friendly: ``targetCallData`` as ``0x`` hex).

    Example:
        >>> a = ["0x" + c * 20 for c in ("11", "22", "33", "44")]
        >>> b = Borrow(42161, a[0], a[1], a[2], 1_000_000, a[3], b"", 7, 1_760_000_000)
        >>> borrow_typed_data(b)["domain"]["name"]
        'LiquidityPool'
    """
    borrow = _check(borrow)
    return {
        "types": {name: [dict(f) for f in fields] for name, fields in _TYPES.items()},
        "primaryType": "Borrow",
        "domain": {
            "name": DOMAIN_NAME,
            "version": DOMAIN_VERSION,
            "chainId": borrow.chain_id,
            "verifyingContract": borrow.pool,
        },
        "message": {
            "caller": borrow.caller,
            "borrowToken": borrow.borrow_token,
            "amount": borrow.amount,
            "target": borrow.target,
            "targetCallData": abi.hexstr(borrow.target_call_data),
            "nonce": borrow.nonce,
            "deadline": borrow.deadline,
        },
    }


def borrow_digest(borrow: Borrow) -> str:
    """The 32-byte EIP-712 digest that is signed (``0x`` hex).

    Example:
        >>> a = ["0x" + c * 20 for c in ("11", "22", "33", "44")]
        >>> b = Borrow(42161, a[0], a[1], a[2], 1_000_000, a[3], b"", 7, 1_760_000_000)
        >>> len(borrow_digest(b))
        66
    """
    signable = encode_typed_data(full_message=borrow_typed_data(borrow))
    return abi.hexstr(keccak(b"\x19" + signable.version + signable.header + signable.body))


def _key(private_key: Any) -> bytes:
    if isinstance(private_key, bytes | bytearray):
        if len(private_key) != 32:
            raise InvalidValue("private_key", "must be 32 bytes")
        return bytes(private_key)
    if isinstance(private_key, str) and _KEY_RE.match(private_key):
        return bytes.fromhex(private_key.removeprefix("0x"))
    raise InvalidValue("private_key", "must be 32 bytes or 64 hex characters")


def sign_borrow(private_key: str | bytes, borrow: Borrow) -> str:
    """Sign the borrow authorization; returns the 65-byte signature as ``0x`` hex (r ‖ s ‖ v).

    Example:
        >>> a = ["0x" + c * 20 for c in ("11", "22", "33", "44")]
        >>> b = Borrow(42161, a[0], a[1], a[2], 1_000_000, a[3], b"", 7, 1_760_000_000)
        >>> len(sign_borrow("0x" + "01" * 32, b))
        132
    """
    key = _key(private_key)
    typed = borrow_typed_data(borrow)
    try:
        signed = Account.sign_typed_data(key, full_message=typed)
    except Exception:
        # Raised without the cause: key-handling errors must not carry the key anywhere.
        raise InvalidValue("private_key", "is not a valid secp256k1 private key") from None
    return abi.hexstr(bytes(signed.signature))


def recover_borrow_signer(signature: str, borrow: Borrow) -> str:
    """The checksummed address that produced ``signature`` over this borrow authorization.

    Example:
        >>> a = ["0x" + c * 20 for c in ("11", "22", "33", "44")]
        >>> b = Borrow(42161, a[0], a[1], a[2], 1_000_000, a[3], b"", 7, 1_760_000_000)
        >>> sig = sign_borrow("0x" + "01" * 32, b)
        >>> recover_borrow_signer(sig, b) == Account.from_key("0x" + "01" * 32).address
        True
    """
    if not isinstance(signature, str) or not _SIGNATURE_RE.match(signature):
        raise InvalidValue("signature", "must be 0x followed by 65 bytes of hex")
    signable = encode_typed_data(full_message=borrow_typed_data(borrow))
    try:
        return str(Account.recover_message(signable, signature=bytes.fromhex(signature[2:])))
    except Exception as exc:
        raise InvalidValue("signature", f"cannot be recovered ({exc})") from exc
