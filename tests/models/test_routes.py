"""Route comparisons: a split never loses to the best single pool, and wins on size."""

from __future__ import annotations

import random
from collections.abc import Callable

import polars as pl
import pytest

from toolkit.amm.routing import Venue
from toolkit.amm.v2 import Pair
from toolkit.arguments import ArgumentError
from toolkit.models import (
    delay_outcomes,
    firm_vs_indicative,
    gas_threshold,
    impact_curves,
    needed_slippage,
    network_comparison,
    route_comparison,
    slippage_for_revert_share,
)


def venues() -> list[Venue]:
    return [
        Venue.v2("deep", "USDC", "WETH", Pair(10**24, 10**24)),
        Venue.v2("thin", "USDC", "WETH", Pair(10**23, 10**23)),
        Venue.v2("hop1", "USDC", "USDT", Pair(10**24, 10**24)),
        Venue.v2("hop2", "USDT", "WETH", Pair(10**24, 10**24)),
    ]


def test_splits_gain_more_as_trades_grow() -> None:
    amounts = [10**20, 10**21, 10**22, 10**23]
    frame = route_comparison(venues(), "USDC", "WETH", amounts)
    assert frame["amount_in"].to_list() == amounts
    assert (frame["split_out"] >= frame["best_single"]).all()
    gains = frame["split_gain_bps"].to_list()
    assert gains == sorted(gains) and gains[-1] > 100  # over 1 % better at the largest size
    impact = frame["single_impact_bps"].to_list()
    assert impact == sorted(impact)  # price impact grows with size
    assert (frame["split_impact_bps"] <= frame["single_impact_bps"]).all()


def test_bad_amounts_are_refused() -> None:
    with pytest.raises(ArgumentError, match="amounts: must be at least one amount"):
        route_comparison(venues(), "USDC", "WETH", [])
    with pytest.raises(ArgumentError, match=r"amounts\[\]: must be an integer >= 1"):
        route_comparison(venues(), "USDC", "WETH", [0])


# -- the 5 %-grid baseline, direct pools and multi-hop ---------------------------------------


