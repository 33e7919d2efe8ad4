"""Replays against the spec's state table, determinism, load, retries and conservation."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import itertools
import os
import subprocess
import sys

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from toolkit.backtest import Fixed, generate_flow, replay
from toolkit.client import RetryPolicy

UNIT = 1_000_000_000  # one capacity unit of the single-pool scenario


def _row(result, request_id: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return result.requests.filter(pl.col("request_id") == request_id).row(0, named=True)


def _pool_at(result, t: float, pool: str = "8453:USDC:usdc") -> dict:  # type: ignore[no-untyped-def,type-arg]
    frame = result.pools.filter((pl.col("t") == t) & (pl.col("pool") == pool))
    return frame.row(0, named=True)


def test_same_seed_gives_identical_frames_and_different_seed_differs() -> None:
    flow = generate_flow("default", span_h=1.0, rate_per_s=2.0, seed=1)
    retry = RetryPolicy(capacity_retries=2)
    a = replay(flow, "default", seed=5, retry=retry, overrides={"pool_scale": 0.01})
    b = replay(flow, "default", seed=5, retry=retry, overrides={"pool_scale": 0.01})
    assert_frame_equal(a.requests, b.requests)
    assert_frame_equal(a.pools, b.pools)
    assert a.summary == b.summary
    c = replay(flow, "default", seed=6, retry=retry, overrides={"pool_scale": 0.01})
    assert not a.requests.equals(c.requests)
    other = replay(generate_flow("default", span_h=1.0, rate_per_s=2.0, seed=2), "default", seed=5)
    assert other.summary.requests != a.summary.requests or not other.requests.equals(a.requests)


def test_unconverted_quote_frees_capacity_after_the_quote_window(make_flow) -> None:  # type: ignore[no-untyped-def]
    # The pool holds 15 units. A takes all of them at t = 0.5: its quote is valid until
    # round(0.5) + 15 = 16. B at 15.9 finds nothing; C at 16.0 is served again.
    flow = make_flow([{"t": 0.5, "amount": 15 * UNIT}, {"t": 15.9}, {"t": 16.0}])
    result = replay(flow, "single-pool", interval_s=5.0)
    assert result.requests["outcome"].to_list() == ["expired", "no_capacity", "expired"]
    assert result.requests["status"].to_list() == [200, 404, 200]
    assert _row(result, "q1")["quote_id"] is None
    assert _pool_at(result, 10.0)["reserved"] == 15 * UNIT
    assert _pool_at(result, 10.0)["available"] == 0
    # C's own reservation lapses at round(16.0) + 15 = 31.
    assert _pool_at(result, 30.0)["reserved"] == UNIT
    assert _pool_at(result, 35.0)["reserved"] == 0


def test_conversion_holds_the_order_reservation_for_60_s_from_the_transaction(
    make_flow, single_pool
) -> None:  # type: ignore[no-untyped-def]
    # Make Ethereum confirmations slow (100 s) so that the order reservation, 60 s from the
    # transaction call at t = 10, lapses before the filler comes.
    slow = dataclasses.replace(
        single_pool,
        chains=tuple(
            dataclasses.replace(c, confirmation_s=100) if c.id == 1 else c
            for c in single_pool.chains
        ),
    )
    flow = make_flow(
        [
            {"t": 0.0, "amount": 15 * UNIT, "converts": True, "convert_delay": 10.0},
            {"t": 69.9},
            {"t": 70.0},
        ]
    )
    result = replay(flow, slow, interval_s=10.0)
    assert result.requests["outcome"].to_list() == ["filled", "no_capacity", "expired"]
    assert _pool_at(result, 60.0)["reserved"] == 15 * UNIT
    # q2 holds one unit from 70 to floor(70) + 15; then nothing is reserved.
    assert _pool_at(result, 80.0)["reserved"] == UNIT
    assert _pool_at(result, 90.0)["reserved"] == 0
    # The calldata stayed valid: the order is filled from available liquidity once the quote's
    # eta (100 s of confirmations + 2 s to fill on Base) has passed, at 112.
    first = _row(result, "q0")
    assert (first["ordered_at"], first["filled_at"]) == (10.0, 112.0)
    assert _pool_at(result, 110.0)["outstanding"] == 0
    assert _pool_at(result, 120.0)["outstanding"] == 15 * UNIT


def test_late_conversion_reserves_nothing_but_the_order_can_still_fill(make_flow) -> None:  # type: ignore[no-untyped-def]
    flow = make_flow([{"t": 0.0, "converts": True, "convert_delay": 20.0}])
    result = replay(flow, "single-pool", interval_s=10.0)
    row = _row(result, "q0")
    # The quote lapsed at 15, so between 15 and the fill at 20 + 38 (the quote's eta: 36 s of
    # Ethereum confirmations, 2 s to fill on Base) nothing is reserved.
    assert _pool_at(result, 30.0)["reserved"] == 0
    assert row["ordered_at"] == 20.0 and row["filled_at"] == 58.0 and row["outcome"] == "filled"


def test_late_conversion_is_retried_until_the_fill_deadline(make_flow) -> None:  # type: ignore[no-untyped-def]
    # q0 converts after its quote lapsed. q1 converts the whole pool at 51 and keeps it
    # outstanding until its settlement at 51 + 38 + 300 = 389, past q0's fillDeadline
    # floor(20) + 60 + 300 = 380: the filler retries q0 every second, then gives up.
    flow = make_flow(
        [
            {"t": 0.0, "converts": True, "convert_delay": 20.0},
            {"t": 50.0, "amount": 15 * UNIT, "converts": True, "convert_delay": 1.0},
        ]
    )
    result = replay(flow, "single-pool")
    row = _row(result, "q0")
    assert row["outcome"] == "expired" and row["filled_at"] is None
    assert row["error"].startswith("fill: not filled by the fillDeadline 380")
    assert "no pool has 1000000000 USDC available" in row["error"]
    assert _row(result, "q1")["filled_at"] == 89.0


def test_late_conversion_fills_once_capacity_returns(make_flow) -> None:  # type: ignore[no-untyped-def]
    # q1's plain quote holds the whole pool from 50 until round(50) + 15 = 65; q0's fill,
    # due at 58, is retried each second and succeeds at 65.
    flow = make_flow(
        [
            {"t": 0.0, "converts": True, "convert_delay": 20.0},
            {"t": 50.0, "amount": 15 * UNIT},
        ]
    )
    row = _row(replay(flow, "single-pool"), "q0")
    assert (row["outcome"], row["filled_at"]) == ("filled", 65.0)


@pytest.mark.parametrize("policy", ["threshold", "instant-free"])
def test_fill_moves_to_outstanding_and_settlement_pays_the_receivable(make_flow, policy) -> None:  # type: ignore[no-untyped-def]
    # The quote's eta is 38 s (36 s of Ethereum confirmations, 2 s to fill on Base); the
    # default scenario settles 600 s after the fill. The escrow releases the input on Ethereum:
    # the Base pool's receivable is paid there (threshold, the default's policy), or repaid in
    # place with the fee (the instant-free baseline).
    flow = make_flow([{"t": 0.0, "type": "ExactInput", "converts": True, "convert_delay": 2.0}])
    overrides = {"rebalancing.policy": policy}
    result = replay(flow, "default", interval_s=20.0, overrides=overrides)
    row = _row(result, "q0")
    assert (row["quoted_at"], row["ordered_at"], row["filled_at"], row["settled_at"]) == (
        0.0,
        2.0,
        40.0,
        640.0,
    )
    assert row["fee_bps"] == 5.0 and row["input_amount"] == UNIT
    fee = UNIT * 5 // 10_000
    fill_cost = 50_000  # 0.05 USD on Base
    assert row["output_amount"] == UNIT - fee - fill_cost
    assert row["earned"] == fee
    pool = row["pool"]
    before, during, after = (_pool_at(result, t, pool) for t in (20.0, 60.0, 640.0))
    assert before["reserved"] == row["output_amount"] and before["outstanding"] == 0
    assert during["reserved"] == 0 and during["outstanding"] == row["output_amount"]
    assert after["outstanding"] == 0 and after["fee_revenue"] == fee
    origin = _pool_at(result, 640.0, "1:USDC:usdc")["capacity"]
    if policy == "instant-free":
        assert after["capacity"] == before["capacity"] + fee
        assert result.summary.balance_end[pool] == result.summary.balance_start[pool] + fee
        assert origin == result.summary.balance_start["1:USDC:usdc"]
    else:
        assert after["capacity"] == before["capacity"] - row["output_amount"]
        assert origin == result.summary.balance_start["1:USDC:usdc"] + UNIT
    assert result.summary.policy == policy


def test_amount_outside_the_fee_tiers_is_no_route(make_flow) -> None:  # type: ignore[no-untyped-def]
    retry = RetryPolicy(capacity_retries=3)
    result = replay(make_flow([{"t": 0.0, "amount": 500_000}]), "single-pool", retry=retry)
    row = _row(result, "q0")
    assert (row["outcome"], row["status"], row["attempts"]) == ("no_route", 400, 1)
    assert row["error"] == "amount: 500000 is outside the route's limits [1000000, 15000000000]"


def test_low_load_has_no_404_and_overload_has_many() -> None:
    calm = replay(generate_flow("default", span_h=2.0, rate_per_s=0.5, seed=3), "default")
    assert calm.summary.no_capacity == 0 and calm.summary.rfq_404_share == 0.0
    busy_flow = generate_flow(
        "single-pool", span_h=0.5, rate_per_s=5.0, seed=3, sizes={"USDC": Fixed(UNIT)}
    )
    busy = replay(busy_flow, "single-pool")
    # About 70 erlangs offered to 15 units: most RFQs are refused.
    assert busy.summary.rfq_404_share > 0.6
    assert busy.pools["no_capacity"].sum() == busy.summary.rejected_attempts


def test_retries_increase_attempts_and_stay_within_the_policy() -> None:
    # Unconverted quotes only: capacity comes back within a backoff, so retries help. (Under the
    # long holds of converted orders, retries mostly add load and need not lower the 404s.)
    flow = generate_flow(
        "single-pool",
        span_h=0.5,
        rate_per_s=1.5,
        seed=8,
        sizes={"USDC": Fixed(UNIT)},
        convert_probability=0.0,
    )
    plain = replay(flow, "single-pool")
    retry = RetryPolicy(capacity_retries=3, capacity_base=2.0, capacity_cap=30.0)
    retried = replay(flow, "single-pool", retry=retry, seed=1)
    assert plain.requests["attempts"].max() == 1
    attempts = retried.requests["attempts"]
    assert attempts.max() == 4 and retried.summary.mean_attempts > 1.0
    assert retried.summary.attempts == attempts.sum()
    # Only requests that saw a 404 were retried; the last attempt decides the outcome.
    refused = retried.requests.filter(pl.col("outcome") == "no_capacity")
    assert (refused["attempts"] == 4).all()
    retried_ok = retried.requests.filter((pl.col("attempts") > 1) & (pl.col("status") == 200))
    assert retried_ok.height > 0
    assert (retried_ok["quoted_at"] > retried_ok["t"]).all()
    assert retried.summary.no_capacity < plain.summary.no_capacity


def _check_conservation(result) -> None:  # type: ignore[no-untyped-def]
    summary = result.summary
    settled = result.requests.filter(pl.col("earned").is_not_null())
    earned = settled.group_by("pool").agg(pl.col("earned").sum())
    by_pool = dict(zip(earned["pool"].to_list(), earned["earned"].to_list(), strict=True))
    for pool in summary.balance_start:
        assert summary.fee_revenue[pool] == by_pool.get(pool, 0)
    # Per token, the service's tokens on every chain change by exactly what settlements
    # booked beyond what was delivered (input less output; the fee earned when instant-free
    # repays in place) less the bridges' fees.
    instant = summary.policy == "instant-free"
    gain = pl.col("earned") if instant else pl.col("input_amount") - pl.col("output_amount")
    booked = dict(settled.group_by("token").agg(gain.sum()).iter_rows())
    held = summary.by_chain().group_by("token").agg(pl.col("change").sum())
    fees = dict(result.transfers.group_by("token").agg(pl.col("fee").sum()).iter_rows())
    for token, change in held.iter_rows():
        assert change == booked.get(token, 0) - fees.get(token, 0), token
    assert summary.transfers == result.transfers.height
    assert result.transfers["arrived"].all()  # the horizon waits for the last transfer
    if instant:
        for pool, start in summary.balance_start.items():
            assert summary.balance_end[pool] == start + by_pool.get(pool, 0)
    pools = result.pools
    assert (pools["available"] >= 0).all()
    assert (pools["reserved"] + pools["outstanding"] <= pools["capacity"]).all()
    assert (
        pools["available"] + pools["reserved"] + pools["outstanding"] == pools["capacity"]
    ).all()
    last = pools.filter(pl.col("t") == pools["t"].max())
    assert (last["reserved"] == 0).all() and (last["outstanding"] == 0).all()
    for pool, balance in zip(last["pool"], last["capacity"], strict=True):
        assert balance == summary.balance_end[pool]
    req = result.requests
    filled = req.filter(pl.col("outcome") == "filled")
    assert filled["settled_at"].is_not_null().all() and filled["earned"].is_not_null().all()
    assert (filled["input_amount"] - filled["output_amount"] >= filled["earned"]).all()
    assert (
        summary.filled + summary.expired + summary.no_capacity + summary.no_route
        == summary.requests
    )
    unconverted = req.filter(~pl.col("ordered_at").is_not_null())
    assert (unconverted["outcome"] != "filled").all()


def test_amounts_are_conserved_on_a_busy_default_day() -> None:
    flow = generate_flow("default", span_h=1.0, rate_per_s=3.0, seed=21, convert_probability=0.6)
    result = replay(flow, "default", overrides={"pool_scale": 0.05}, retry=RetryPolicy())
    assert result.summary.rejected_attempts > 0 and result.summary.filled > 0
    _check_conservation(result)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**16),
    rate=st.floats(0.05, 3.0),
    convert=st.floats(0.0, 1.0),
    scale=st.sampled_from([0.002, 0.02, 1.0]),
    retries=st.integers(0, 3),
)
def test_invariants_hold_for_random_flows(
    seed: int, rate: float, convert: float, scale: float, retries: int
) -> None:
    flow = generate_flow(
        "default", span_h=0.25, rate_per_s=rate, seed=seed, convert_probability=convert
    )
    if flow.height == 0:
        return
    retry = RetryPolicy(capacity_retries=retries) if retries else None
    result = replay(flow, "default", seed=seed, retry=retry, overrides={"pool_scale": scale})
    _check_conservation(result)


@pytest.mark.parametrize("interval", [30.0, 600.0])
def test_pool_samples_cover_the_run_at_the_interval(interval: float) -> None:
    flow = generate_flow("default", span_h=0.5, rate_per_s=1.0, seed=2)
    result = replay(flow, "default", interval_s=interval)
    times = result.pools["t"].unique().sort().to_list()
    assert times[0] == 0.0 and times[-1] >= result.summary.end_s
    assert all(b - a == interval for a, b in itertools.pairwise(times))
    assert result.pools.height == len(times) * 12
    # Every pool of a (chain, token) shows that pair's RFQ counts: count each pair once.
    pairs = result.pools.unique(subset=["t", "chain", "token"])
    assert pairs["rfqs"].sum() == result.summary.attempts


_DIGEST = """
import hashlib
from toolkit.backtest import generate_flow, replay
from toolkit.client import RetryPolicy
flow = generate_flow("default", span_h=0.5, rate_per_s=2.0, seed=9)
result = replay(flow, "default", seed=9, retry=RetryPolicy(), overrides={"pool_scale": 0.02})
text = result.requests.write_csv() + result.pools.write_csv()
print(hashlib.sha256(text.encode()).hexdigest())
"""


def test_result_does_not_depend_on_the_hash_seed() -> None:
    here: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(_DIGEST, here)
    own = out.getvalue().strip()
    hash_seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    other = subprocess.run(
        [sys.executable, "-c", _DIGEST], env=env, capture_output=True, text=True, check=True
    )
    assert other.stdout.strip() == own


def test_replay_leaves_the_garbage_collector_as_it_found_it() -> None:
    # No hidden global state: a caller's (or a concurrent sweep's) GC setting is never touched.
    import gc
    import threading

    flow = generate_flow("single-pool", span_h=0.05, seed=3)
    seen: list[bool] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.append(gc.isenabled())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        replay(flow, "single-pool", seed=3)
    finally:
        stop.set()
        watcher.join()
    assert seen and all(seen)
    gc.disable()
    try:
        replay(flow, "single-pool", seed=3)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_summary_is_a_frozen_typed_result_whose_frames_agree_with_its_fields() -> None:
    result = replay(generate_flow("default", span_h=0.5, seed=4), "default", seed=4)
    s = result.summary
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.requests = 0  # type: ignore[misc]
    row = s.to_frame().row(0, named=True)
    assert row["requests"] == result.requests.height == s.requests
    assert row["fill_share"] == pytest.approx(
        (result.requests["outcome"] == "filled").sum() / s.requests
    )
    assert "fee_revenue" not in row  # the mappings are by_pool's and by_token's
    assert row["policy"] == "threshold" and row["transfers"] == result.transfers.height
    pools = s.by_pool()
    assert pools["pool"].to_list() == list(s.balance_start)
    # the engine's closing balances, exactly (Int128): each pool's changed by what it lent and
    # what settlements credited to it, so per chain and token they sum to the inventory
    closing = pools.with_columns(
        chain=pl.col("pool").str.split(":").list.get(0).cast(pl.Int64),
        token=pl.col("pool").str.split(":").list.get(1),
    )
    by_chain = closing.group_by("chain", "token").agg(pl.col("balance_end").sum())
    expected = s.by_chain().select("chain", "token", pl.col("on_chain_end").alias("balance_end"))
    assert_frame_equal(by_chain, expected, check_row_order=False)
    tokens = s.by_token()
    assert sorted(tokens["token"].to_list()) == ["USDC", "WETH"]
    weth = tokens.filter(pl.col("token") == "WETH").row(0, named=True)
    assert weth["fee_revenue"] == sum(v for k, v in s.fee_revenue.items() if ":WETH:" in k)
