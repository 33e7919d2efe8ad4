"""A small toolkit database with every table the report reads, built once per session."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from toolkit.backtest import BacktestResult, generate_flow, replay
from toolkit.collect.prices import record_scenario
from toolkit.scenario import load_scenario
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
    # What a run on the embedded service stores: its scenario's prices (source "scenario").
    record_scenario(store, load_scenario("default"), T0)
    store.append("rfq_observations", observation_rows(run))
    store.append("liquidity_events", event_rows(run))
    store.append("fee_tiers", tier_rows())
    store.finish_run(run, "completed", ended_at=T0 + dt.timedelta(minutes=3))
    if backtest:
        flow = generate_flow("single-pool", span_h=0.5, rate_per_s=1.0, seed=1)
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


# -- the surfaces beyond RFQ ---------------------------------------------------------------
USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
WETH_ETH = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"
USDC_ETH = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
#: Borrow sweep: (dst token address, dst chain, amount, status, fee_bps) on route 1 -> dst.
BORROWS = (
    (USDC_BASE, 8453, 1_000 * 10**6, 200, 4.0),
    (USDC_BASE, 8453, 100_000 * 10**6, 200, 6.0),
    (USDC_BASE, 8453, 1_000_000 * 10**6, 404, None),
    (USDC_BASE, 8453, 1_000_000 * 10**6, 200, 8.0),
)
#: Guard findings of three transactions: one safe, one with two findings, one with one.
FINDINGS = (
    "[]",
    '[{"field": "to", "message": "is not the escrow", "severity": "error"}, '
    '{"field": "value", "message": "sends ether", "severity": "warning"}]',
    '[{"field": "to", "message": "is not the escrow", "severity": "error"}]',
)
#: Swaps USDC -> WETH on mainnet: (USD in, output rate relative to the first).
SWAPS = ((100, 1.0), (10_000, 0.999), (1_000_000, 0.99))
#: Health factors of the latest credit snapshot (None: no debt), and of an older one.
HEALTH = (Decimal("0.9"), Decimal("1.2"), Decimal("2.0"), None)
OLD_HEALTH = (Decimal("5"), Decimal("5"), Decimal("5"), Decimal("5"))
#: The pool_scale sweep: the default scenario's pools at these factors, one flow.
SCALES = (0.5, 1.0, 2.0)


def borrow_rows(run_id: str) -> pl.DataFrame:
    rows = [
        {
            "run_id": run_id,
            "attempt_id": f"b{i}",
            "observed_at": T0 + dt.timedelta(seconds=i),
            "src_chain": 1,
            "dst_chain": chain,
            "token": token,
            "quote_type": "ExactOutput",
            "amount": amount,
            "exclusive": None,
            "status": status,
            "latency_ms": 2.0,
            "fee_bps": fee,
        }
        for i, (token, chain, amount, status, fee) in enumerate(BORROWS)
    ]
    return pl.DataFrame(rows).with_columns(pl.col("amount").cast(pl.Int128))


def transaction_rows(run_id: str) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "run_id": [run_id] * len(FINDINGS),
            "quote_id": [f"q{i + 1}" for i in range(len(FINDINGS))],
            "observed_at": [T0] * len(FINDINGS),
            "status": [200] * len(FINDINGS),
            "findings": list(FINDINGS),
        }
    )


def swap_rows(run_id: str) -> pl.DataFrame:
    base_rate = 10**18 // 3000 // 10**6  # WETH smallest units per USDC smallest unit at $3000
    rows = []
    for i, (usd_in, relative) in enumerate(SWAPS):
        amount_in = usd_in * 10**6
        rows.append(
            {
                "run_id": run_id,
                "attempt_id": f"0:{i}:0",
                "observed_at": T0 + dt.timedelta(seconds=i),
                "network": "mainnet",
                "token_in": USDC_ETH,
                "token_out": WETH_ETH,
                "amount_in": amount_in,
                "slippage_bps": 50,
                "status": 200,
                "amount_out": int(amount_in * base_rate * relative),
            }
        )
    rows.append({**rows[0], "attempt_id": "0:9:0", "status": 404, "amount_out": None})
    return pl.DataFrame(rows).with_columns(pl.col("amount_in", "amount_out").cast(pl.Int128))


def credit_rows(run_id: str, at: dt.datetime, health: tuple[Decimal | None, ...]) -> pl.DataFrame:
    decimal = pl.Decimal(38, 18)
    rows = []
    for i, hf in enumerate(health):
        debt = Decimal(0) if hf is None else Decimal(1_000 * (i + 1))
        rows.append(
            {
                "run_id": run_id,
                "round": 0,
                "observed_at": at,
                "account": f"0x{i + 1:040x}",
                "asset": "USDC",
                "debt": debt,
                "health_factor": hf,
                "total_collateral_value": Decimal(5_000),
            }
        )
    return pl.DataFrame(rows).with_columns(
        pl.col("debt", "health_factor", "total_collateral_value").cast(decimal)
    )


def protocol_rows(run_id: str) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "run_id": [run_id],
            "round": [0],
            "observed_at": [T0],
            "chain": [8453],
            "collateral": ["0x" + "ab" * 20],
            "symbol": ["yoUSD"],
            "ltv_bps": [7_000],
            "maintenance_ltv_bps": [8_000],
            "liquidation_bonus_bps": [600],
        }
    )


def authorization_event(run_id: str) -> pl.DataFrame:
    return (
        event_rows(run_id)
        .head(1)
        .with_columns(
            pl.lit(999, pl.Int64).alias("event_id"), pl.lit("loan_authorized").alias("reason")
        )
    )


def fill_surfaces(store: Store) -> dict[str, BacktestResult]:
    """Borrow quotes, transactions, swaps, two credit snapshots and a pool_scale sweep of the
    backtest ``fill_store`` stores; returns the sweep's results by run id."""
    run = store.start_run("borrow", {}, SOURCE, run_id="run-borrow", started_at=T0)
    store.append("borrow_quotes", borrow_rows(run))
    store.append("transactions", transaction_rows(run))
    store.append("liquidity_events", authorization_event(run))
    store.append("swap_routes", swap_rows(run))
    store.finish_run(run, "completed", ended_at=T0)
    for run_id, at, health in (
        ("credit-old", T0 - dt.timedelta(days=1), OLD_HEALTH),
        ("credit-new", T0, HEALTH),
    ):
        store.start_run("credit", {}, SOURCE, run_id=run_id, started_at=at)
        store.append("credit_accounts", credit_rows(run_id, at, health))
        store.append("credit_protocol", protocol_rows(run_id))
        store.finish_run(run_id, "completed", ended_at=at)
    # Older than ``bt-1``, which stays the latest backtest (the one the report draws).
    flow = generate_flow("default", span_h=1.0, rate_per_s=3.0, seed=1)
    results = {}
    for k, scale in enumerate(SCALES):
        result = replay(flow, "default", seed=1, overrides={"pool_scale": scale})
        run_id = f"bt-scale-{scale:g}"
        result.to_store(store, run_id=run_id, started_at=T0 - dt.timedelta(hours=3 - k))
        results[run_id] = result
    return results


@pytest.fixture(scope="session")
def surfaces_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, BacktestResult]]:
    """Every table of ``full_db`` plus every other surface and a pool_scale sweep; with the
    backtest results stored (``bt-1`` at pool_scale 1 and the sweep)."""
    path = tmp_path_factory.mktemp("db") / "surfaces.duckdb"
    with Store(path) as store:
        fill_store(store)
        results = fill_surfaces(store)
    flow = generate_flow("single-pool", span_h=0.5, rate_per_s=1.0, seed=1)
    results["bt-1"] = replay(flow, "single-pool", seed=1)
    return path, results
