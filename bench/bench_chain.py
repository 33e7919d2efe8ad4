"""Throughput of the chain encoders: open() codec, orderId, builder, guard, calls, EIP-712.

Prints one table row per operation (plain stdout). Run: ``.venv/bin/python bench/bench_chain.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from toolkit.chain.borrow import Borrow, recover_borrow_signer, sign_borrow
from toolkit.chain.builder import build_open
from toolkit.chain.guard import check_transaction
from toolkit.chain.registry import default_registry
from toolkit.codecs import erc7930
from toolkit.codecs.escrow import decode_open, encode_open, order_id
from toolkit.codecs.functions import decode_call, encode_call
from toolkit.resources import Input, Metadata, Output, Preview, Quote
from toolkit.scenario import Windows

KEY = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
PAYER = "0x" + "11" * 20
FILLER = "0x" + "fe" * 20
NOW = 1_760_000_000


def _quote() -> Quote:
    reg = default_registry()
    return Quote(
        metadata=Metadata(exclusive_for=FILLER),
        preview=Preview(
            inputs=[
                Input(
                    user=erc7930.encode(8453, PAYER),
                    asset=erc7930.encode(8453, reg.token(8453, "USDC").address),
                    amount="10000000",
                )
            ],
            outputs=[
                Output(
                    receiver=erc7930.encode(42161, PAYER),
                    asset=erc7930.encode(42161, reg.token(42161, "USDC").address),
                    amount="9968269",
                )
            ],
        ),
    )


def _rate(fn: Callable[[], object], seconds: float = 1.0) -> tuple[int, float]:
    fn()
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(20):
            fn()
        count += 20
    return count, elapsed


def main() -> None:
    reg = default_registry()
    quote = _quote()
    built = build_open(quote, now=NOW, nonce=1, registry=reg, filler=FILLER, windows=Windows())
    order, tx = built.order, built.transaction
    escrow = reg.escrow(8453)
    approve = encode_call("erc20.approve", escrow, 10_000_000)
    borrow = Borrow(
        42161,
        "0x" + "33" * 20,
        PAYER,
        reg.token(42161, "USDC").address,
        9_968_269,
        reg.output_settler(42161),
        b"\x01" * 200,
        7,
        NOW + 300,
    )
    signature = sign_borrow(KEY, borrow)
    cases: list[tuple[str, Callable[[], object]]] = [
        ("escrow.encode_open", lambda: encode_open(order)),
        ("escrow.decode_open", lambda: decode_open(tx.data)),
        ("escrow.order_id", lambda: order_id(order, escrow)),
        (
            "builder.build_open",
            lambda: build_open(
                quote, now=NOW, nonce=1, registry=reg, filler=FILLER, windows=Windows()
            ),
        ),
        ("guard.check_transaction", lambda: check_transaction(quote, tx, now=NOW, registry=reg)),
        ("functions.encode_call approve", lambda: encode_call("erc20.approve", escrow, 10_000_000)),
        ("functions.decode_call approve", lambda: decode_call(approve)),
        ("borrow.sign_borrow", lambda: sign_borrow(KEY, borrow)),
        ("borrow.recover_borrow_signer", lambda: recover_borrow_signer(signature, borrow)),
    ]
    print(f"{'operation':<32} {'calls':>8} {'per second':>12} {'µs per call':>12}")
    for name, fn in cases:
        count, elapsed = _rate(fn)
        print(f"{name:<32} {count:>8} {count / elapsed:>12.0f} {elapsed / count * 1e6:>12.1f}")


if __name__ == "__main__":
    main()
