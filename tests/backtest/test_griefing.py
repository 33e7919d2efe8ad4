"""RFQ griefing: a quote-only bot holds capacity by Little's law, and limits take it back."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit.backtest.griefing import attack_flow, griefing

GRID: dict[str, Any] = {"honest_rate_per_s": 0.2, "span_h": 0.5, "seed": 1}


def test_the_bot_is_regular_never_converts_and_fits_the_flow_schema() -> None:
    bot = attack_flow("single-pool", rate_per_s=2.0, span_h=0.1)
    assert bot.height == 720 and not bot["converts"].any()
    assert bot["t"].diff().drop_nulls().unique().to_list() == [0.5]
    assert bot["amount"].unique().to_list() == [1_500_000_000]  # a tenth of the largest tier


def test_an_attack_raises_honest_404s_and_holds_capacity_as_littles_law_says() -> None:
    frame = griefing("single-pool", attack_rates_per_s=[0.0, 1.0], **GRID)
    calm, attacked = frame.rows(named=True)
    assert calm["honest_404_share"] < attacked["honest_404_share"]
    assert calm["capacity_held"] == 0.0
    # served quotes x window x amount over the run, against the pool: at most the whole pool
    assert 0.5 < attacked["capacity_held"] <= 1.0
    assert attacked["honest_fill_share"] < calm["honest_fill_share"]


def test_a_per_key_limit_and_a_shorter_window_take_capacity_back() -> None:
    frame = griefing(
        "single-pool",
        attack_rates_per_s=[1.0],
        quote_s=[15, 5],
        rate_limits_per_s=[None, 0.25],
        **GRID,
    )
    by = {(r["quote_s"], r["rate_limit_per_s"]): r for r in frame.iter_rows(named=True)}
    assert by[(15, 0.25)]["capacity_held"] < by[(15, None)]["capacity_held"]
    assert by[(5, None)]["capacity_held"] < by[(15, None)]["capacity_held"]
    assert by[(15, 0.25)]["honest_404_share"] <= by[(15, None)]["honest_404_share"]


def test_bad_settings_name_the_field() -> None:
    with pytest.raises(ValueError, match="rate_per_s: must be a finite number >= 0"):
        attack_flow("single-pool", rate_per_s=-1.0, span_h=1.0)
    with pytest.raises(ValueError, match=r"route: .* is not onboarded"):
        attack_flow("single-pool", rate_per_s=1.0, span_h=1.0, route=(1, 999, "USDC"))
