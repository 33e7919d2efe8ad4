"""Shared fixtures for the chain tests: quotes and the parties of an order."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from toolkit.chain.registry import default_registry
from toolkit.codecs import erc7930
from toolkit.resources import Input, Metadata, OrderOverrides, Output, Preview, Quote

USER = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"
ESCROW = "0x000025c3226C00B2Cdc200005a1600509f4e00C0"
OUTPUT_SETTLER = "0x0000000000eC36B683C2E6AC89e9A75989C22a2e"
ORACLE = "0x0000003E06000007A224AeE90052fA6bb46d43C9"
USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
USDC_ARBITRUM = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"

VECTOR_B_CONTEXT = bytes.fromhex(
    "e000000000000000000000000094807fe4300d15909c1a4fd39f76c61d68aee11e68e77454"
)


# --- partner-intents quotes for the builder and the guard -----------------------------------

PAYER = "0x1111111111111111111111111111111111111111"
RECEIVER = "0x2222222222222222222222222222222222222222"
FILLER = "0xfefeFEFeFEFEFEFEFeFefefefefeFEfEfefefEfe"
NOW = 1_760_000_000


def make_quote(
    *,
    origin: int = 8453,
    destination: int = 42161,
    inputs: list[tuple[str, int]] | None = None,
    outputs: list[tuple[str, int]] | None = None,
    exclusive_for: str | None = FILLER,
    order: dict | None = None,
) -> Quote:
    """A quote paying ``inputs`` (token, amount) on ``origin`` for ``outputs`` elsewhere."""
    reg = default_registry()
    inputs = inputs or [(reg.token(origin, "USDC").address, 10_000_000)]
    outputs = outputs or [(reg.token(destination, "USDC").address, 9_968_269)]
    return Quote(
        preview=Preview(
            inputs=[
                Input(
                    user=erc7930.encode(origin, PAYER),
                    asset=erc7930.encode(origin, token),
                    amount=str(amount),
                )
                for token, amount in inputs
            ],
            outputs=[
                Output(
                    receiver=erc7930.encode(destination, RECEIVER),
                    asset=erc7930.encode(destination, token),
                    amount=str(amount),
                )
                for token, amount in outputs
            ],
        ),
        quote_id="quote-1",
        metadata=Metadata(exclusive_for=exclusive_for),
        order=OrderOverrides(**order) if order is not None else None,
    )


@pytest.fixture
def quote() -> Quote:
    return make_quote()


@pytest.fixture
def two_leg_quote() -> Quote:
    """Two inputs (USDC, WETH on Base) for two outputs (USDC, WETH on Arbitrum)."""
    reg = default_registry()
    return make_quote(
        inputs=[
            (reg.token(8453, "USDC").address, 5_000_000),
            (reg.token(8453, "WETH").address, 10**18),
        ],
        outputs=[
            (reg.token(42161, "USDC").address, 4_990_000),
            (reg.token(42161, "WETH").address, 999 * 10**15),
        ],
    )


@pytest.fixture
def same_chain_quote() -> Quote:
    reg = default_registry()
    return make_quote(
        origin=8453,
        destination=8453,
        outputs=[(reg.token(8453, "WETH").address, 3 * 10**15)],
    )


@pytest.fixture
def make() -> Callable[..., Quote]:
    return make_quote


@pytest.fixture
def payer() -> str:
    return PAYER


@pytest.fixture
def receiver() -> str:
    return RECEIVER


@pytest.fixture
def filler() -> str:
    return FILLER


@pytest.fixture
def now() -> int:
    return NOW
