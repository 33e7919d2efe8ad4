"""Quote timing: eta and validity, fee drift, latency."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

from toolkit.models.pricing import eta_validity_stats, latency_stats, price_drift


def test_eta_and_validity_per_route(rfq, t0) -> None:
    ms = dt.timedelta(milliseconds=1)
    obs = rfq(
        {"observed_at": t0 + 200 * ms, "eta": 10, "valid_until": int(t0.timestamp()) + 15},
        {"observed_at": t0, "eta": 20, "valid_until": int(t0.timestamp()) + 15},
        {"observed_at": t0, "eta": 60, "valid_until": int(t0.timestamp()) + 16},
        {"status": 404},
        {"eta": 99, "quote_type": "ExactOutput"},
    )
    result = eta_validity_stats(obs)
    assert result["quote_type"].to_list() == ["ExactInput", "ExactOutput"]
    row = result.row(0, named=True)
    assert row["n"] == 3
    assert row["eta_mean"] == pytest.approx(30.0)
    assert row["eta_median"] == 20.0
    assert row["eta_p90"] == pytest.approx(float(np.quantile([10, 20, 60], 0.9)))
    assert row["validity_min_s"] == pytest.approx(14.8)
    assert row["validity_max_s"] == pytest.approx(16.0)
    assert row["validity_mean_s"] == pytest.approx((14.8 + 15 + 16) / 3)


def test_price_drift_within_a_run(rfq, t0) -> None:
    minute = dt.timedelta(minutes=1)
    second = dt.timedelta(seconds=1)
    big = 10**24

    def quote(at: dt.datetime, fee_wei: int, amount: int = big, **extra: object) -> dict:
        return {
            "observed_at": at,
            "amount": amount,
            "input_amount": amount,
            "output_amount": amount - fee_wei,
            **extra,
        }

    obs = rfq(
        quote(t0, 5 * 10**20),  # 5 bps
        quote(t0 + 30 * second, 7 * 10**20),  # 7 bps, same bucket
        quote(t0 + minute, 8 * 10**20),
        quote(t0 + 3 * minute, 4 * 10**20),
        quote(t0, 1, amount=10_000),  # another amount: its own series
        quote(t0 + minute, 2, amount=10_000, run_id="run-2"),
        {"observed_at": t0 + 2 * minute, "status": 404, "amount": big},
    )
    result = price_drift(obs)
    assert result.columns == [
        "run_id", "src_chain", "dst_chain", "token", "quote_type", "amount", "window_start",
        "n", "fee_bps_mean", "fee_bps_min", "fee_bps_max", "first_fee_bps", "last_fee_bps",
        "change_bps", "drift_bps",
    ]  # fmt: skip
    series = result.filter((pl.col("run_id") == "run-1") & (pl.col("amount") == big))
    assert series["window_start"].to_list() == [t0, t0 + minute, t0 + 3 * minute]
    assert series["n"].to_list() == [2, 1, 1]
    assert series["fee_bps_mean"].to_list() == [6.0, 8.0, 4.0]
    assert series["drift_bps"].to_list() == [0.0, 2.0, -2.0]
    assert set(series["change_bps"].to_list()) == {-2.0}
    assert (series["fee_bps_min"][0], series["fee_bps_max"][0]) == (5.0, 7.0)
    others = result.filter(pl.col("amount") == 10_000)
    assert others.select("run_id", "first_fee_bps", "change_bps").rows() == [
        ("run-1", 1.0, 0.0),
        ("run-2", 2.0, 0.0),
    ]
    hourly = price_drift(obs, every="1h", by="token")
    assert hourly.filter(pl.col("amount") == big)["fee_bps_mean"].to_list() == [6.0]


def test_price_drift_rejects_bad_arguments(rfq) -> None:
    with pytest.raises(ValueError, match="price_drift: every: must be a duration"):
        price_drift(rfq({}), every="monthly")
    with pytest.raises(ValueError, match="price_drift: by: must not repeat run_id or amount"):
        price_drift(rfq({}), by=["token", "amount"])


def test_latency_per_status(rfq) -> None:
    latencies = [float(v) for v in range(1, 101)]
    obs = rfq(
        *[{"latency_ms": v} for v in latencies],
        {"status": 404, "latency_ms": 3.0},
        {"status": 0, "latency_ms": None},
    )
    result = latency_stats(obs)
    assert result["status"].to_list() == [0, 200, 404]
    ok = result.row(1, named=True)
    assert ok["n"] == 100
    assert ok["latency_p50_ms"] == pytest.approx(float(np.quantile(latencies, 0.5)))
    assert ok["latency_p90_ms"] == pytest.approx(float(np.quantile(latencies, 0.9)))
    assert ok["latency_p99_ms"] == pytest.approx(float(np.quantile(latencies, 0.99)))
    assert ok["latency_max_ms"] == 100.0
    assert result.row(0, named=True)["n"] == 1
    assert result.row(0, named=True)["latency_p50_ms"] is None
    per_token = latency_stats(obs, by="token")
    assert per_token.columns[:2] == ["token", "status"]
    with pytest.raises(ValueError, match="latency_stats: by: status is always a key"):
        latency_stats(obs, by="status")
