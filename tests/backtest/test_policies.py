"""Rebalancing policies in the replay: the instant-free baseline reproduces the toolkit's seeded
results from before inventory had a chain, and the threshold policy keeps a chain in its band
under a one-way flow where the none policy lets it run dry."""

from __future__ import annotations

import hashlib

import polars as pl
import pytest

from toolkit.backtest import BacktestResult, Fixed, generate_flow, replay

#: The request and pool columns a replay had before issue 29, and their SHA-256 (as CSV) on the
#: default scenario, seed 1, one day at 0.03 RFQs/s (823 fills), computed on the tree before the
#: change (commit a7286e5).
OLD_REQUESTS = ["request_id", "t", "src_chain", "dst_chain", "token", "quote_type", "amount",
                "outcome", "status", "attempts", "pool", "quote_id", "order_id", "input_amount",
                "output_amount", "fee_bps", "quoted_at", "ordered_at", "filled_at",
                "settled_at", "earned", "error"]  # fmt: skip
OLD_POOLS = ["t", "pool", "chain", "token", "pool_type", "capacity", "available", "reserved",
             "outstanding", "utilization", "rfqs", "no_capacity", "no_capacity_share",
             "fee_revenue"]  # fmt: skip
BEFORE = {
    "requests": "7cd9b429765adec29d223ab94926f474896b191f9a383a4119f1135709b57f31",
    "pools": "f39cfcfb7224f414f46d2182cafee0a9d7820c8c182a7f867be3a5e64d81d341",
}


def _digest(frame: pl.DataFrame) -> str:
    return hashlib.sha256(frame.write_csv().encode()).hexdigest()


def test_instant_free_reproduces_the_seeded_day_from_before_the_change() -> None:
    flow = generate_flow("default", span_h=24.0, rate_per_s=0.03, seed=1)
    result = replay(flow, "default", seed=1, overrides={"rebalancing.policy": "instant-free"})
    assert result.summary.filled == 823 and result.summary.policy == "instant-free"
    assert _digest(result.requests.select(OLD_REQUESTS)) == BEFORE["requests"]
    assert _digest(result.pools.select(OLD_POOLS)) == BEFORE["pools"]
    assert result.transfers.height == 0


def _one_way(policy: str) -> BacktestResult:
    """Ethereum -> Base only, 2,000 USDC orders that all convert, on the default scenario at 1 %
    of its capital (Base: 65,000 USDC of 210,000): Base drains, Ethereum fills up."""
    flow = generate_flow(
        "default",
        span_h=4.0,
        rate_per_s=0.01,
        seed=7,
        profile=None,
        routes={(1, 8453, "USDC"): 1.0},
        sizes={"USDC": Fixed(2_000 * 10**6)},
        exact_output_share=1.0,
        convert_probability=1.0,
    )
    overrides = {"pool_scale": 0.01, "rebalancing.policy": policy}
    return replay(flow, "default", seed=7, overrides=overrides, interval_s=30.0)


@pytest.fixture(scope="module")
def one_way() -> dict[str, BacktestResult]:
    return {policy: _one_way(policy) for policy in ("none", "threshold")}


def _base(result: BacktestResult) -> pl.DataFrame:
    return result.inventory.filter((pl.col("chain") == 8453) & (pl.col("token") == "USDC"))


def test_none_lets_the_destination_run_dry_under_a_one_way_flow(
    one_way: dict[str, BacktestResult],
) -> None:
    none = one_way["none"]
    assert none.summary.transfers == 0
    lowest = _base(none)["on_chain"].min()
    assert isinstance(lowest, int) and lowest < 2_000 * 10**6  # spent: less than one order left
    assert none.summary.no_capacity_share > 0.3
    # Every input is on Ethereum: the service's USDC grew there by what Base paid out and more.
    change = dict(
        none.summary.by_chain().select("chain", "change").filter(pl.col("change") != 0).rows()
    )
    assert change[1] > 0 > change[8453] and change[1] > -change[8453]


def test_threshold_keeps_each_chain_within_its_band(one_way: dict[str, BacktestResult]) -> None:
    threshold = one_way["threshold"]
    s = threshold.summary
    assert s.transfers > 0 and s.rebalancing_cost_usd > 0 and s.rebalancing_cost_bps > 0
    assert threshold.transfers["dst_chain"].unique().to_list() == [8453]
    assert threshold.transfers["src_chain"].unique().to_list() == [1]
    # Base's share (what it holds, what is in flight to it and what is owed to it) never falls
    # below its threshold (half its opening share) at any sample, where without rebalancing it
    # falls to nothing: each fill that takes it under sends a transfer at once.
    opening = 6_500 / 21_000
    kept, drained = _base(threshold)["share"].min(), _base(one_way["none"])["share"].min()
    assert isinstance(kept, float) and isinstance(drained, float)
    assert kept >= opening / 2
    assert drained < opening / 10
    assert s.no_capacity_share < one_way["none"].summary.no_capacity_share
    # Every chain ends at or above its threshold.
    last = threshold.inventory.filter(pl.col("t") == threshold.inventory["t"].max())
    usdc = last.filter(pl.col("token") == "USDC")
    assert (usdc["share"] >= pl.Series([7 / 21, 2.5 / 21, 6.5 / 21, 5 / 21]) / 2).all()
