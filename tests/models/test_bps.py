"""The shared bps and share figures: one definition behind the models and the report."""

from __future__ import annotations

import polars as pl
import pytest

from toolkit.models import empirical_blocking
from toolkit.models.bps import answer_counts, gain_bps, share_404, shortfall_bps
from toolkit.models.routes import impact_against_best, impact_curves
from toolkit.models.slippage import needed_slippage


def test_shortfall_is_the_same_figure_on_numbers_and_on_columns() -> None:
    got, reference = [9_960.0, 10_000.0, 10_050.0], [10_000.0, 10_000.0, 10_000.0]
    frame = pl.DataFrame({"got": got, "reference": reference})
    columnar = frame.select(shortfall_bps(pl.col("got"), pl.col("reference"))).to_series().to_list()
    assert columnar == [shortfall_bps(g, r) for g, r in zip(got, reference, strict=True)]
    assert [round(v, 9) for v in columnar] == [40.0, 0.0, -50.0]


def test_impact_and_slippage_models_use_the_one_shortfall() -> None:
    curves = impact_curves(
        pl.DataFrame(
            {"network": ["base"], "pair": ["USDC/WETH"], "amount_in_usd": [1e3],
             "status": [200], "amount_out": [996], "mid_out": [1_000.0], "gas_usd": [0.0]}
        )
    )  # fmt: skip
    assert curves["impact_bps"][0] == shortfall_bps(996.0, 1_000.0)
    trials = pl.DataFrame(
        {"network": ["base"], "delay_s": [2.0], "quoted_out": [10_000], "executed_out": [9_990]}
    )
    assert needed_slippage(trials)["slip_bps"][0] == shortfall_bps(9_990.0, 10_000.0)


def test_gain_is_none_without_a_base() -> None:
    assert gain_bps(10_100, 10_000) == pytest.approx(100.0)
    assert gain_bps(5, 0) is None
    assert gain_bps(None, 5) is None


def test_the_404_share_leaves_other_statuses_out_and_matches_empirical_blocking() -> None:
    status = [200, 404, 404, 500, 0, 200]
    counted = pl.DataFrame({"status": status}).select(answer_counts()).with_columns(share_404())
    assert counted.row(0) == (6, 2, 2, 0.5)
    at = pl.datetime(2025, 1, 1, time_zone="UTC")
    obs = pl.DataFrame({"status": status}).with_columns(
        observed_at=at, src_chain=pl.lit(1), dst_chain=pl.lit(10), token=pl.lit("USDC")
    )
    assert empirical_blocking(obs, window=None)["blocking"][0] == counted["share_404"][0]
    none = pl.DataFrame({"ok": [0], "blocked": [0]}).select(share_404())
    assert none["share_404"][0] is None


def test_impact_against_best_is_the_shortfall_from_the_pairs_best_rate() -> None:
    routes = pl.DataFrame(
        {"network": ["base", "base", "mainnet"], "pair": ["USDC→WETH"] * 3,
         "rate": [0.0004, 0.000396, 0.00039]}
    )  # fmt: skip
    impact = impact_against_best(routes)["impact_bps"].to_list()
    assert [round(v, 9) for v in impact] == [0.0, 100.0, 0.0]


def test_impact_against_best_names_the_missing_column() -> None:
    with pytest.raises(ValueError, match="impact_against_best: missing columns: rate"):
        impact_against_best(pl.DataFrame({"network": ["base"], "pair": ["a"]}))
    with pytest.raises(ValueError, match=r"missing columns: pair \(named in by\)"):
        impact_against_best(pl.DataFrame({"network": ["base"], "rate": [1.0]}))
