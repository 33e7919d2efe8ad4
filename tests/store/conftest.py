"""Fixtures for the store tests: stores in memory and on disk, and frame builders."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from toolkit.store import Store

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def store() -> Iterator[Store]:
    with Store(":memory:") as opened:
        yield opened


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "nested" / "toolkit.duckdb"


def _rfq_frame(
    attempts: list[str],
    *,
    run_id: str = "run-1",
    amounts: list[int] | None = None,
    status: int = 200,
) -> pl.DataFrame:
    """A valid ``rfq_observations`` frame, one row per attempt id, in the contract dtypes."""
    n = len(attempts)
    values = amounts if amounts is not None else [10**6 * (i + 1) for i in range(n)]
    return pl.DataFrame(
        {
            "run_id": [run_id] * n,
            "attempt_id": attempts,
            "observed_at": [T0 + timedelta(seconds=i) for i in range(n)],
            "round": [0] * n,
            "retry": [0] * n,
            "src_chain": [1] * n,
            "dst_chain": [8453] * n,
            "token": ["USDC"] * n,
            "quote_type": ["ExactInput"] * n,
            "amount": pl.Series(values, dtype=pl.Int128),
            "status": [status] * n,
            "latency_ms": [12.5] * n,
            "input_amount": pl.Series(values, dtype=pl.Int128),
            "output_amount": pl.Series([v - v // 1000 for v in values], dtype=pl.Int128),
            "fee_bps": [10.0] * n,
        },
        schema_overrides={"round": pl.Int32, "retry": pl.Int32, "status": pl.Int32},
    )


def _count(store: Store, table: str) -> int:
    return int(store.query(f"SELECT count(*) AS n FROM {table}")["n"][0])


@pytest.fixture
def rfq_frame() -> Callable[..., pl.DataFrame]:
    """Builder of valid ``rfq_observations`` frames: ``rfq_frame(["a", "b"], run_id=...)``."""
    return _rfq_frame


@pytest.fixture
def count() -> Callable[[Store, str], int]:
    """Row count of a table: ``count(store, "rfq_observations")``."""
    return _count
