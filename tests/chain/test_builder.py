"""build_open: the derived defaults, overrides, the §7.2 vector B, and the rejections."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from toolkit.chain.builder import OpenTransaction, build_open, is_same_chain
from toolkit.chain.registry import default_registry
from toolkit.codecs import erc7930
from toolkit.codecs.escrow import (
    Exclusivity,
    decode_open,
    order_id,
    parse_context,
    to_bytes32,
    token_id,
)
from toolkit.resources import InvalidInput, Preview, Quote
from toolkit.scenario import Windows

ESCROW = "0x000025c3226C00B2Cdc200005a1600509f4e00C0"
OUTPUT_SETTLER = "0x0000000000eC36B683C2E6AC89e9A75989C22a2e"
ORACLE = "0x0000003E06000007A224AeE90052fA6bb46d43C9"
ZERO = "0x" + "00" * 20


def _build(quote: Quote, now: int, filler: str, **windows: int) -> OpenTransaction:

    return build_open(
        quote,
        now=now,
        nonce=42,
        registry=default_registry(),
        filler=filler,
        windows=Windows(**windows),
    )


def test_cross_chain_defaults(
    quote: Quote, now: int, filler: str, payer: str, receiver: str
) -> None:
    built = _build(quote, now, filler)
    tx, order = built.transaction, built.order
    assert (tx.from_, tx.to, tx.chain_id, tx.value) == (payer, ESCROW, 8453, "0x0")
    assert tx.to_wire()["from"] == payer
    assert order.user == payer
    assert order.nonce == 42
    assert order.origin_chain_id == 8453
    assert order.fill_deadline == now + 60 + 300
    assert order.expires == order.fill_deadline + 12 * 3600
    assert order.input_oracle == ORACLE
    usdc_base = default_registry().token(8453, "USDC").address
    assert order.inputs == ((token_id(usdc_base), 10_000_000),)
    (out,) = order.outputs
    assert out.oracle == to_bytes32(ORACLE)
    assert out.settler == to_bytes32(OUTPUT_SETTLER)
    assert out.chain_id == 42161
    assert out.token == to_bytes32(default_registry().token(42161, "USDC").address)
    assert out.amount == 9_968_269
    assert out.recipient == to_bytes32(receiver)
    assert out.callback_data == b""
    assert parse_context(out.context) == Exclusivity(filler, now + 60)
    assert decode_open(tx.data) == order
    assert built.order_id == order_id(order, ESCROW)
    assert is_same_chain(quote) is False


def test_same_chain_uses_the_output_settler_as_oracle(
    same_chain_quote: Quote, now: int, filler: str
) -> None:
    built = _build(same_chain_quote, now, filler)
    order = built.order
    assert order.input_oracle == OUTPUT_SETTLER
    assert order.outputs[0].oracle == to_bytes32(OUTPUT_SETTLER)
    assert order.outputs[0].settler == to_bytes32(OUTPUT_SETTLER)
    assert order.expires == order.fill_deadline + 13 * 60
    assert is_same_chain(same_chain_quote) is True


def test_windows_are_arguments(quote: Quote, now: int, filler: str) -> None:
    built = _build(
        quote,
        now,
        filler,
        exclusive_s=30,
        open_s=100,
        cross_chain_expiry_buffer_s=600,
    )
    assert built.order.fill_deadline == now + 130
    assert built.order.expires == now + 730
    assert parse_context(built.order.outputs[0].context) == Exclusivity(filler, now + 30)


def test_every_output_carries_the_exclusivity(two_leg_quote: Quote, now: int, filler: str) -> None:
    built = _build(two_leg_quote, now, filler)
    assert len(built.order.inputs) == 2 and len(built.order.outputs) == 2
    for out in built.order.outputs:
        assert parse_context(out.context) == Exclusivity(filler, now + 60)
    assert [o.amount for o in built.order.outputs] == [4_990_000, 999 * 10**15]


def test_metadata_exclusive_for_wins_over_the_filler(
    make: Callable[..., Quote], now: int, filler: str
) -> None:
    other = "0x94807fE4300D15909C1a4fd39f76c61D68aee11E"
    built = _build(make(exclusive_for=other), now, filler)
    assert parse_context(built.order.outputs[0].context) == Exclusivity(other, now + 60)
    default = _build(make(exclusive_for=None), now, filler)
    assert parse_context(default.order.outputs[0].context) == Exclusivity(filler, now + 60)


def test_order_overrides_win(make: Callable[..., Quote], now: int, filler: str) -> None:
    oracle = "0x" + "77" * 20
    quote = make(
        order={
            "nonce": "99",
            "fill_deadline": now + 1000,
            "expires": now + 5000,
            "input_oracle": oracle,
        }
    )
    order = _build(quote, now, filler).order
    assert order.nonce == 99
    assert (order.fill_deadline, order.expires) == (now + 1000, now + 5000)
    assert order.input_oracle.lower() == oracle


def test_fill_deadline_override_moves_the_derived_expiry(
    make: Callable[..., Quote], now: int, filler: str
) -> None:
    order = _build(make(order={"fill_deadline": now + 1000}), now, filler).order
    assert order.expires == now + 1000 + 12 * 3600


def test_native_inputs_set_the_value(make: Callable[..., Quote], now: int, filler: str) -> None:
    usdc = default_registry().token(8453, "USDC").address
    quote = make(inputs=[(ZERO, 3 * 10**17), (usdc, 5), (ZERO, 10**17)])
    built = _build(quote, now, filler)
    assert built.transaction.value == hex(4 * 10**17)
    assert built.order.inputs[0] == (0, 3 * 10**17)


def test_reproduces_vector_b() -> None:
    """The §7.2 vector B, derived from a quote instead of written by hand."""
    user = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"
    quote = Quote.model_validate(
        {
            "preview": {
                "inputs": [
                    {
                        "user": erc7930.encode(8453, user),
                        "asset": erc7930.encode(8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
                        "amount": "10000000",
                    }
                ],
                "outputs": [
                    {
                        "receiver": erc7930.encode(42161, user),
                        "asset": erc7930.encode(
                            42161, "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
                        ),
                        "amount": "9968269",
                    }
                ],
            },
            "metadata": {"exclusiveFor": "0x94807fe4300d15909c1a4fd39f76c61d68aee11e"},
        }
    )
    built = build_open(
        quote,
        now=1759999000,
        nonce=1,
        registry=default_registry(),
        filler="0x" + "fe" * 20,
        windows=Windows(open_s=940, cross_chain_expiry_buffer_s=3600),
    )
    assert built.order_id == "0x3cf2e937019e4c167470559c9b7ba8a175c25176ac4cff8eabe2ee922d151f54"
    assert len(bytes.fromhex(built.transaction.data[2:])) == 836
    assert built.transaction.data.endswith(
        "0000000000000000000000000000000000000000000000000000000000000025"
        "e000000000000000000000000094807fe4300d15909c1a4fd39f76c61d68aee11e68e77454" + "0" * 54
    )


# --- rejections -----------------------------------------------------------------------------


def test_inputs_on_two_origin_chains(quote: Quote, now: int, filler: str) -> None:
    usdc_op = default_registry().token(10, "USDC").address
    first = quote.preview.inputs[0]
    second = first.model_copy(
        update={"asset": erc7930.encode(10, usdc_op), "user": erc7930.encode(10, "0x" + "11" * 20)}
    )
    # The model validator rejects such a preview; a constructed one must still be refused.
    preview = Preview.model_construct(inputs=[first, second], outputs=quote.preview.outputs)
    mixed = quote.model_construct(**{**dict(quote), "preview": preview})
    with pytest.raises(
        InvalidInput, match=r"preview\.inputs: all inputs must be on one origin chain"
    ):
        _build(mixed, now, filler)


def test_unknown_origin_chain(make: Callable[..., Quote], now: int, filler: str) -> None:
    quote = make(origin=137, inputs=[("0x" + "33" * 20, 1)])
    with pytest.raises(
        InvalidInput, match=r"preview.inputs\[0\].asset: chain 137: not in the registry"
    ):
        _build(quote, now, filler)


def test_unknown_destination_chain(make: Callable[..., Quote], now: int, filler: str) -> None:
    quote = make(destination=56, outputs=[("0x" + "33" * 20, 1)])
    with pytest.raises(
        InvalidInput, match=r"preview.outputs\[0\].asset: chain 56: not in the registry"
    ):
        _build(quote, now, filler)


def test_fill_deadline_after_expires(make: Callable[..., Quote], now: int, filler: str) -> None:
    with pytest.raises(InvalidInput, match=r"order\.fillDeadline: must not be after expires"):
        _build(make(order={"expires": now + 10}), now, filler)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"now": -1}, "now: must be a non-negative integer"),
        ({"now": 1.5}, "now: must be a non-negative integer"),
        ({"nonce": -1}, r"nonce: must be between 0 and 2\*\*256-1"),
        ({"filler": "0xfill"}, "filler: must be a 0x-prefixed 20-byte hex address"),
        (
            {"windows": Windows(open_s=-5)},
            "windows.open_s: must be a non-negative integer",
        ),
        ({"windows": 60}, "windows.exclusive_s: must be a non-negative integer"),
        ({"registry": {}}, "registry: must be a Registry"),
        ({"now": 2**32}, r"order\.fillDeadline: is 4294967656, past the uint32 timestamps"),
    ],
)
def test_bad_arguments(quote: Quote, filler: str, kwargs: dict, message: str) -> None:
    args: dict = {
        "now": 1_000,
        "nonce": 1,
        "registry": default_registry(),
        "filler": filler,
        "windows": Windows(),
    }
    args.update(kwargs)
    with pytest.raises(InvalidInput, match=message):
        build_open(quote, **args)


def test_quote_must_be_a_quote(now: int, filler: str) -> None:
    with pytest.raises(InvalidInput, match="quote: must be a Quote"):
        build_open(
            {},  # type: ignore[arg-type]
            now=now,
            nonce=1,
            registry=default_registry(),
            filler=filler,
            windows=Windows(),
        )


SOLANA = (
    "0x000100022045296998a6f8e2a784db5d9f95e18fc23f70441a1039446801089879b08c7ef02005333498"
    "d5aea4ae009585c43f7b8c30df8e70187d4a713d134f977fc8dfe0b5"
)


def test_outputs_must_be_on_evm_chains(quote: Quote, now: int, filler: str) -> None:
    out = quote.preview.outputs[0].model_copy(update={"asset": SOLANA, "receiver": SOLANA})
    odd = quote.model_copy(update={"preview": quote.preview.model_copy(update={"outputs": [out]})})
    with pytest.raises(InvalidInput, match=r"preview\.outputs\[0\]: must be on an eip155 chain"):
        _build(odd, now, filler)


def test_receiver_must_be_on_the_assets_chain(quote: Quote, now: int, filler: str) -> None:
    out = quote.preview.outputs[0].model_copy(
        update={"receiver": erc7930.encode(10, "0x" + "22" * 20)}
    )
    odd = quote.model_copy(update={"preview": quote.preview.model_copy(update={"outputs": [out]})})
    with pytest.raises(
        InvalidInput, match=r"preview\.outputs\[0\]\.receiver: must be on the same chain"
    ):
        _build(odd, now, filler)
