"""EIP-712 borrow authorizations: typed data, digest, sign and recover, tampering, secrecy."""

from __future__ import annotations

import dataclasses
from typing import Any

import eth_abi
import pytest
from eth_account import Account
from eth_utils import keccak
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.chain.borrow import (
    BORROW_TYPE,
    Borrow,
    borrow_digest,
    borrow_typed_data,
    recover_borrow_signer,
    sign_borrow,
)
from toolkit.codecs.errors import InvalidValue

KEY = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
SIGNER = Account.from_key(KEY).address


def _borrow() -> Borrow:
    return Borrow(
        chain_id=42161,
        pool="0xB58Bb9643884abbbad64FA7eBc874c5481E5c032",
        caller="0x" + "22" * 20,
        borrow_token="0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
        amount=9_968_269,
        target="0x0000000000eC36B683C2E6AC89e9A75989C22a2e",
        target_call_data=bytes.fromhex("978fb896") + b"\x01" * 64,
        nonce=12345,
        deadline=1_760_000_300,
    )


@pytest.fixture
def borrow() -> Borrow:
    return _borrow()


def test_typed_data_shape(borrow: Borrow) -> None:
    typed = borrow_typed_data(borrow)
    assert typed["primaryType"] == "Borrow"
    assert typed["domain"] == {
        "name": "LiquidityPool",
        "version": "1.0.0",
        "chainId": 42161,
        "verifyingContract": "0xB58Bb9643884abbbad64FA7eBc874c5481E5c032",
    }
    fields = ",".join(f"{f['type']} {f['name']}" for f in typed["types"]["Borrow"])
    assert f"Borrow({fields})" == BORROW_TYPE
    assert typed["message"]["targetCallData"] == "0x978fb896" + "01" * 64


def test_digest_matches_an_independent_eip712_computation(borrow: Borrow) -> None:
    domain_type = (
        "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
    )
    domain = keccak(
        keccak(text=domain_type)
        + keccak(text="LiquidityPool")
        + keccak(text="1.0.0")
        + eth_abi.encode(["uint256", "address"], [borrow.chain_id, borrow.pool])
    )
    struct = keccak(
        keccak(text=BORROW_TYPE)
        + eth_abi.encode(
            ["address", "address", "uint256", "address", "bytes32", "uint256", "uint256"],
            [
                borrow.caller,
                borrow.borrow_token,
                borrow.amount,
                borrow.target,
                keccak(borrow.target_call_data),
                borrow.nonce,
                borrow.deadline,
            ],
        )
    )
    assert borrow_digest(borrow) == "0x" + keccak(b"\x19\x01" + domain + struct).hex()


def test_sign_then_recover(borrow: Borrow) -> None:
    signature = sign_borrow(KEY, borrow)
    assert len(bytes.fromhex(signature[2:])) == 65
    assert recover_borrow_signer(signature, borrow) == SIGNER
    assert recover_borrow_signer(sign_borrow(bytes.fromhex(KEY[2:]), borrow), borrow) == SIGNER


def test_signing_is_deterministic(borrow: Borrow) -> None:
    assert sign_borrow(KEY, borrow) == sign_borrow(KEY, borrow)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("chain_id", 8453),
        ("pool", "0x0E16326e6921395edA2575740374E754b22810eb"),
        ("caller", "0x" + "23" * 20),
        ("borrow_token", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
        ("amount", 9_968_270),
        ("target", "0x" + "44" * 20),
        ("target_call_data", b"\x00"),
        ("nonce", 12346),
        ("deadline", 1_760_000_301),
    ],
)
def test_tampering_any_field_changes_the_signer(borrow: Borrow, field: str, value: Any) -> None:
    signature = sign_borrow(KEY, borrow)
    tampered = dataclasses.replace(borrow, **{field: value})
    assert recover_borrow_signer(signature, tampered) != SIGNER


@settings(max_examples=15, deadline=None)
@given(
    amount=st.integers(min_value=0, max_value=2**256 - 1),
    nonce=st.integers(min_value=0, max_value=2**256 - 1),
    data=st.binary(max_size=200),
)
def test_round_trip_property(amount: int, nonce: int, data: bytes) -> None:
    b = dataclasses.replace(_borrow(), amount=amount, nonce=nonce, target_call_data=data)
    assert recover_borrow_signer(sign_borrow(KEY, b), b) == SIGNER


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("0x1234", "private_key: must be 32 bytes or 64 hex characters"),
        (b"\x01" * 31, "private_key: must be 32 bytes"),
        ("0x" + "00" * 32, "private_key: is not a valid secp256k1 private key"),
        ("0x" + "ff" * 32, "private_key: is not a valid secp256k1 private key"),
        (12345, "private_key: must be 32 bytes or 64 hex characters"),
    ],
)
def test_bad_keys_are_rejected_without_echoing_them(
    borrow: Borrow, key: object, message: str
) -> None:
    with pytest.raises(InvalidValue, match=message) as info:
        sign_borrow(key, borrow)  # type: ignore[arg-type]
    text = str(info.value) + repr(info.value)
    assert "ff" * 8 not in text and "1234" not in text
    # No chained exception may carry the key either.
    assert info.value.__cause__ is None
    assert info.value.__context__ is None or info.value.__suppress_context__


def test_the_key_never_appears_in_results(borrow: Borrow) -> None:
    signature = sign_borrow(KEY, borrow)
    assert KEY[2:] not in signature
    assert KEY[2:] not in repr(borrow) and KEY[2:] not in str(borrow_typed_data(borrow))


@pytest.mark.parametrize(
    ("signature", "message"),
    [
        ("0x1234", "signature: must be 0x followed by 65 bytes of hex"),
        ("0x" + "00" * 65, "signature: cannot be recovered"),
        ("0x" + "11" * 64 + "05", "signature: cannot be recovered"),
    ],
)
def test_bad_signatures(borrow: Borrow, signature: str, message: str) -> None:
    with pytest.raises(InvalidValue, match=message):
        recover_borrow_signer(signature, borrow)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"chain_id": 0}, "chainId: must be positive"),
        ({"pool": "0xpool"}, "pool: must be a 0x-prefixed 20-byte hex address"),
        ({"borrow_token": None}, "borrowToken: must be a 0x-prefixed"),
        ({"amount": 2**256}, r"amount: must be between 0 and 2\*\*256-1"),
        ({"target_call_data": "abc"}, "targetCallData: must be bytes or a 0x-prefixed hex"),
        ({"deadline": -1}, "deadline: must be between"),
    ],
)
def test_borrow_rejections(borrow: Borrow, change: dict, message: str) -> None:
    with pytest.raises(InvalidValue, match=message):
        dataclasses.replace(borrow, **change)


def test_functions_require_a_borrow() -> None:
    with pytest.raises(InvalidValue, match="borrow: must be a Borrow"):
        borrow_typed_data({"amount": 1})  # type: ignore[arg-type]
