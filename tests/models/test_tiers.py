"""Observed fees against published fee tiers."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from toolkit.models.pricing import compare_with_tiers, tier_premium_summary

BIG = 2**64  # tier bounds above the Int64 range


def test_each_answer_gets_the_tier_of_its_amount(rfq, tiers) -> None:
    table = tiers(
        {"tier": 1, "fee_bps": 6.0, "min_amount": 0, "max_amount": 1_000},
        {"tier": 2, "fee_bps": 4.0, "min_amount": 1_000, "max_amount": BIG},
        {"tier": 3, "fee_bps": 2.0, "min_amount": BIG + 1, "max_amount": None},
        {"tier": 9, "fee_bps": 1.0, "token": "USDT"},
    )
    obs = rfq(
        {"amount": 500, "input_amount": 10_000, "output_amount": 9_993},  # 7 bps vs 6
        {"amount": 1_000, "input_amount": 10_000, "output_amount": 9_996},  # boundary: tier 2
        {"amount": BIG + 5, "input_amount": 10_000, "output_amount": 9_999},  # 1 bps vs 2
        {"amount": 700, "dst_chain": 99},  # no tier for this route
        {"status": 404, "amount": 500},  # not an answer: dropped
    )
    result = compare_with_tiers(obs, table)
    assert result.height == 4
    assert result.columns[: len(obs.columns)] == obs.columns
    assert result.select("tier", "tier_fee_bps", "premium_bps", "below_tier").rows() == [
        (1, 6.0, 1.0, False),
        (2, 4.0, 0.0, False),
        (3, 2.0, -1.0, True),
        (None, None, None, None),
    ]
    assert result["snapshot_id"].to_list() == ["s1", "s1", "s1", None]


def test_snapshot_in_force_at_the_observation(rfq, tiers, t0) -> None:
    minute = dt.timedelta(minutes=1)
    table = tiers(
        {"snapshot_id": "old", "observed_at": t0 - 10 * minute, "fee_bps": 5.0},
        {"snapshot_id": "new", "observed_at": t0 + 5 * minute, "fee_bps": 3.0},
        {"snapshot_id": "later", "observed_at": t0 + 50 * minute, "fee_bps": 1.0, "token": "X"},
    )
    obs = rfq(
        {"observed_at": t0, "input_amount": 10_000, "output_amount": 9_995},
        {"observed_at": t0 + 6 * minute, "input_amount": 10_000, "output_amount": 9_995},
        # Only a later snapshot exists for this route: it is used.
        {"observed_at": t0, "token": "X", "input_amount": 10_000, "output_amount": 9_999},
    )
    result = compare_with_tiers(obs, table)
    assert result.select("snapshot_id", "tier_fee_bps", "premium_bps").rows() == [
        ("old", 5.0, 0.0),
        ("new", 3.0, 2.0),
        ("later", 1.0, 0.0),
    ]


def test_tolerance_decides_below_tier(rfq, tiers) -> None:
    obs = rfq({"input_amount": 3 * 10**6, "output_amount": 3 * 10**6 - 1_000})  # 3.333… bps
    table = tiers({"fee_bps": 10 / 3})
    assert compare_with_tiers(obs, table)["below_tier"].to_list() == [False]
    strict = compare_with_tiers(obs, tiers({"fee_bps": 3.3334}), tolerance_bps=0.0)
    assert strict["below_tier"].to_list() == [True]
    with pytest.raises(ValueError, match="tolerance_bps: must be a finite number >= 0"):
        compare_with_tiers(obs, table, tolerance_bps=-1.0)


def test_summary_per_route(rfq, tiers) -> None:
    table = tiers({"fee_bps": 5.0})
    obs = rfq(
        {"input_amount": 10_000, "output_amount": 9_994},
        {"input_amount": 10_000, "output_amount": 9_996},
        {"input_amount": 10_000, "output_amount": 9_993},
        {"dst_chain": 99},
    )
    summary = tier_premium_summary(compare_with_tiers(obs, table))
    assert summary.select("dst_chain", "n", "matched", "below", "share_below").rows() == [
        (10, 3, 3, 1, pytest.approx(1 / 3)),
        (99, 1, 0, 0, None),
    ]
    route = summary.row(0, named=True)
    assert (route["premium_min"], route["premium_median"], route["premium_max"]) == (
        -1.0,
        1.0,
        2.0,
    )
    assert route["premium_mean"] == pytest.approx(2 / 3)


def test_empty_inputs_keep_the_schema(rfq, tiers) -> None:
    full = compare_with_tiers(rfq({}), tiers({}))
    for obs, table in ((rfq(), tiers({})), (rfq({"status": 404}), tiers({}))):
        empty = compare_with_tiers(obs, table)
        assert empty.height == 0
        assert empty.schema == full.schema
    untiered = compare_with_tiers(rfq({}), tiers())
    assert untiered.schema == full.schema
    assert untiered.select("tier", "premium_bps").rows() == [(None, None)]
    assert tier_premium_summary(full.clear()).schema == tier_premium_summary(full).schema


def test_missing_columns_are_named(rfq, tiers) -> None:
    with pytest.raises(
        ValueError, match="compare_with_tiers: missing columns: min_amount, max_amount"
    ):
        compare_with_tiers(rfq({}), tiers({}).drop("min_amount", "max_amount"))
    with pytest.raises(ValueError, match="tier_premium_summary: missing columns: below_tier"):
        tier_premium_summary(pl.DataFrame({"premium_bps": [1.0], "src_chain": [1]}), by="src_chain")
