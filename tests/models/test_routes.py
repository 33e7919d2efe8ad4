"""Route comparisons: a split never loses to the best single pool, and wins on size."""

from __future__ import annotations

import pytest

from toolkit.amm.routing import Venue
from toolkit.amm.v2 import Pair
from toolkit.arguments import ArgumentError
from toolkit.models import route_comparison


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