def test_the_grid_baseline_never_beats_the_equalised_split() -> None:
    from toolkit.amm.routing import best_route, find_paths, quote_path
    from toolkit.models import grid_split

    for amount in (10**19, 10**21, 3 * 10**22, 10**23):
        grid = grid_split(venues(), "USDC", "WETH", amount)
        split = best_route(venues(), "USDC", "WETH", amount)
        assert sum(s.amount_in for s in grid.splits) == amount
        assert grid.amount_out <= split.amount_out
        # each grid share is a multiple of 5 % (the rounding unit aside)
        assert all(s.amount_in * 20 // amount * amount // 20 <= s.amount_in for s in grid.splits)
        best_single = max(quote_path(p, amount) for p in find_paths(venues(), "USDC", "WETH"))
        assert grid_split(venues(), "USDC", "WETH", amount, max_paths=1).amount_out == best_single


def test_the_grid_knapsack_finds_the_grid_optimum() -> None:
    import itertools

    from toolkit.amm.routing import find_paths, quote_path
    from toolkit.models import grid_split

    amount = 5 * 10**22
    paths = find_paths(venues(), "USDC", "WETH")
    brute = max(
        sum(quote_path(p, amount * k // 20) for p, k in zip(paths, split, strict=True) if k)
        for split in itertools.product(range(21), repeat=len(paths))
        if sum(split) == 20 and sum(1 for k in split if k) <= 4
    )
    grid = grid_split(venues(), "USDC", "WETH", amount)
    # paths here share no pool, so the exact execution is the sum of the independent quotes
    assert abs(grid.amount_out - brute) <= 10**6  # the rounding unit's worth


def test_multi_hop_gains_are_measured_against_direct_pools_only() -> None:
    frame = route_comparison(venues(), "USDC", "WETH", [10**20, 10**23])
    assert (frame["direct_out"] <= frame["split_out"]).all()
    assert frame["hop_gain_bps"][1] > frame["hop_gain_bps"][0] >= 0
    assert (frame["grid_gain_bps"] >= 0).all()
    only_hops = [v for v in venues() if v.name.startswith("hop")]
    frame = route_comparison(only_hops, "USDC", "WETH", [10**20])
    assert frame["direct_out"][0] is None and frame["hop_gain_bps"][0] is None


# -- frames from the endpoint ------------------------------------------------------------------


def observations() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "network": ["mainnet"] * 4 + ["base"] * 4,
            "pair": ["USDC/WETH"] * 8,
            "amount_in_usd": [1e2, 1e4, 1e6, 1e8] * 2,
            "status": [200, 200, 200, 404, 200, 200, 200, 404],
            "amount_out": [9_990, 995_000, 98_000_000, None, 9_980, 994_000, 96_000_000, None],
            "mid_out": [1e4, 1e6, 1e8, 1e10] * 2,
            "gas_usd": [3.0, 3.0, 3.5, None, 0.01, 0.01, 0.012, None],
        },
        schema_overrides={"amount_out": pl.Int128},
    )


def test_impact_curves_keep_answered_routes_in_bps() -> None:
    curves = impact_curves(observations())
    assert curves.height == 6 and (curves["status"] == 200).all()
    mainnet = curves.filter(pl.col("network") == "mainnet")
    assert mainnet["impact_bps"].to_list() == pytest.approx([10.0, 50.0, 200.0])
    assert mainnet["gas_bps"].to_list() == pytest.approx([300.0, 3.0, 0.035])
    assert mainnet["total_bps"].to_list() == pytest.approx([310.0, 53.0, 200.035])
    with pytest.raises(ValueError, match="impact_curves: missing columns: mid_out"):
        impact_curves(observations().drop("mid_out"))
    with pytest.raises(ValueError, match=r"mid_out.*positive"):
        impact_curves(observations().with_columns(mid_out=pl.lit(0.0)))


def test_impact_curves_leave_an_unpriced_route_unknown_not_zero() -> None:
    # A store without a token's price gives a null mid_out: the row stays, its impact unknown.
    unpriced = observations().with_columns(
        mid_out=pl.when(pl.col("amount_in_usd") == 1e6).then(None).otherwise(pl.col("mid_out"))
    )
    curves = impact_curves(unpriced)
    assert curves.height == impact_curves(observations()).height
    assert curves["impact_bps"].null_count() == curves["total_bps"].null_count() == 2
    assert curves["gas_bps"].null_count() == 0


def test_gas_stops_mattering_where_it_stays_within_the_limit() -> None:
    table = gas_threshold(impact_curves(observations()), within_bps=1.0)
    rows = {r["network"]: r for r in table.iter_rows(named=True)}
    assert rows["mainnet"]["observed_usd"] == 1e6
    assert rows["mainnet"]["break_even_usd"] == pytest.approx(3.0 * 1e4)
    assert rows["base"]["observed_usd"] == 1e2  # 1 cent on $100 is 1 bp
    strict = gas_threshold(impact_curves(observations()), within_bps=0.001)
    assert strict.filter(pl.col("network") == "mainnet")["observed_usd"][0] is None
    with pytest.raises(ArgumentError, match="within_bps"):
        gas_threshold(impact_curves(observations()), within_bps=0)


def test_networks_compare_on_sizes_both_answered() -> None:
    table = network_comparison(impact_curves(observations()))
    assert table["amount_in_usd"].to_list() == [1e2, 1e4, 1e6]
    assert table["cheaper"].to_list() == ["base", "mainnet", "mainnet"]  # 53 < 60.01 bps
    assert table["difference_bps"][0] == pytest.approx(310.0 - 21.0)
    with pytest.raises(ArgumentError, match="second"):
        network_comparison(impact_curves(observations()), first="base", second="base")


# -- stale routes -------------------------------------------------------------------------------


def trials(seed: int = 3, n: int = 400) -> pl.DataFrame:
    rng = random.Random(seed)
    quoted = [rng.randrange(10**6, 10**20) for _ in range(n)]
    executed = [
        None if rng.random() < 0.02 else int(q * (1 + rng.gauss(-0.001, 0.004))) for q in quoted
    ]
    return pl.DataFrame(
        {
            "network": ["base"] * n,
            "delay_s": [2.0] * (n // 2) + [10.0] * (n - n // 2),
            "quoted_out": quoted,
            "executed_out": executed,
        },
        schema_overrides={"quoted_out": pl.Int128, "executed_out": pl.Int128},
    )


def test_needed_slippage_is_the_smallest_minimum_met_exactly() -> None:
    frame = needed_slippage(trials())
    for q, e, s in frame.select("quoted_out", "executed_out", "needed_bps").iter_rows():
        if e is None:
            assert s == 10_001
            continue
        assert e >= q * (10_000 - s) // 10_000
        assert s == 0 or e < q * (10_000 - (s - 1)) // 10_000


def test_revert_rates_fall_with_slippage_and_match_a_direct_count() -> None:
    data = trials()
    levels = [0, 5, 10, 25, 50, 100, 10_000]
    table = delay_outcomes(data, levels)
    assert table.height == 2 * len(levels)
    for delay in (2.0, 10.0):
        rates = table.filter(pl.col("delay_s") == delay)["revert_share"].to_list()
        assert rates == sorted(rates, reverse=True) and rates[0] > rates[-1] > 0
        group = data.filter(pl.col("delay_s") == delay)
        for level, rate in zip(levels, rates, strict=True):
            reverts = sum(
                e is None or e < q * (10_000 - level) // 10_000
                for q, e in group.select("quoted_out", "executed_out").iter_rows()
            )
            assert rate == reverts / group.height
    with pytest.raises(ArgumentError, match=r"slippage_bps\[\]"):
        delay_outcomes(data, [10_001])


def test_the_slippage_for_a_target_revert_rate_is_the_smallest_that_meets_it() -> None:
    data = trials()
    table = slippage_for_revert_share(data, 0.05)
    for row in table.iter_rows(named=True):
        level = row["slippage_bps"]
        outcomes = delay_outcomes(
            data.filter(pl.col("delay_s") == row["delay_s"]), [level - 1, level]
        )
        assert outcomes["revert_share"][1] <= 0.05 < outcomes["revert_share"][0]
        assert row["revert_share"] == outcomes["revert_share"][1]
    # about 2 % revert whatever the slippage: a 1 % target cannot be met
    assert slippage_for_revert_share(data, 0.01)["slippage_bps"].to_list() == [None, None]
    with pytest.raises(ArgumentError, match="target"):
        slippage_for_revert_share(data, 1.5)


# -- firm against indicative ---------------------------------------------------------------------


def legs() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "strategy": ["intents then swap"] * 2 + ["swap then intents"] * 2,
            "size_usd": [1e5] * 4,
            "step": [1, 2, 1, 2],
            "leg": ["intents", "swap", "swap", "intents"],
            "network": ["mainnet", "base", "mainnet", "mainnet"],
            "delay_s": [0.0, 30.0, 12.0, 0.0],
            "value_in_usd": [1e5, 99_950.0, 1e5, 99_900.0],
            "value_out_usd": [99_950.0, 99_800.0, 99_900.0, None],
            "gas_usd": [0.0, 0.02, 4.0, 0.0],
        }
    )


