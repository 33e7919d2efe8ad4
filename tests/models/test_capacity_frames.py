"""Capacity from collected frames: pool timelines and the observed 404 share."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import polars as pl
import pytest

from toolkit.models.capacity import capacity_timeline, empirical_blocking, erlang_b

BIG = 2**64 + 7  # above the Int64 range: amounts must stay Int128


def test_timeline_steps_per_pool(events, t0) -> None:
    frame = events(
        {"balance": BIG, "reserved": 0, "outstanding": 0},
        {"balance": BIG - 300, "reserved": 300, "outstanding": 0},
        {"event": "fee", "balance": None, "reserved": None, "outstanding": None},
        # The same state pushed again on reconnect does not start a step.
        {"balance": BIG - 300, "reserved": 300, "outstanding": 0},
        {"balance": BIG - 300, "reserved": 100, "outstanding": 200},
        {"chain": 1, "balance": 50, "reserved": 50, "outstanding": 0},
    )
    timeline = capacity_timeline(frame)
    assert timeline.columns == [
        "source", "chain", "token", "pool_type", "valid_from", "valid_to", "duration_s",
        "event_id", "available", "reserved", "outstanding", "total", "utilization",
    ]  # fmt: skip
    assert timeline.schema["available"] == pl.Int128
    assert timeline.schema["total"] == pl.Int128
    chain1 = timeline.filter(pl.col("chain") == 1)
    assert chain1.select("total", "utilization", "valid_to").row(0) == (100, 0.5, None)
    pool = timeline.filter(pl.col("chain") == 10)
    assert pool["event_id"].to_list() == [1, 2, 5]
    assert pool["total"].to_list() == [BIG, BIG, BIG]
    assert pool["duration_s"].to_list() == [10.0, 30.0, None]
    assert pool["valid_to"].to_list() == [
        t0 + dt.timedelta(seconds=10),
        t0 + dt.timedelta(seconds=40),
        None,
    ]
    assert pool["utilization"].to_list() == pytest.approx([0.0, 300 / BIG, 300 / BIG])


def test_timeline_keeps_sources_apart_and_orders_by_time(events, t0) -> None:
    frame = events(
        {"source": "b", "received_at": t0 + dt.timedelta(seconds=5), "balance": 7},
        {"source": "a", "received_at": t0 + dt.timedelta(seconds=9), "balance": 3},
        {"source": "a", "received_at": t0, "balance": 4},
    )
    timeline = capacity_timeline(frame)
    assert timeline.select("source", "available").rows() == [("a", 4), ("a", 3), ("b", 7)]
    assert timeline["duration_s"].to_list() == [9.0, None, None]


def test_timeline_unknown_parts_and_empty_pools(events) -> None:
    timeline = capacity_timeline(
        events({"balance": 10, "reserved": None}, {"balance": 0, "reserved": 0})
    )
    assert timeline["total"].to_list() == [None, 0]
    assert timeline["utilization"].to_list() == [None, None]


def test_timeline_accepts_other_time_zones_and_int_dtypes(events) -> None:
    frame = events({"balance": 10}, {"balance": 8, "reserved": 2}).with_columns(
        pl.col("received_at").dt.convert_time_zone("Europe/Paris"),
        pl.col("balance").cast(pl.Int64),
        pl.col("chain").cast(pl.Int32),
    )
    timeline = capacity_timeline(frame)
    assert timeline.schema["valid_from"] == pl.Datetime("us", "UTC")
    assert timeline.schema["available"] == pl.Int128
    assert timeline["utilization"].to_list() == [0.0, 0.2]


def test_timeline_empty_has_the_full_schema(events) -> None:
    full = capacity_timeline(events({"balance": 1}))
    empty = capacity_timeline(events())
    assert empty.height == 0
    assert empty.schema == full.schema


def test_timeline_rejects_negative_and_missing(events) -> None:
    with pytest.raises(
        ValueError, match="capacity_timeline: column 'balance' must not hold negative"
    ):
        capacity_timeline(events({"balance": -1}))
    with pytest.raises(
        ValueError, match="capacity_timeline: missing columns: reserved, outstanding"
    ):
        capacity_timeline(events({"balance": 1}).drop("reserved", "outstanding"))
    with pytest.raises(ValueError, match="column 'balance' must hold exact integers"):
        capacity_timeline(events({"balance": 1}).with_columns(pl.col("balance").cast(pl.Float64)))


def test_empirical_blocking_counts_and_windows(rfq, t0) -> None:
    second = dt.timedelta(seconds=1)
    obs = rfq(
        {"observed_at": t0 + 0 * second, "status": 200},
        {"observed_at": t0 + 10 * second, "status": 404},
        {"observed_at": t0 + 20 * second, "status": 404},
        {"observed_at": t0 + 30 * second, "status": 500},
        {"observed_at": t0 + 40 * second, "status": 0},
        {"observed_at": t0 + 70 * second, "status": 200},
        {"observed_at": t0 + 75 * second, "status": 200, "token": "USDT"},
    )
    result = empirical_blocking(obs, window="1m", hold_s=15.0)
    usdc = result.filter(pl.col("token") == "USDC")
    assert usdc.select("attempts", "answered", "ok", "blocked", "other").rows() == [
        (5, 3, 1, 2, 2),
        (1, 1, 1, 0, 0),
    ]
    first = usdc.row(0, named=True)
    assert first["window_start"] == t0
    assert first["window_end"] == t0 + 60 * second
    assert first["blocking"] == pytest.approx(2 / 3)
    assert first["std_error"] == pytest.approx(math.sqrt(2 / 3 * 1 / 3 / 3))
    assert first["rate_per_s"] == pytest.approx(3 / 60)
    assert first["offered_load"] == pytest.approx(3 / 60 * 15.0)
    assert result.filter(pl.col("token") == "USDT")["blocked"].to_list() == [0]


def test_empirical_blocking_without_answers_has_null_share(rfq) -> None:
    result = empirical_blocking(rfq({"status": 500}), window=None)
    assert result.select("answered", "blocking", "std_error").row(0) == (0, None, None)
    # One attempt spans no time: no rate can be measured.
    assert result["rate_per_s"].to_list() == [None]


def test_empirical_blocking_whole_run_custom_keys(rfq, t0) -> None:
    obs = rfq(
        {"observed_at": t0, "status": 200, "amount": 10},
        {"observed_at": t0 + dt.timedelta(seconds=20), "status": 404, "amount": 10},
        {"observed_at": t0 + dt.timedelta(seconds=5), "status": 404, "amount": 10**21},
    )
    result = empirical_blocking(obs, by=["token", "amount"], window=None, hold_s=15.0)
    assert result.select("amount", "blocking").rows() == [(10, 0.5), (10**21, 1.0)]
    assert result["rate_per_s"].to_list() == [pytest.approx(2 / 20), None]
    overall = empirical_blocking(obs, by=(), window=None)
    assert overall.select("answered", "blocked").row(0) == (3, 2)


def test_empirical_blocking_rejects_bad_arguments(rfq) -> None:
    obs = rfq({"status": 200})
    with pytest.raises(ValueError, match="empirical_blocking: window: must be a duration"):
        empirical_blocking(obs, window="1mo")
    with pytest.raises(ValueError, match="hold_s: must be a finite number >= 0"):
        empirical_blocking(obs, hold_s=-1.0)
    with pytest.raises(
        ValueError, match=r"empirical_blocking: missing columns: pool \(named in by\)"
    ):
        empirical_blocking(obs, by="pool")
    with pytest.raises(ValueError, match="empirical_blocking: missing columns: status"):
        empirical_blocking(obs.drop("status"))


def test_empirical_blocking_empty_has_the_full_schema(rfq) -> None:
    full = empirical_blocking(rfq({"status": 200}))
    empty = empirical_blocking(rfq())
    assert empty.height == 0
    assert empty.schema == full.schema


def test_empirical_blocking_recovers_erlang_b_from_a_simulated_loss_system(t0) -> None:
    """A seeded M/M/N/N pool: the observed 404 share and load match Erlang-B."""
    rng = np.random.default_rng(7)
    servers, rate, hold = 5, 1.0, 3.0
    arrivals = np.cumsum(rng.exponential(1.0 / rate, 20_000))
    busy_until: list[float] = []
    statuses = []
    for at in arrivals:
        busy_until = [end for end in busy_until if end > at]
        if len(busy_until) < servers:
            busy_until.append(at + rng.exponential(hold))
            statuses.append(200)
        else:
            statuses.append(404)
    obs = pl.DataFrame(
        {
            "observed_at": [t0 + dt.timedelta(seconds=float(at)) for at in arrivals],
            "status": statuses,
            "src_chain": 1,
            "dst_chain": 10,
            "token": "USDC",
        }
    )
    result = empirical_blocking(obs, window=None, hold_s=hold).row(0, named=True)
    theory = erlang_b(servers, rate * hold)
    assert abs(result["blocking"] - theory) < 4 * result["std_error"]
    assert result["offered_load"] == pytest.approx(rate * hold, rel=0.03)
    assert erlang_b(servers, result["offered_load"]) == pytest.approx(result["blocking"], abs=0.01)


def test_observer_share_counts_converted_quotes_for_the_order_window() -> None:
    import datetime as dt

    from toolkit.models import observer_share

    at = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    t0 = int(at.timestamp())
    obs = pl.DataFrame(
        {
            "observed_at": [at, at, at + dt.timedelta(seconds=30)],
            "status": [200, 200, 200],
            "quote_id": ["a", "b", "c"],
            "dst_chain": [10, 10, 8453],
            "token": ["USDC", "USDC", "USDC"],
            "output_amount": [100, 100, 50],
            "valid_until": [t0 + 15, t0 + 15, t0 + 45],
        }
    )
    pools = pl.DataFrame(
        {"chain": [10, 10, 8453], "token": ["USDC"] * 3, "balance": [600, 400, 100]}
    )
    plain = observer_share(obs, pools)
    assert plain["quotes"].to_list() == [2, 1]
    # Span 0..45 s: chain 10 held 200 for 15 s of 45 against 1,000; Base 50 for 15 s of 45.
    assert plain["held_mean_share"].to_list() == pytest.approx(
        [200 * 15 / 1000 / 45, 50 * 15 / 100 / 45]
    )
    assert plain["held_peak_share"].to_list() == [0.2, 0.5]
    # Quote "a" converted 5 s after it was quoted: it holds 60 s from then (to t0 + 65).
    tx = pl.DataFrame({"quote_id": ["a"], "observed_at": [at + dt.timedelta(seconds=5)]})
    converted = observer_share(obs, pools, transactions=tx)
    assert converted["held_mean_share"].to_list() == pytest.approx(
        [(100 * 65 + 100 * 15) / 1000 / 65, 50 * 15 / 100 / 65]
    )
    assert observer_share(obs.filter(pl.col("status") == 404), pools).height == 0
    with pytest.raises(ValueError, match="order_window_s"):
        observer_share(obs, pools, order_window_s=-1)
    with pytest.raises(ValueError, match="observer_share"):
        observer_share(obs.drop("valid_until"), pools)
