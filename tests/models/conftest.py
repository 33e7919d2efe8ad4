"""Frame builders with the store's exact column names and dtypes."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

T0 = dt.datetime(2025, 3, 1, 12, 0, 0, tzinfo=dt.UTC)

RFQ_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "attempt_id": pl.String(),
    "observed_at": pl.Datetime("us", "UTC"),
    "round": pl.Int32(),
    "retry": pl.Int32(),
    "src_chain": pl.Int64(),
    "dst_chain": pl.Int64(),
    "token": pl.String(),
    "src_token": pl.String(),
    "dst_token": pl.String(),
    "quote_type": pl.String(),
    "amount": pl.Int128(),
    "status": pl.Int32(),
    "latency_ms": pl.Float64(),
    "quote_id": pl.String(),
    "valid_until": pl.Int64(),
    "eta": pl.Int64(),
    "input_amount": pl.Int128(),
    "output_amount": pl.Int128(),
    "fee_bps": pl.Float64(),
    "error": pl.String(),
}

EVENT_SCHEMA: dict[str, pl.DataType] = {
    "source": pl.String(),
    "event_id": pl.Int64(),
    "event": pl.String(),
    "received_at": pl.Datetime("us", "UTC"),
    "run_id": pl.String(),
    "chain": pl.Int64(),
    "token": pl.String(),
    "pool_type": pl.String(),
    "address": pl.String(),
    "balance": pl.Int128(),
    "reserved": pl.Int128(),
    "outstanding": pl.Int128(),
    "reason": pl.String(),
    "payload": pl.String(),
}

TIER_SCHEMA: dict[str, pl.DataType] = {
    "snapshot_id": pl.String(),
    "observed_at": pl.Datetime("us", "UTC"),
    "src_chain": pl.Int64(),
    "dst_chain": pl.Int64(),
    "token": pl.String(),
    "tier": pl.Int32(),
    "fee_bps": pl.Float64(),
    "min_amount": pl.Int128(),
    "max_amount": pl.Int128(),
}

Builder = Callable[..., pl.DataFrame]


def _rfq_row(index: int, row: dict[str, Any]) -> dict[str, Any]:
    """One rfq_observations row: a 200 ExactInput quote unless the test says otherwise."""
    at = row.get("observed_at", T0 + dt.timedelta(seconds=index))
    status = row.get("status", 200)
    amount = row.get("amount", 1_000_000)
    ok = status == 200
    base: dict[str, Any] = {
        "run_id": "run-1",
        "attempt_id": f"a{index}",
        "observed_at": at,
        "round": 0,
        "retry": 0,
        "src_chain": 1,
        "dst_chain": 10,
        "token": "USDC",
        "src_token": "0x" + "a" * 40,
        "dst_token": "0x" + "b" * 40,
        "quote_type": "ExactInput",
        "amount": amount,
        "status": status,
        "latency_ms": 12.5,
        "quote_id": f"q{index}" if ok else None,
        "valid_until": int(at.timestamp()) + 15 if ok else None,
        "eta": 30 if ok else None,
        "input_amount": amount if ok else None,
        "output_amount": amount - amount // 2000 if ok else None,
        "fee_bps": None,
        "error": None if ok else "no capacity",
    }
    base.update(row)
    return base


def _frame(rows: list[dict[str, Any]], schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


@pytest.fixture
def rfq() -> Builder:
    """``rfq(row, row, ...)``: an rfq_observations frame; each row overrides the defaults."""

    def build(*rows: dict[str, Any]) -> pl.DataFrame:
        return _frame([_rfq_row(i, row) for i, row in enumerate(rows)], RFQ_SCHEMA)

    return build


@pytest.fixture
def events() -> Builder:
    """``events(row, ...)``: a liquidity_events frame; each row overrides the defaults."""

    def build(*rows: dict[str, Any]) -> pl.DataFrame:
        full = []
        for i, row in enumerate(rows):
            base: dict[str, Any] = {
                "source": "svc",
                "event_id": i + 1,
                "event": "liquidity",
                "received_at": T0 + dt.timedelta(seconds=10 * i),
                "run_id": "run-1",
                "chain": 10,
                "token": "USDC",
                "pool_type": "main",
                "address": "0x" + "c" * 40,
                "balance": 1_000,
                "reserved": 0,
                "outstanding": 0,
                "reason": None,
                "payload": "{}",
            }
            base.update(row)
            full.append(base)
        return _frame(full, EVENT_SCHEMA)

    return build


@pytest.fixture
def tiers() -> Builder:
    """``tiers(row, ...)``: a fee_tiers frame; each row overrides the defaults."""

    def build(*rows: dict[str, Any]) -> pl.DataFrame:
        full = []
        for row in rows:
            base: dict[str, Any] = {
                "snapshot_id": "s1",
                "observed_at": T0 - dt.timedelta(minutes=5),
                "src_chain": 1,
                "dst_chain": 10,
                "token": "USDC",
                "tier": 1,
                "fee_bps": 5.0,
                "min_amount": 0,
                "max_amount": None,
            }
            base.update(row)
            full.append(base)
        return _frame(full, TIER_SCHEMA)

    return build


@pytest.fixture
def t0() -> dt.datetime:
    """The time the default rows start at (UTC)."""
    return T0
