"""USD prices and token names kept in the store, and the one price lookup.

``prices`` holds one row per (source, chain, token, time): ``scenario`` (a simulated run's
scenario prices, stored when the run starts), ``oracle`` (a credit hub's oracle read on chain),
``pool`` (a pool's mid price against a priced token) or ``user`` (:func:`load_prices`, a user's
own table). :func:`prices_at` is the one lookup every USD figure uses, an as-of join over a
whole frame of observations: the latest price at or before each observation's time, else the
earliest after it (a run that started before its first price read); the chain asked before the
same symbol on any chain, and within those a user's prices before oracle, pool and scenario
prices (:data:`SOURCE_PRIORITY`). :func:`price_at` is the same lookup for one observation.

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
>>> wanted = pl.DataFrame({"symbol": ["ETH", "X"], "chain": [1, 1], "at": [at, at]})
>>> prices_at(table, wanted).to_list()
[2500.0, None]
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

__all__ = [
    "SOURCE_PRIORITY",
    "latest_prices",
    "load_prices",
    "price_at",
    "price_table",
    "prices_at",
    "store_tokens",
]

#: Which source's price stands when several have one: a user's own table first, then what was
#: read on chain (an oracle, then a pool's mid price), then a simulated run's scenario.
SOURCE_PRIORITY = ("user", "oracle", "pool", "scenario")
_UTC = pl.Datetime("us", "UTC")
#: The time of an observation without one: after every stored price (so: the latest).
_LATEST = datetime(9999, 1, 1, tzinfo=UTC)


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


def prices_at(table: pl.DataFrame, wanted: pl.DataFrame) -> pl.Series:
    """USD per whole token for each row of ``wanted`` (columns ``symbol``, ``chain``, ``at``;
    ``chain`` or ``at`` may be null: any chain, the latest price) from :func:`price_table`'s
    frame, as one as-of join per (chain match, source) tier rather than a filter per row.
    ``ETH`` is priced as ``WETH``; null where no price of the symbol is stored."""
    n = wanted.height
    if n == 0 or table.is_empty():
        return pl.Series("usd", [None] * n, dtype=pl.Float64)
    symbol = pl.col("symbol").cast(pl.String).str.to_uppercase()
    rows = wanted.select(
        pl.int_range(n, dtype=pl.UInt32).alias("_row"),
        pl.when(symbol == "ETH").then(pl.lit("WETH")).otherwise(symbol).alias("symbol"),
        pl.col("chain").cast(pl.Int64),
        _as_utc(wanted, "at").fill_null(_LATEST).alias("at"),
    ).sort("at")
    rank = {name: i for i, name in enumerate(SOURCE_PRIORITY)}
    prices = (
        table.select(
            pl.col("symbol").cast(pl.String).str.to_uppercase(),
            pl.col("chain").cast(pl.Int64),
            _as_utc(table, "observed_at").alias("observed_at"),
            pl.col("usd").cast(pl.Float64),
            # A frame without sources (a user's own) is one tier.
            (
                pl.col("source").replace_strict(rank, default=len(rank), return_dtype=pl.Int64)
                if "source" in table.columns
                else pl.lit(0, dtype=pl.Int64)
            ).alias("_rank"),
        )
        .drop_nulls(["symbol", "usd", "observed_at"])
        .sort("observed_at")
    )
    # Coalesced in order: the chain asked before any chain; a price known at the time before
    # the earliest one after it; then by source.
    value = pl.Series("usd", [None] * n, dtype=pl.Float64)
    tiers = sorted(set(prices["_rank"].to_list()))
    for by in (["symbol", "chain"], ["symbol"]):
        for strategy in ("backward", "forward"):
            for tier in tiers:
                part = prices.filter(pl.col("_rank") == tier).select(*by, "observed_at", "usd")
                joined = rows.join_asof(
                    part,
                    left_on="at",
                    right_on="observed_at",
                    by=by,
                    strategy=strategy,
                    check_sortedness=False,  # both sides sorted by time above
                )["usd"]
                value = value.fill_null(joined)
    return rows.select("_row").with_columns(value).sort("_row")["usd"]


def _as_utc(frame: pl.DataFrame, name: str) -> pl.Expr:
    """Column ``name`` of ``frame`` as UTC microseconds (a naive time is taken as UTC)."""
    dtype = frame.schema[name]
    column = pl.col(name)
    if isinstance(dtype, pl.Datetime) and dtype.time_zone is not None:
        return column.dt.convert_time_zone("UTC").cast(_UTC)
    if dtype == pl.Null:
        return column.cast(_UTC)
    return column.cast(pl.Datetime("us")).dt.replace_time_zone("UTC").cast(_UTC)


def price_at(
    table: pl.DataFrame, symbol: str | None, chain: int | None, at: datetime | None
) -> float | None:
    """USD per whole ``symbol`` at ``at`` (None: the latest) from :func:`price_table`'s frame:
    :func:`prices_at` for one observation. None when no price of the symbol is stored."""
    if symbol is None:
        return None
    if at is not None and at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    wanted = pl.DataFrame(
        {"symbol": [symbol], "chain": [chain], "at": [at]},
        schema={"symbol": pl.String, "chain": pl.Int64, "at": _UTC},
    )
    value = prices_at(table, wanted)[0]
    return None if value is None else float(value)
