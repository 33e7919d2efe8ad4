"""``chain_orders`` on hand-made settler rows: a refunded order released nothing, a token the
``tokens`` names do not know keeps its address, a fill on another chain than the order's
destination is not its delivery, and an order of two outputs is left to ``escrow_order_legs``."""

from __future__ import annotations

from typing import Any

import polars as pl

from toolkit.store import Store, polars_schema
from toolkit.store.orders import chain_orders

USDC_ETH = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
USDC_BASE = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
ODD = "0x" + "0d" * 20  # a token no name is cached for


def _append(store: Store, table: str, rows: list[dict[str, Any]]) -> None:
    store.append(table, pl.DataFrame(rows, schema=polars_schema(table)))


def _open(order: str, block: int, outputs: list[tuple[int, str, int]]) -> list[dict[str, Any]]:
    place = {"chain": 1, "block_number": block, "tx_hash": "0xt", "escrow": "0xe",
             "order_id": order, "run_id": "r"}  # fmt: skip
    legs = [place | {"log_index": 0, "leg": "input", "position": 0, "leg_chain": 1,
                     "token": USDC_ETH, "amount": 500, "amount_text": "500"}]  # fmt: skip
    legs += [
        place | {"log_index": 0, "leg": "output", "position": i, "leg_chain": chain,
                 "token": token, "amount": amount, "amount_text": str(amount)}
        for i, (chain, token, amount) in enumerate(outputs)
    ]  # fmt: skip
    return legs


def test_what_the_chains_did_with_each_order() -> None:
    with Store(":memory:") as store:
        _append(store, "tokens", [
            {"chain": 1, "address": USDC_ETH, "symbol": "USDC", "decimals": 6, "source": "t"},
            {"chain": 8453, "address": USDC_BASE, "symbol": "usdc", "decimals": 6, "source": "t"},
        ])  # fmt: skip
        _append(store, "chain_blocks", [
            {"chain": 1, "number": n, "hash": f"0x{n}", "timestamp": 1_000 + n, "run_id": "r"}
            for n in (1, 2, 3, 9)
        ])  # fmt: skip
        _append(store, "escrow_order_legs", [
            *_open("0xa", 1, [(8453, USDC_BASE, 499)]),  # refunded
            *_open("0xb", 2, [(8453, ODD, 7)]),  # filled on the wrong chain only
            *_open("0xc", 3, [(8453, USDC_BASE, 1), (10, USDC_BASE, 2)]),  # two outputs
        ])  # fmt: skip
        _append(store, "escrow_events", [
            {"chain": 1, "block_number": 9, "log_index": 0, "tx_hash": "0xu", "escrow": "0xe",
             "event": "refunded", "order_id": "0xa", "run_id": "r"},
        ])  # fmt: skip
        _append(store, "output_fills", [
            {"chain": 10, "block_number": 4, "log_index": 0, "tx_hash": "0xf", "settler": "0xs",
             "order_id": "0xb", "solver": "0xso", "token": ODD, "amount": 7, "amount_text": "7",
             "recipient": "0xr", "run_id": "r"},
        ])  # fmt: skip
        orders = chain_orders(store)
    assert orders["order_id"].to_list() == ["0xa", "0xb"]
    columns = ("input_symbol", "output_symbol", "released_amount", "delivered_amount")
    assert orders.select(columns).rows() == [("USDC", "USDC", 0, 0), ("USDC", ODD, 0, 0)]
    refunded = orders.row(0, named=True)
    assert refunded["refunded_at"].timestamp() == 1_009 and refunded["finalised_at"] is None
    assert refunded["opened_at"].timestamp() == 1_001
