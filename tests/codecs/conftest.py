"""Shared fixtures for the codec tests: the §7.2 worked order (vectors A and B)."""

from __future__ import annotations

import dataclasses

import pytest

from toolkit.codecs.escrow import MandateOutput, StandardOrder, to_bytes32, token_id

USER = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"
OUTPUT_SETTLER = "0x0000000000eC36B683C2E6AC89e9A75989C22a2e"
ORACLE = "0x0000003E06000007A224AeE90052fA6bb46d43C9"
USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
USDC_ARBITRUM = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"

VECTOR_B_CONTEXT = bytes.fromhex(
    "e000000000000000000000000094807fe4300d15909c1a4fd39f76c61d68aee11e68e77454"
)


@pytest.fixture
def vector_a() -> StandardOrder:
    output = MandateOutput(
        oracle=to_bytes32(ORACLE),
        settler=to_bytes32(OUTPUT_SETTLER),
        chain_id=42161,
        token=to_bytes32(USDC_ARBITRUM),
        amount=9968269,
        recipient=to_bytes32(USER),
    )
    return StandardOrder(
        user=USER,
        nonce=1,
        origin_chain_id=8453,
        expires=1760003600,
        fill_deadline=1760000000,
        input_oracle=ORACLE,
        inputs=((token_id(USDC_BASE), 10000000),),
        outputs=(output,),
    )


@pytest.fixture
def vector_b(vector_a: StandardOrder) -> StandardOrder:
    output = dataclasses.replace(vector_a.outputs[0], context=VECTOR_B_CONTEXT)
    return dataclasses.replace(vector_a, outputs=(output,))
