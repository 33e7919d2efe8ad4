"""A small toolkit database with every table the report reads, built once per session."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from toolkit.backtest import generate_flow, replay
from toolkit.store import Store

T0 = dt.datetime(2025, 3, 1, 12, 0, tzinfo=dt.UTC)
SOURCE = "http://embedded-test.invalid"
#: (src_chain, dst_chain, token, decimals) of the observed routes.
ROUTES = ((1, 8453, "USDC", 6), (8453, 10, "USDC", 6), (1, 10, "WETH", 18))
UNITS = (10, 100, 1_000, 10_000, 100_000)
ROUNDS = 6
AMOUNTS = ("amount", "input_amount", "output_amount")


def observation_rows(run_id: str) -> pl.DataFrame:
    """Six rounds over three routes and five amounts. The fee falls 0.3 bps per tenfold amount
    from 4.4 bps; the largest amount gets a 404 on odd rounds (9 of 90 attempts)."""
    rows = []
    attempt = 0
    for rnd in range(ROUNDS):
        for src, dst, token, decimals in ROUTES:
            for units in UNITS:
                attempt += 1
                amount = units * 10**decimals
                at = T0 + dt.timedelta(seconds=20 * rnd + attempt % 7)
                ok = not (units == UNITS[-1] and rnd % 2)
                fee_bps = 5.0 - 0.3 * len(str(units))
                rows.append(
                    {
                        "run_id": run_id,
                        "attempt_id": f"a{attempt:03d}",
                        "observed_at": at,
                        "round": rnd,
                        "retry": 0,
                        "src_chain": src,
                        "dst_chain": dst,
                        "token": token,
                        "quote_type": "ExactInput",
                        "amount": amount,
                        "status": 200 if ok else 404,
                        "latency_ms": 3.0 + attempt % 5,
                        "quote_id": f"q{attempt}" if ok else None,
                        "valid_until": int(at.timestamp()) + 15 if ok else None,
                        "eta": 12 if ok else None,
                        "input_amount": amount if ok else None,
                        "output_amount": amount - round(amount * fee_bps / 10_000) if ok else None,
                        "error": None if ok else "no capacity",
                    }
                )
    return pl.DataFrame(rows, schema_overrides={c: pl.Int128 for c in AMOUNTS})


def event_rows(run_id: str) -> pl.DataFrame:
    rows = [
        {
            "source": SOURCE,
            "event_id": i + 1,
            "event": "liquidity",
            "received_at": T0 + dt.timedelta(seconds=6 * i),
            "run_id": run_id,
            "chain": 8453,
            "token": "USDC",
            "pool_type": "usdc",
            "balance": 10**12 - (i % 5) * 10**10,
            "reserved": (i % 5) * 10**10,
            "outstanding": 0,
        }
        for i in range(20)
    ]
    return pl.DataFrame(rows).with_columns(
        pl.col("balance", "reserved", "outstanding").cast(pl.Int128)
    )


def tier_rows() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "snapshot_id": ["s1"],
            "observed_at": [T0],
            "src_chain": [1],
            "dst_chain": [8453],
            "token": ["USDC"],
            "tier": [1],
            "fee_bps": [4.0],
            "min_amount": pl.Series([0], dtype=pl.Int128),
            "max_amount": pl.Series([None], dtype=pl.Int128),
        }
    )


def fill_store(store: Store, *, backtest: bool = True) -> None:
    run = store.start_run("rfq", {"rounds": ROUNDS}, SOURCE, run_id="run-rfq", started_at=T0)
    store.append("rfq_observations", observation_rows(run))
    store.append("liquidity_events", event_rows(run))
    store.append("fee_tiers", tier_rows())
    store.finish_run(run, "completed", ended_at=T0 + dt.timedelta(minutes=3))
    if backtest:
        flow = generate_flow("single-pool", hours=0.5, rate=1.0, seed=1)
        replay(flow, "single-pool", seed=1).to_store(store, run_id="bt-1", started_at=T0)


@pytest.fixture(scope="session")
def full_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DuckDB file with RFQ observations, liquidity events, fee tiers and a backtest."""
    path = tmp_path_factory.mktemp("db") / "toolkit.duckdb"
    with Store(path) as store:
        fill_store(store)
    return path


@pytest.fixture(scope="session")
def runs_only_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DuckDB file whose only row is one collection run."""
    path = tmp_path_factory.mktemp("db") / "runs-only.duckdb"
    with Store(path) as store:
        run = store.start_run("snapshot", {}, SOURCE, run_id="run-1", started_at=T0)
        store.finish_run(run, "completed", ended_at=T0)
    return path


@pytest.fixture(scope="session")
def fill() -> Callable[..., None]:
    """:func:`fill_store`, for tests that build their own store."""
    return fill_store
