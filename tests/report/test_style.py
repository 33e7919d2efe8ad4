"""The shared plotting helpers and human units behind every report figure."""

from __future__ import annotations

import polars as pl
import pytest

from toolkit.report.style import dress, new_figure, series_styles, usd_ticks
from toolkit.report.units import format_usd, price_usd, symbol_of, usd, with_human_amounts


def test_dress_titles_labels_and_switches_to_log_when_values_span_decades() -> None:
    ax = new_figure().subplots()
    dress(ax, title="t", xlabel="size (USD)", ylabel="fee (bps)", x=[10.0, 1e6], y=[1.0, 5.0])
    assert (ax.get_title(), ax.get_xscale(), ax.get_yscale()) == ("t", "log", "linear")
    assert ax.get_xlabel() == "size (USD), log scale"
    assert ax.get_ylabel() == "fee (bps)"


def test_dress_refuses_a_figure_without_a_title_or_a_label() -> None:
    ax = new_figure().subplots()
    with pytest.raises(ValueError, match="title and both axis labels"):
        dress(ax, title="", xlabel="x (s)", ylabel="y (%)")


def test_series_styles_keep_twelve_routes_apart_with_two_channels() -> None:
    chains = ["Ethereum", "Optimism", "Base", "Arbitrum"]
    keys = [(a, b) for a in chains for b in chains if a != b]
    styles = series_styles(keys)
    assert len({(tuple(s["color"]), s["linestyle"], s["marker"]) for s in styles.values()}) == 12
    assert len({tuple(s["color"]) for s in styles.values()}) == 4


def test_usd_ticks_label_an_axis_in_dollars() -> None:
    figure = new_figure()
    ax = figure.subplots()
    ax.plot([1e6, 5e7], [0, 1])
    usd_ticks(ax.xaxis)
    figure.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert "$10M" in labels and "$0" in labels
    assert all(label.lstrip("-").startswith("$") for label in labels)
    assert format_usd(-1e7) == "-$10M"
    assert format_usd(56_400_000.0) == "$56.4M"


def test_prices_come_from_the_scenario_then_the_amm_markets() -> None:
    assert price_usd("WETH") == 3000.0  # [pricing] of the default scenario
    assert price_usd("USDT", 1) == pytest.approx(1.0, abs=0.01)  # the AMM market's price
    assert usd(10**8, 1, "WBTC") == price_usd("WBTC", 1)
    assert symbol_of(42161, "0xaf88d065e77c8cC2239327C5EDb3A432268e5831") == "USDC"


def test_human_amounts_sit_beside_the_exact_integers() -> None:
    big = 123_456_789_012_345_678_901_234
    frame = pl.DataFrame(
        {"chain": [1], "token": ["WETH"], "amount": pl.Series([big], dtype=pl.Int128)}
    )
    human = with_human_amounts(frame, ["amount"], chain="chain", token="token")
    assert human["amount"].to_list() == [big]
    assert human["amount_tokens"][0] == pytest.approx(big / 10**18)
    assert human["amount_usd"][0] == pytest.approx(big / 10**18 * 3000)


def test_a_chain_has_one_colour_whatever_else_is_drawn() -> None:
    from matplotlib.colors import to_rgba

    from toolkit.report.style import CHAIN_COLORS, chain_color

    alone = series_styles([("Base", "USDC")])
    among = series_styles([("Ethereum", "WETH"), ("Arbitrum", "USDC"), ("Base", "USDC")])
    assert alone[("Base", "USDC")]["color"] == among[("Base", "USDC")]["color"] == "tab:purple"
    assert chain_color(8453) == chain_color("Base") == CHAIN_COLORS["Base"]
    # Every named chain's colour is distinct.
    assert len({to_rgba(c) for c in CHAIN_COLORS.values()}) == len(CHAIN_COLORS)
    # Keys that are not chains keep the categorical palette.
    assert series_styles([("USDC→WETH", "x")])[("USDC→WETH", "x")]["color"] != "tab:purple"
