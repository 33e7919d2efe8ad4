"""The shared plotting helpers and human units behind every report figure."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from toolkit.report.prices import price_usd, priced
from toolkit.report.style import dress, new_figure, series_styles, usd_ticks
from toolkit.report.text import format_usd
from toolkit.report.units import symbol_of, usd, with_human_amounts
from toolkit.store import load_prices

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
T1 = T0 + dt.timedelta(hours=1)
WETH = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"


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


def _stored_prices() -> pl.DataFrame:
    """The default scenario's prices as a simulated run stores them, read back from a store."""
    from toolkit.collect.prices import record_scenario
    from toolkit.scenario import load_scenario
    from toolkit.store import Store, price_table

    with Store(":memory:") as store:
        record_scenario(store, load_scenario("default"), T0)
        load_prices(
            store,
            [{"chain": 1, "token": WETH, "symbol": "WETH", "observed_at": T1, "usd": 2000}],
            source="oracle",
        )
        return price_table(store)


def test_prices_come_from_the_store_at_the_observations_time() -> None:
    assert price_usd("WETH") is None and usd(10**18, 1, "WETH") is None  # nothing stored
    with priced(_stored_prices()):
        assert price_usd("WETH", 1, T0) == 3000.0  # the scenario's, stored at T0
        assert price_usd("WETH", 1, T1) == 2000.0  # the oracle's read at T1 is the latest
        assert price_usd("WETH", 1) == 2000.0
        assert price_usd("USDT", 1) == pytest.approx(1.0, abs=0.01)  # the AMM token's price
        assert usd(10**8, 1, "WBTC", T0) == price_usd("WBTC", 1, T0)
    assert symbol_of(42161, "0xaf88d065e77c8cC2239327C5EDb3A432268e5831") == "USDC"


def test_human_amounts_sit_beside_the_exact_integers() -> None:
    big = 123_456_789_012_345_678_901_234
    frame = pl.DataFrame(
        {"chain": [1], "token": ["WETH"], "amount": pl.Series([big], dtype=pl.Int128)}
    )
    with priced(_stored_prices()):
        human = with_human_amounts(frame, ["amount"], chain="chain", token="token")
        at_start = with_human_amounts(
            frame.with_columns(pl.lit(T0).alias("at")),
            ["amount"],
            chain="chain",
            token="token",
            at="at",
        )
    assert at_start["amount_usd"][0] == pytest.approx(big / 10**18 * 3000)
    assert human["amount"].to_list() == [big]
    assert human["amount_tokens"][0] == pytest.approx(big / 10**18)
    assert human["amount_usd"][0] == pytest.approx(big / 10**18 * 2000)


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


def test_titles_of_a_simulated_report_say_so() -> None:
    from toolkit.report.style import simulated_titles

    with simulated_titles(True):
        ax = dress(new_figure().add_subplot(), title="fees", xlabel="x", ylabel="y")
    plain = dress(new_figure().add_subplot(), title="fees", xlabel="x", ylabel="y")
    assert (ax.get_title(), plain.get_title()) == ("Simulated: fees", "fees")
