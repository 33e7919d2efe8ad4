"""The vectorised health factor equals the credit package's one definition, on every shape."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from toolkit.arguments import ArgumentError
from toolkit.credit import figures, liquidation
from toolkit.models import health_factor, monte_carlo, monte_carlo_levels, stress
from toolkit.models.health import (
    CreditBook,
    MarketParameters,
    bad_debt,
    correlated_prices,
    estimate_volatility,
    liquidations,
    maintenance_ltvs,
)

ASSETS = ["usdc", "gtusdcp", "yobtc"]
M = maintenance_ltvs(ASSETS)
PRICES = np.array([1.0, 1.0, 60_000.0])


def book_of(held: np.ndarray, debt: np.ndarray, prices: np.ndarray = PRICES) -> CreditBook:
    return CreditBook(tuple(f"a{i}" for i in range(len(debt))), tuple(ASSETS), held, debt, prices)


amounts = hnp.arrays(
    np.int64, st.tuples(st.integers(1, 6), st.just(3)), elements=st.integers(0, 10**9)
)


@settings(max_examples=60, deadline=None)
@given(held=amounts, data=st.data())
def test_the_kernel_equals_the_exact_definition(held: np.ndarray, data: st.DataObject) -> None:
    n = held.shape[0]
    debt = np.array(data.draw(st.lists(st.integers(0, 10**9), min_size=n, max_size=n)))
    prices = np.array(data.draw(st.lists(st.integers(1, 1000), min_size=3, max_size=3)))
    got = health_factor(held.astype(float), M, debt.astype(float), prices.astype(float))
    for i in range(n):
        values = {a: int(held[i, j] * prices[j]) for j, a in enumerate(ASSETS)}
        exact = figures(values, principal=int(debt[i])).health_factor
        if exact is None:
            assert got[i] == np.inf
        else:
            assert got[i] == pytest.approx(float(exact), rel=1e-12)


def test_a_scenario_axis_gives_one_row_per_scenario() -> None:
    held = np.array([[1_000.0, 0.0, 0.0], [0.0, 0.0, 0.02], [5.0, 5.0, 0.0]])
    debt = np.array([500.0, 600.0, 0.0])
    prices = np.array([[1.0, 1.0, 60_000.0], [1.0, 1.0, 30_000.0]])
    hf = health_factor(held, M, debt, prices)
    assert hf.shape == (2, 3)
    np.testing.assert_allclose(hf[:, 0], [1.85, 1.85])
    np.testing.assert_allclose(hf[:, 1], [0.02 * 60_000 * 0.7 / 600, 0.02 * 30_000 * 0.7 / 600])
    assert np.isinf(hf[:, 2]).all()
    np.testing.assert_array_equal(hf[0], health_factor(held, M, debt, prices[0]))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((np.ones(3), M, np.ones(1), np.ones(3)), "collateral: must be a 2-d array"),
        (
            (np.ones((2, 3)), M[:2], np.ones(2), np.ones(3)),
            r"maintenance_ltv: must be of shape \(3,\)",
        ),
        ((np.ones((2, 3)), M, np.ones(3), np.ones(3)), r"debt: must be of shape \(2,\)"),
        ((np.ones((2, 3)), M, np.ones(2), np.ones(4)), "prices: must be 3 prices per scenario"),
        ((-np.ones((2, 3)), M, np.ones(2), np.ones(3)), "collateral: must be finite and non-neg"),
    ],
)
def test_bad_shapes_name_the_argument(args: tuple[np.ndarray, ...], message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        health_factor(*args)


def test_stress_counts_the_accounts_each_shock_makes_liquidatable() -> None:
    held = np.array([[1_000.0, 0.0, 0.0], [0.0, 0.0, 0.02], [0.0, 1_000.0, 0.0]])
    debt = np.array([800.0, 500.0, 700.0])
    frame = stress(book_of(held, debt))
    assert frame.height == 7 * 4
    assert frame["shock"].unique().sort().to_list() == [-0.6, -0.5, -0.4, -0.3, -0.2, -0.1, -0.05]
    all_down = frame.filter(shocked="all").sort("shock", descending=True)
    counts = all_down["liquidatable"].to_list()
    assert counts == sorted(counts)  # deeper shocks never make fewer accounts liquidatable
    btc_30 = frame.filter(shocked="yobtc", shock=-0.3).row(0, named=True)
    # 0.02 BTC at 42,000 (-30 %) with a 70 % maintenance LTV: 588 covers 500; at -60 % (24,000)
    # it is 336: liquidatable
    assert btc_30["liquidatable"] == 0
    assert frame.filter(shocked="yobtc", shock=-0.6)["debt_at_risk"].item() == 500.0
    with pytest.raises(ArgumentError, match="shocks: must be price changes"):
        stress(book_of(held, debt), shocks=[0.2])


def test_correlated_prices_have_the_volatility_and_correlation_asked_for() -> None:
    corr = np.array([[1.0, 0.6], [0.6, 1.0]])
    vols = np.array([0.5, 0.8])
    paths = correlated_prices(
        np.array([100.0, 200.0]), vols, corr, horizon_d=365, n_scenarios=200_000,
        rng=np.random.default_rng(3),
    )  # fmt: skip
    logs = np.log(paths / np.array([100.0, 200.0]))
    np.testing.assert_allclose(logs.std(axis=0), vols, rtol=0.01)
    assert np.corrcoef(logs, rowvar=False)[0, 1] == pytest.approx(0.6, abs=0.01)
    # driftless: the expected price is today's
    np.testing.assert_allclose(paths.mean(axis=0), [100.0, 200.0], rtol=0.01)


def test_volatility_is_estimated_back_from_a_price_table() -> None:
    rng = np.random.default_rng(5)
    steps = rng.standard_normal((5_000, 2)) @ np.linalg.cholesky([[1, -0.3], [-0.3, 1]]).T
    daily = steps * np.array([0.4, 0.9]) / np.sqrt(365)
    table = pl.DataFrame(np.exp(np.cumsum(daily, axis=0)), schema=["eth", "btc"], orient="row")
    market = estimate_volatility(table, periods_per_year=365)
    assert market.assets == ("eth", "btc")
    np.testing.assert_allclose(market.vols, [0.4, 0.9], rtol=0.05)
    assert market.correlation[0, 1] == pytest.approx(-0.3, abs=0.05)
    # for a book's assets: its order, and a missing column named
    assert estimate_volatility(table, periods_per_year=365, assets=["btc", "eth"]).assets == (
        "btc",
        "eth",
    )
    with pytest.raises(ArgumentError, match="price_table: must be a frame with a column for"):
        estimate_volatility(table, periods_per_year=365, assets=["eth", "sol"])


def test_bad_debt_is_what_the_exact_liquidation_leaves() -> None:
    held = np.array([[0.0, 0.0, 0.01], [300.0, 0.0, 0.0], [0.0, 0.0, 0.05]])
    debt = np.array([720.0, 100.0, 5_000.0])
    prices = np.array([1.0, 1.0, 50_000.0])
    bonus = np.array([0.01, 0.06, 0.08])
    got = bad_debt(held, debt, prices, bonus)
    for i in range(3):
        values = {a: int(held[i, j] * prices[j] * 10**6) for j, a in enumerate(ASSETS)}
        exact = liquidation(values, int(debt[i] * 10**6))
        assert got[i] == pytest.approx(exact.bad_debt / 10**6, abs=1e-5)
    assert got[1] == 0 and got[0] > 0


def test_monte_carlo_streams_in_chunks_without_changing_the_answer() -> None:
    rng = np.random.default_rng(11)
    held = np.column_stack([rng.uniform(0, 1_000, 300), np.zeros(300), rng.uniform(0, 0.05, 300)])
    debt = held @ np.array([0.8, 0.0, 50_000.0]) * rng.uniform(0.3, 0.75, 300)
    book = book_of(held, debt)
    market = MarketParameters(book.assets, np.array([0.0, 0.05, 0.7]), np.eye(3))
    calm_market = MarketParameters(book.assets, market.vols * 0.1, np.eye(3))
    kwargs = {"horizon_d": 30.0, "n_scenarios": 4_000, "seed": 2, "progress": False}
    whole = monte_carlo(book, market, chunk=4_000, **kwargs)  # type: ignore[arg-type]
    chunked = monte_carlo(book, market, chunk=333, **kwargs)  # type: ignore[arg-type]
    assert whole == chunked
    assert whole.scenarios == 4_000 and whole.horizon_d == 30.0
    assert whole.liquidations_at_risk >= whole.liquidations_mean > 0
    assert whole.bad_debt_expected_shortfall >= whole.bad_debt_at_risk >= 0
    frame = whole.to_frame()
    assert frame.height == 1 and frame.row(0, named=True) == whole.as_dict()
    assert frame.to_pandas()["bad_debt_mean"].iloc[0] == whole.bad_debt_mean
    calm = monte_carlo(book, calm_market, chunk=4_000, **kwargs)  # type: ignore[arg-type]
    assert calm.liquidations_mean < whole.liquidations_mean


def test_monte_carlo_levels_share_the_draws_and_equal_each_single_run() -> None:
    rng = np.random.default_rng(5)
    held = np.column_stack([rng.uniform(0, 1_000, 200), np.zeros(200), rng.uniform(0, 0.05, 200)])
    debt = held @ np.array([0.8, 0.0, 50_000.0]) * rng.uniform(0.3, 0.9, 200)
    book = book_of(held, debt)
    market = MarketParameters(book.assets, np.array([0.0, 0.05, 0.8]), np.eye(3))
    levels = (0.95, 0.99, 0.999)
    kwargs = {"horizon_d": 30.0, "n_scenarios": 3_000, "seed": 4, "chunk": 700, "progress": False}
    shared = monte_carlo_levels(book, market, confidences=levels, **kwargs)  # type: ignore[arg-type]
    single = [monte_carlo(book, market, confidence=c, **kwargs) for c in levels]  # type: ignore[arg-type]
    # exactly equal, field by field: the draws depend on the seed alone, not on the confidence
    assert list(shared) == single
    assert [r.confidence for r in shared] == list(levels)
    assert shared[0].bad_debt_at_risk <= shared[1].bad_debt_at_risk <= shared[2].bad_debt_at_risk
    assert shared[2].bad_debt_at_risk > 0 and len({r.bad_debt_mean for r in shared}) == 1
    with pytest.raises(ArgumentError, match="confidences: must be a sequence of at least one"):
        monte_carlo_levels(book, market, confidences=(), progress=False)
    with pytest.raises(ArgumentError, match="confidence: must be a number in"):
        monte_carlo_levels(book, market, confidences=(0.9, 1.5), progress=False)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"confidence": 1.0}, "confidence: must be a number in"),
        ({"n_scenarios": 0}, "n_scenarios: must be an integer >= 1"),
        ({"correlation": np.array([[1.0, 2.0], [2.0, 1.0]])}, "correlation: must be a symmetric"),
        ({"assets": ("yobtc", "usdc")}, r"market: must be parameters of the book's assets"),
        ({"vols": np.array([0.1])}, r"vols: must be of shape \(2,\)"),
    ],
)
def test_bad_monte_carlo_settings_name_the_field(kwargs: dict[str, object], message: str) -> None:
    book = CreditBook(("a",), ("usdc", "yobtc"), np.ones((1, 2)), np.ones(1), np.ones(2))
    market: dict[str, Any] = {
        "assets": book.assets,
        "vols": np.array([0.1, 0.1]),
        "correlation": np.eye(2),
    }
    options = {k: v for k, v in kwargs.items() if k not in market}
    market.update({k: v for k, v in kwargs.items() if k in market})
    with pytest.raises(ArgumentError, match=message):
        monte_carlo(
            book,
            MarketParameters(**market),
            progress=False,
            **options,  # type: ignore[arg-type]
        )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"collateral": np.ones(2)}, "collateral: must be a 2-d array"),
        ({"collateral": np.ones((2, 2))}, r"collateral: must be of shape \(1, 2\)"),
        ({"debt": np.ones(2)}, r"debt: must be of shape \(1,\): one per account"),
        ({"prices": np.array([1.0, -1.0])}, "prices: must be finite and non-negative"),
        ({"assets": ("usdc", "doge")}, "assets: must be assets the product rules list"),
    ],
)
def test_a_book_names_what_does_not_fit(change: dict[str, object], message: str) -> None:
    fields: dict[str, object] = {
        "accounts": ("a",),
        "assets": ("usdc", "yobtc"),
        "collateral": np.ones((1, 2)),
        "debt": np.ones(1),
        "prices": np.ones(2),
    }
    with pytest.raises(ArgumentError, match=message):
        CreditBook(**{**fields, **change})  # type: ignore[arg-type]


def test_a_book_derives_its_ltvs_and_bonuses_from_its_rules() -> None:
    from toolkit.backtest.credit import scaled_rules
    from toolkit.credit import DEFAULT_RULES

    book = book_of(np.array([[1_000.0, 0.0, 0.0]]), np.array([500.0]))
    np.testing.assert_array_equal(book.maintenance_ltv, M)
    assert book.bonus.tolist() == [
        DEFAULT_RULES.rule(a).liquidation_bonus_bps / 10_000 for a in ASSETS
    ]
    looser = book.with_rules(scaled_rules(DEFAULT_RULES, ltv_scale=0.5))
    assert (looser.maintenance_ltv < book.maintenance_ltv).all()
    assert looser.health_factors()[0] < book.health_factors()[0] == pytest.approx(1.85)
    assert book.with_debt(np.array([0.0])).health_factors().tolist() == [np.inf]


@settings(max_examples=80, deadline=None)
@given(
    # Values in smallest units (USDC: 6 decimals), each asset none or at least one dollar:
    # below that, whole-unit rounding is the whole answer.
    values=hnp.arrays(
        np.int64,
        st.tuples(st.integers(1, 5), st.just(3)),
        elements=st.one_of(st.just(0), st.integers(10**6, 10**12)),
    ),
    leverage=st.lists(st.floats(0.0, 1.6), min_size=5, max_size=5),
)
def test_vectorised_liquidations_follow_the_exact_one(
    values: np.ndarray, leverage: list[float]
) -> None:
    debt = np.array([int(v.sum() * k) for v, k in zip(values, leverage, strict=False)])
    repaid, seized, bad = liquidations(values.astype(float), debt.astype(float), ASSETS)
    for n, row in enumerate(values):
        exact = liquidation(dict(zip(ASSETS, map(int, row), strict=True)), int(debt[n]))
        # The exact version works in whole units (values and capacities round down, repayment
        # rounds up until health is back, asset by asset): floats agree to a few units per
        # million, a few dozen smallest units (micro-dollars) at most.
        close: dict[str, Any] = {"rel": 1e-5, "abs": 30}
        assert repaid[n] == pytest.approx(exact.repaid, **close)
        assert bad[n] == pytest.approx(exact.bad_debt, **close)
        for j, asset in enumerate(ASSETS):
            assert seized[n, j] == pytest.approx(exact.seized.get(asset, 0), **close)


def test_stress_reports_what_liquidating_back_to_health_takes() -> None:
    held = np.array([[0.0, 0.0, 0.02], [0.0, 0.0, 0.01]])
    debt = np.array([350.0, 800.0])
    frame = stress(book_of(held, debt), shocks=[-0.6])
    row = frame.filter(shocked="yobtc").row(0, named=True)
    # 0.02 BTC at 24,000 = 480 against 350 (m 0.7, bonus 8 %): R = (350 - 336) / (1 - 0.756).
    first = (350 - 480 * 0.7) / (1 - 0.7 * 1.08)
    # 0.01 BTC = 240 against 800: all of it goes, repaying 240 / 1.08; the rest is bad debt.
    second = 240 / 1.08
    assert row["repayment_needed"] == pytest.approx(first + second)
    assert row["collateral_to_seize"] == pytest.approx(first * 1.08 + 240)
    assert row["bad_debt"] == pytest.approx(800 - second)
    # A USDC shock leaves BTC at 60,000: only the second account (600 against 800) is under 1,
    # and its 0.01 BTC cannot restore it.
    usdc = frame.filter(shocked="usdc").row(0, named=True)
    assert usdc["repayment_needed"] == pytest.approx(600 / 1.08)
    assert usdc["bad_debt"] == pytest.approx(800 - 600 / 1.08)


def test_concentration_against_the_published_caps() -> None:
    from toolkit.models.health import concentration

    frame = concentration({"usdc": 100.0, "gtusdcp": 150.0, "yousd": 150.0, "yobtc": 600.0})
    rows = {(d, g): r for d, g, *r in frame.rows()}
    # The Yo protocol holds yoUSD and yoBTC: 750 of 1,000 against a 40 % cap.
    value, share, cap, headroom, breach = rows[("protocol", "yo")]
    assert (value, share, cap, headroom, breach) == (750.0, 0.75, 0.4, 0.0, True)
    # Morpho's 15 % may grow by x while (150 + x) / (1,000 + x) <= 40 %: x = 250 / 0.6.
    assert rows[("protocol", "morpho")][3] == pytest.approx(250 / 0.6)
    assert rows[("stablecoin", "USDC")][:2] == [400.0, 0.4]
    assert rows[("chain", "base")][1] == 1.0 and rows[("chain", "base")][4] is True
    assert frame.filter(dimension="vault", breach=True)["group"].to_list() == ["yo-btc"]
    with pytest.raises(ArgumentError, match=r"caps\.vault: must be a share in \(0, 1\]"):
        concentration({"usdc": 1.0}, caps={"vault": 1.5})
    with pytest.raises(ArgumentError, match="groups: must be an entry for every asset"):
        concentration({"wbtc": 1.0})
    with pytest.raises(ArgumentError, match=r"values\.usdc: must be finite and non-negative"):
        concentration({"usdc": -1.0})


def test_the_stored_book_is_stressed_from_its_figures() -> None:
    """The collected snapshot of the embedded service's seeded book, stressed uniformly, agrees
    with the health factors /info reported (stored to 4 decimals)."""
    from toolkit.client import ServiceClient
    from toolkit.clock import VirtualClock
    from toolkit.collect import CreditCollector
    from toolkit.models.health import snapshot_stress
    from toolkit.scenario import load_scenario
    from toolkit.store import Store
    from toolkit.world.evm.credit import book_accounts

    with ServiceClient(embedded=True, clock=VirtualClock()) as client, Store(":memory:") as store:
        accounts = book_accounts(load_scenario("default"))[:120]
        CreditCollector(client, store, accounts=accounts, progress=False).run()
        book = store.query("SELECT * FROM credit_accounts")
    frame = snapshot_stress(book, shocks=[0.0, -0.2, -0.5])
    reported = book["health_factor"].cast(pl.Float64).drop_nulls().to_numpy()
    indebted, liquidatable = frame.row(0)[1:3]
    assert indebted == reported.size > 0
    assert liquidatable == int((reported < 1).sum())
    assert frame.row(0)[5] == pytest.approx(reported.min(), abs=1e-4)
    for shock, row in zip([-0.2, -0.5], frame.rows()[1:], strict=True):
        # Stored health factors are rounded to 4 decimals: only accounts that close to the
        # line may fall on the other side of it.
        shocked = reported * (1 + shock)
        borderline = int((np.abs(shocked - 1) < 1e-3).sum())
        assert abs(row[2] - int((shocked < 1).sum())) <= borderline
    counts = frame["liquidatable"].to_list()
    assert counts == sorted(counts) and counts[-1] > counts[0]
    with pytest.raises(ArgumentError, match="accounts: must be the credit_accounts columns"):
        snapshot_stress(book.drop("liquidation_limit"))