def rates() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "network": ["base", "base", "mainnet"],
            "delay_s": [10.0, 20.0, 12.0],
            "revert_share": [0.1, 0.3, 0.05],
        }
    )


def test_firm_then_indicative_costs_and_risks_add_up() -> None:
    table = firm_vs_indicative(legs(), rates())
    first = table.filter(pl.col("strategy") == "intents then swap").row(0, named=True)
    assert first["cost_usd"] == pytest.approx(200.02)
    assert first["intents_bps"] == pytest.approx(5.0) and first["swap_bps"] == pytest.approx(15.0)
    assert first["failure_share"] == pytest.approx(0.3)  # 30 s is past every measured delay
    second = table.filter(pl.col("strategy") == "swap then intents").row(0, named=True)
    assert second["refused"] and second["cost_bps"] is None
    assert second["failure_share"] == 1.0
    nearer = firm_vs_indicative(legs().with_columns(delay_s=pl.lit(15.0)), rates())
    assert nearer["failure_share"][0] == pytest.approx(0.3)  # 15 s takes the 20 s measurement
    with pytest.raises(ValueError, match="no rate"):
        firm_vs_indicative(legs(), rates().filter(pl.col("network") == "base"))
    with pytest.raises(ValueError, match="intents or swap"):
        firm_vs_indicative(legs().with_columns(leg=pl.lit("bridge")), rates())


@pytest.mark.parametrize(
    ("func", "frame", "column"),
    [
        (impact_curves, observations, "gas_usd"),
        (gas_threshold, lambda: impact_curves(observations()), "gas_bps"),
        (network_comparison, lambda: impact_curves(observations()), "total_bps"),
        (needed_slippage, trials, "executed_out"),
        (lambda f: delay_outcomes(f, [0]), trials, "quoted_out"),
        (lambda f: slippage_for_revert_share(f, 0.1), trials, "delay_s"),
        (lambda f: firm_vs_indicative(f, rates()), legs, "step"),
        (lambda f: firm_vs_indicative(legs(), f), rates, "revert_share"),
    ],
)
def test_a_missing_column_is_named(
    func: Callable[[pl.DataFrame], pl.DataFrame], frame: Callable[[], pl.DataFrame], column: str
) -> None:
    with pytest.raises(ValueError, match=rf"missing columns: {column}"):
        func(frame().drop(column))


def test_revert_rates_carry_wilson_or_clustered_intervals() -> None:
    from toolkit.models.intervals import clustered_share, wilson

    quoted = [10_000] * 8
    executed = [9_000, 10_000, 9_000, 10_000, 10_000, 10_000, 10_000, 10_000]
    trials = pl.DataFrame(
        {
            "network": ["base"] * 8,
            "delay_s": [2.0] * 8,
            "quoted_out": quoted,
            "executed_out": executed,
        }
    )
    row = delay_outcomes(trials, [0]).row(0, named=True)
    assert (row["reverts"], row["trials"]) == (2, 8)
    assert (row["revert_ci95_low"], row["revert_ci95_high"]) == pytest.approx(wilson(2, 8))
    # The two reverts sit in one cluster of overlapping trials: the interval says so.
    clustered = trials.with_columns(cluster=pl.Series([0, 0, 0, 0, 1, 1, 1, 1]))
    row = delay_outcomes(clustered, [0]).row(0, named=True)
    _, low, high = clustered_share([2, 0], [4, 4])
    assert (row["revert_ci95_low"], row["revert_ci95_high"]) == pytest.approx((low, high))
    assert low is not None and high is not None
    assert high - low > wilson(2, 8)[1] - wilson(2, 8)[0]
