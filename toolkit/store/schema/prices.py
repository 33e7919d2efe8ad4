"""Table contracts: USD prices by source, chain, token and time, and token names and decimals."""

from __future__ import annotations

from toolkit.store.schema.columns import (
    _BIG,
    _I,
    _TS,
    _V,
    PRICE_SOURCES,
    TableSpec,
    _c,
)

SPECS: tuple[TableSpec, ...] = (
    TableSpec(
        "prices",
        (
            _c("source", _V, required=True, choices=PRICE_SOURCES),
            _c("chain", _BIG, required=True),
            _c("token", _V, required=True),
            _c("symbol", _V),
            _c("observed_at", _TS, required=True),
            _c("usd", "DECIMAL(38,18)", required=True),
        ),
        ("source", "chain", "token", "observed_at"),
    ),
    TableSpec(
        "tokens",
        (
            _c("chain", _BIG, required=True),
            _c("address", _V, required=True),
            _c("symbol", _V, required=True),
            _c("decimals", _I, required=True),
            _c("source", _V, required=True),
        ),
        ("chain", "address"),
    ),
)
