"""Seeded swap and credit flows: identical for a seed, within their rules, bad input named."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from toolkit.flows import (
    CREDIT_FLOW_SCHEMA,
    SWAP_FLOW_SCHEMA,
    generate_credit_flow,
    generate_swap_flow,
)


def test_swap_flow_is_seeded_sorted_and_priced_in_usd() -> None:
    swaps = generate_swap_flow("default", span_h=2.0, rate_per_s=0.2, seed=4, profile=None)
    assert swaps.schema == SWAP_FLOW_SCHEMA
    assert_frame_equal(
        swaps, generate_swap_flow("default", span_h=2.0, rate_per_s=0.2, seed=4, profile=None)
    )
    assert swaps["t"].is_sorted() and swaps["t"].max() < 7200  # type: ignore[operator]
    assert set(swaps.filter(pl.col("chain") == 8453)["token_in"]) <= {
        "USDC",
        "WETH",
        "USDT",
        "cbBTC",
    }
    usdc = swaps.filter(pl.col("token_in") == "USDC")["amount_in"].cast(pl.Float64)
    assert 800 < usdc.median() / 10**6 < 5_000  # type: ignore[operator]  # median 2,000 USD


def test_credit_flow_keeps_debt_under_the_collateral_share_and_repays_after_drawing() -> None:
    credit = generate_credit_flow("default", span_h=3.0, borrowers=3, draw_rate_per_h=20.0, seed=2)
    assert credit.schema == CREDIT_FLOW_SCHEMA and credit["t"].is_sorted()
    for (borrower,), rows in credit.group_by("borrower"):
        actions = rows["action"].to_list()
        assert actions[0] == "lock" and actions.count("lock") == 1, borrower
        debt = 0
        for action, amount in rows.select("action", "amount").rows():
            debt += {"draw": amount, "repay": -amount}.get(action, 0)
            assert 0 <= debt <= 10_000 * 10**6  # half of the 20,000 locked
        if "unlock" in actions:
            assert actions[-1] == "unlock" and debt == 0


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="borrowers: must be an integer >= 1 and <= 10"):
        generate_credit_flow("default", borrowers=11)
    with pytest.raises(ValueError, match="max_utilization"):
        generate_credit_flow("default", max_utilization=1.5)
    with pytest.raises(ValueError, match="pairs: 'DOGE' is not a token of the mainnet market"):
        generate_swap_flow("default", pairs=[("USDC", "DOGE")])
    with pytest.raises(ValueError, match="median_usd: must be a finite number > 0"):
        generate_swap_flow("default", median_usd=0)
