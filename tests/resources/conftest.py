"""Shared values for the resources tests: addresses, ERC-7930 forms and a wire quote."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit.codecs import erc7930

PAYER = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"
USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
USDC_ARBITRUM = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
ESCROW = "0x000025c3226C00B2Cdc200005a1600509f4e00C0"
FILLER = "0x94807fE4300D15909C1a4fd39f76c61D68aee11E"
TX_HASH = "0x" + "ab" * 32


def interop(chain_id: int, address: str) -> str:
    """The ERC-7930 hex of an eip155 address."""
    return erc7930.encode(chain_id, address)


@pytest.fixture
def quote_wire() -> dict[str, Any]:
    """A quote as the transaction endpoint returns it, in wire form."""
    return {
        "preview": {
            "inputs": [
                {
                    "user": interop(8453, PAYER),
                    "asset": interop(8453, USDC_BASE),
                    "amount": "10000000",
                }
            ],
            "outputs": [
                {
                    "receiver": interop(42161, PAYER),
                    "asset": interop(42161, USDC_ARBITRUM),
                    "amount": "9995000",
                }
            ],
        },
        "quoteId": "q-1",
        "validUntil": 1_750_000_015,
        "eta": 30,
        "provider": "service",
        "failureHandling": "refund-automatic",
        "partialFill": False,
        "metadata": {"exclusiveFor": FILLER},
        "order": {
            "nonce": "7",
            "expires": 1_750_000_000 + 360 + 43_200,
            "fillDeadline": 1_750_000_360,
            "inputOracle": FILLER,
        },
        "transactionRequest": {
            "from": PAYER,
            "to": ESCROW,
            "chainId": 8453,
            "data": "0x7515fd56",
            "value": "0x0",
            "gasLimit": "250000",
        },
    }
