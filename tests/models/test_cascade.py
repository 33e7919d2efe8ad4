"""Liquidation cascades through a wei-exact V3 pool: the feedback the static view misses."""

from __future__ import annotations

import numpy as np
import pytest

from toolkit.arguments import ArgumentError
from toolkit.backtest.credit import generate_book
from toolkit.models.cascade import PoolMarket, liquidation_cascade
from toolkit.models.health import CreditBook


def test_a_pool_market_quotes_moves_and_pays_less_than_the_price() -> None:
    market = PoolMarket.around(60_000.0, depth=1_000_000.0)
    assert market.price() == pytest.approx(60_000.0, rel=1e-9)
    market.move_to(54_000.0)
    assert market.price() == pytest.approx(54_000.0, rel=1e-6)
    before = market.price()
    proceeds = market.sell(2.0)
    assert proceeds < 2.0 * before  # slippage and the 0.3 % fee
    assert market.price() < before  # the sale moved the price down
    assert market.sell(0.0) == 0.0


def book_at_capacity() -> CreditBook:
    book = generate_book(2_000, seed=4)
    assert book.prices.tolist() == [1.0, 1.0, 1.0, 1.0, 60_000.0]
    capacity = book.values() @ np.array([0.9, 0.75, 0.7, 0.7, 0.55])
    return book.with_debt(capacity * 0.97)  # most accounts drawn close to their limit


def test_the_feedback_adds_rounds_liquidations_and_lower_prices() -> None:
    book = book_at_capacity()
    shock = {"yobtc": -0.3}
    static = liquidation_cascade(book, shock=shock)
    market = PoolMarket.around(60_000.0, depth=300_000.0)
    fed = liquidation_cascade(book, shock=shock, markets={"yobtc": market})
    assert static.height == 2  # the shock, then one round at fixed prices
    assert fed.height > static.height
    assert fed["liquidated"].sum() > static["liquidated"].sum()
    assert fed["price_yobtc"].is_sorted(descending=True)  # every sale pushes the price down
    assert fed["price_yobtc"][-1] < static["price_yobtc"][-1] == pytest.approx(42_000.0)
    assert fed["bad_debt"].sum() >= static["bad_debt"].sum()


def test_a_deep_pool_barely_feeds_back() -> None:
    deep = PoolMarket.around(60_000.0, depth=10**10)
    fed = liquidation_cascade(book_at_capacity(), shock={"yobtc": -0.3}, markets={"yobtc": deep})
    assert fed["price_yobtc"][-1] == pytest.approx(42_000.0, rel=1e-3)


def test_bad_input_names_the_field() -> None:
    book = book_at_capacity()
    with pytest.raises(ArgumentError, match="markets/shock: must be keyed by the assets"):
        liquidation_cascade(book, shock={"doge": -0.1})
    with pytest.raises(ArgumentError, match=r"shock\['yobtc'\]: must be"):
        liquidation_cascade(book, shock={"yobtc": -1.0})
    with pytest.raises(ArgumentError, match="depth: must be a finite number > 0"):
        PoolMarket.around(1.0, depth=0)
