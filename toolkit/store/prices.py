"""USD prices and token names kept in the store, and the one price lookup.

``prices`` holds one row per (source, chain, token, time): ``scenario`` (a simulated run's
scenario prices, stored when the run starts), ``oracle`` (a credit hub's oracle read on chain),
``pool`` (a pool's mid price against a priced token) or ``user`` (:func:`load_prices`, a user's
own table). :func:`price_at` is the one lookup every USD figure uses: the latest price at or
before the observation's time, else the earliest after it (a run that started before its first
price read), preferring the chain asked and falling back to the same symbol on any chain.

``tokens`` caches what a token is called and how many decimals it has, per chain and address
(from the registry, a scenario or the token contract).

>>> from datetime import UTC, datetime
>>> from toolkit.store import Store
>>> store = Store(":memory:")
>>> at = datetime(2026, 1, 1, tzinfo=UTC)
>>> load_prices(store, [{"chain": 1, "token": "0x" + "aa" * 20, "symbol": "WETH",
...                      "observed_at": at, "usd": 2500}])
1
>>> table = price_table(store)
>>> price_at(table, "WETH", 1, at), price_at(table, "weth", 8453, None), price_at(table, "X", 1, at)
(2500.0, 2500.0, None)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import polars as pl

from toolkit.store.errors import StoreError
from toolkit.store.schema import polars_schema
from toolkit.store.store import Store

__all__ = ["latest_prices", "load_prices", "price_at", "price_table", "store_tokens"]


def load_prices(store: Store, rows: Iterable[Mapping[str, Any]], *, source: str = "user") -> int:
    """Append price rows (``chain``, ``token``, ``symbol``, ``observed_at``, ``usd``) under
    ``source``; rows already stored are skipped. Returns the rows inserted."""
    clean = []
    for row in rows:
        usd = Decimal(str(row["usd"]))
        if not usd.is_finite() or usd < 0:
            raise StoreError(f"usd: must be a finite price >= 0, got {row['usd']!r}")
        clean.append(
            {
                "source": source,
                "chain": int(row["chain"]),
                "token": str(row["token"]).lower(),
                "symbol": row.get("symbol"),
                "observed_at": row["observed_at"],
                "usd": usd,
            }
        )
    if not clean:
        return 0
    return store.append("prices", pl.DataFrame(clean, schema=polars_schema("prices")))


def store_tokens(store: Store, rows: Iterable[Mapping[str, Any]], *, source: str) -> int:
    """Cache token names (``chain``, ``address``, ``symbol``, ``decimals``) from ``source``."""
    clean = [
        {
            "chain": int(r["chain"]),
            "address": str(r["address"]).lower(),
            "symbol": str(r["symbol"]),
            "decimals": int(r["decimals"]),
            "source": source,
        }
        for r in rows
    ]
    return (
        store.append("tokens", pl.DataFrame(clean, schema=polars_schema("tokens"))) if clean else 0
    )


def price_table(store: Store) -> pl.DataFrame:
    """Every stored price: chain, token, SYMBOL (upper case), observed_at, usd (float)."""
    return store.query(
        "SELECT chain, token, upper(symbol) AS symbol, observed_at, usd::DOUBLE AS usd, source "
        "FROM prices ORDER BY observed_at"
    )


def latest_prices(store: Store) -> dict[str, Decimal]:
    """SYMBOL → the latest stored USD price (any chain, any source)."""
    frame = store.query(
        "SELECT upper(symbol) AS symbol, arg_max(usd, observed_at) AS usd FROM prices "
        "WHERE symbol IS NOT NULL GROUP BY 1"
    )
    return {str(s): Decimal(str(u)) for s, u in frame.select("symbol", "usd").rows()}


def price_at(
    table: pl.DataFrame, symbol: str | None, chain: int | None, at: datetime | None
) -> float | None:
    """USD per whole ``symbol`` at ``at`` (None: the latest) from :func:`price_table`'s frame;
    ``ETH`` is priced as ``WETH``. None when no price of the symbol is stored."""
    if symbol is None or table.is_empty():
        return None
    key = "WETH" if symbol.upper() == "ETH" else symbol.upper()
    rows = table.filter(pl.col("symbol") == key)
    if chain is not None and (on_chain := rows.filter(pl.col("chain") == chain)).height:
        rows = on_chain
    if rows.is_empty():
        return None
    if at is None:
        return float(rows["usd"][-1])
    stamp = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    before = rows.filter(pl.col("observed_at") <= stamp)
    chosen = before["usd"][-1] if before.height else rows["usd"][0]
    return float(chosen)
