"""The one price lookup: an as-of join at each observation's time (``prices_at``), checked
against DuckDB's own ``ASOF JOIN`` as the outside reference."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import duckdb
import polars as pl

from toolkit.store import Store, load_prices, price_at, price_table, prices_at

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TOKEN = "0x" + "aa" * 20


def _row(symbol: str, chain: int, hours: float, usd: float) -> dict[str, object]:
    at = T0 + timedelta(hours=hours)
    return {"chain": chain, "token": TOKEN, "symbol": symbol, "observed_at": at, "usd": usd}


def test_each_observation_is_priced_at_its_own_time() -> None:
    with Store(":memory:") as store:
        load_prices(store, [_row("WETH", 1, 0, 3000), _row("WETH", 1, 10, 2000)])
        table = price_table(store)
    seen = pl.DataFrame(
        {
            "symbol": ["WETH", "WETH", "eth", "WETH", "WETH"],
            "chain": [1, 1, 1, 8453, 1],
            "at": [T0 + timedelta(hours=h) for h in (-1, 5, 11, 11, 10)],
        }
    )
    # Before the first price: the earliest; between: the one before; other chain: any chain's.
    assert prices_at(table, seen).to_list() == [3000.0, 3000.0, 2000.0, 2000.0, 2000.0]
    assert price_at(table, "WETH", 1, None) == 2000.0  # no time: the latest


def test_a_users_price_stands_over_the_scenario_and_the_chain_asked_over_others() -> None:
    with Store(":memory:") as store:
        load_prices(store, [_row("WETH", 1, 0, 3000)], source="scenario")
        load_prices(store, [_row("WETH", 1, 0, 2500)], source="user")
        load_prices(store, [_row("WETH", 8453, 0, 2600)], source="oracle")
        table = price_table(store)
    assert price_at(table, "WETH", 1, T0) == 2500.0
    assert price_at(table, "WETH", 8453, T0) == 2600.0


def test_the_join_agrees_with_duckdbs_asof_join() -> None:
    rng = random.Random(7)
    symbols, chains = ["WETH", "USDC"], [1, 8453]
    rows = [
        _row(rng.choice(symbols), rng.choice(chains), rng.uniform(0, 100), rng.uniform(1, 4000))
        for _ in range(300)
    ]
    with Store(":memory:") as store:
        load_prices(store, rows)
        table = price_table(store)
    seen = pl.DataFrame(
        {
            "symbol": [rng.choice(["WETH", "USDC"]) for _ in range(500)],
            "chain": [rng.choice([1, 8453]) for _ in range(500)],
            "at": [T0 + timedelta(hours=rng.uniform(1, 120)) for _ in range(500)],
        }
    )
    ours = prices_at(table, seen)
    con = duckdb.connect()
    con.register("prices", table.select("symbol", "chain", "observed_at", "usd"))
    con.register("seen", seen)
    reference = con.sql(
        "SELECT s.i, p.usd FROM (SELECT row_number() OVER () - 1 AS i, * FROM seen) s "
        "ASOF LEFT JOIN prices p ON s.symbol = p.symbol AND s.chain = p.chain "
        "AND s.at >= p.observed_at ORDER BY s.i"
    ).pl()
    known = reference["usd"].is_not_null()
    assert known.sum() > 400
    assert ours.filter(known).to_list() == reference["usd"].filter(known).to_list()
