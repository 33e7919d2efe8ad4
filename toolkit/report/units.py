"""Human units for frames and figures meant for people; storage keeps exact integers.

Amounts are stored in a token's smallest units (``HUGEINT``); a report shows them in whole
tokens and in USD at the default scenario's prices (``[pricing] prices_usd``, then the simulated
AMM markets' prices for tokens the scenario does not price). Chains show their registry name,
tokens their symbol, timestamps a UTC date.

>>> whole_tokens(2_500_000, 8453, "USDC"), usd(10**18, 1, "WETH")
(2.5, 3000.0)
>>> chain_name(8453), format_usd(1_234_567.8), format_usd(0.42)
('Base', '$1.23M', '$0.42')
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache

import polars as pl

from toolkit.chain.registry import default_registry

__all__ = [
    "chain_name",
    "for_people",
    "format_usd",
    "price_usd",
    "symbol_of",
    "token_decimals",
    "usd",
    "utc_date",
    "whole_tokens",
    "with_human_amounts",
]

NATIVE = "0x" + "00" * 20


def chain_name(chain: int | None) -> str:
    """A chain's registry name (``Base``), or its id when the registry does not know it.

    >>> chain_name(1), chain_name(999_999), chain_name(None)
    ('Ethereum', '999999', '?')
    """
    if chain is None:
        return "?"
    try:
        return default_registry().chain(chain).name
    except LookupError:
        return str(chain)


def token_decimals(chain: int | None, symbol: str | None) -> int:
    """A token's decimals from the registry, then the AMM markets (0 when neither knows the
    token: amounts then stay in smallest units, and the axis says so).

    >>> token_decimals(8453, "USDC"), token_decimals(1, "WBTC"), token_decimals(None, "XYZ")
    (6, 8, 0)
    """
    if chain is None or symbol is None:
        return 0
    if symbol.upper() == "ETH":
        return 18
    try:
        return default_registry().token(chain, symbol).decimals
    except LookupError:
        pass
    known = _market_tokens().get((chain, symbol.upper()))
    return known[1] if known is not None else 0


@cache
def _market_tokens() -> dict[tuple[int, str], tuple[str, int, Decimal, str]]:
    """``(chain, SYMBOL) -> (address, decimals, price, symbol)`` of the simulated AMM
    markets."""
    from toolkit.scenario import load_scenario
    from toolkit.world.chain.markets import MARKET_CHAINS, market_for

    scenario = load_scenario("default", env={})
    found: dict[tuple[int, str], tuple[str, int, Decimal, str]] = {}
    for chain in MARKET_CHAINS:
        market = market_for(scenario, chain)
        if market is None:
            continue
        for symbol, token in market.tokens.items():
            found[(chain, symbol.upper())] = (
                token.address.lower(),
                token.decimals,
                token.price_usd,
                symbol,
            )
    return found


@cache
def _scenario_prices() -> dict[str, Decimal]:
    from toolkit.scenario import load_scenario

    pricing = load_scenario("default", env={}).pricing
    return {symbol.upper(): price for symbol, price in pricing.prices_usd}


def price_usd(symbol: str | None, chain: int | None = None) -> float | None:
    """USD per whole token: the default scenario's price, else the AMM market's, else None.

    ``ETH`` is priced as ``WETH``.

    >>> price_usd("USDC"), price_usd("ETH"), price_usd("WBTC", 1) is not None, price_usd("XYZ")
    (1.0, 3000.0, True, None)
    """
    if symbol is None:
        return None
    key = "WETH" if symbol.upper() == "ETH" else symbol.upper()
    price = _scenario_prices().get(key)
    if price is None:
        for (market_chain, market_symbol), (_, _, market_price, _) in _market_tokens().items():
            if market_symbol == key and (chain is None or chain == market_chain):
                price = market_price
                break
    return None if price is None else float(price)


def symbol_of(chain: int, address: str) -> str:
    """A token's symbol from its address on ``chain`` (``ETH`` for the native coin), or the
    shortened address when no market lists it.

    >>> symbol_of(1, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"), symbol_of(1, NATIVE)
    ('USDC', 'ETH')
    >>> symbol_of(10, "0x4200000000000000000000000000000000000006"), symbol_of(1, "USDC")
    ('WETH', 'USDC')
    """
    if not address.startswith("0x"):
        return address  # already a symbol
    lowered = address.lower()
    if lowered == NATIVE:
        return "ETH"
    for (market_chain, _), (market_address, _, _, symbol) in _market_tokens().items():
        if market_chain == chain and market_address == lowered:
            return symbol
    try:
        return default_registry().token_by_address(chain, address).symbol
    except (LookupError, ValueError):
        return f"{address[:6]}…{address[-4:]}"


def whole_tokens(amount: int | None, chain: int | None, symbol: str | None) -> float | None:
    """``amount`` smallest units as whole tokens (a float, for people; None stays None)."""
    if amount is None:
        return None
    return int(amount) / 10 ** token_decimals(chain, symbol)


def usd(amount: int | None, chain: int | None, symbol: str | None) -> float | None:
    """``amount`` smallest units in USD, or None when the token has no price."""
    tokens = whole_tokens(amount, chain, symbol)
    price = price_usd(symbol, chain)
    return None if tokens is None or price is None else tokens * price


def with_human_amounts(
    frame: pl.DataFrame, columns: Sequence[str], *, chain: str, token: str
) -> pl.DataFrame:
    """Add ``<column>_tokens`` and ``<column>_usd`` beside each smallest-unit ``column``.

    ``chain`` and ``token`` name the columns holding each row's chain id and symbol; the
    original integer columns are kept as they are.

    >>> frame = pl.DataFrame({"chain": [1], "token": ["WETH"], "amount": [5 * 10**17]})
    >>> with_human_amounts(frame, ["amount"], chain="chain", token="token").row(0)
    (1, 'WETH', 500000000000000000, 0.5, 1500.0)
    """
    keys = frame.select(chain, token).rows()
    added = []
    for column in columns:
        values = frame[column].to_list()
        added.append(
            pl.Series(
                f"{column}_tokens",
                [whole_tokens(v, c, t) for v, (c, t) in zip(values, keys, strict=True)],
                dtype=pl.Float64,
            )
        )
        added.append(
            pl.Series(
                f"{column}_usd",
                [usd(v, c, t) for v, (c, t) in zip(values, keys, strict=True)],
                dtype=pl.Float64,
            )
        )
    return frame.with_columns(added)


#: Columns holding chain ids, shown as chain names by :func:`for_people`.
CHAIN_COLUMNS = ("src_chain", "dst_chain", "chain", "chain_id")


def for_people(
    frame: pl.DataFrame,
    amounts: Sequence[str] = (),
    *,
    token: str = "token",
    chain: str = "dst_chain",
) -> pl.DataFrame:
    """``frame`` as a person reads it: chain-id columns (:data:`CHAIN_COLUMNS`) as chain names,
    and each smallest-unit column of ``amounts`` as whole tokens (the ``token`` column's symbol
    on the ``chain`` column's chain). Storage keeps the integers; this is for display.

    >>> frame = pl.DataFrame({"src_chain": [1], "dst_chain": [8453], "token": ["USDC"],
    ...                       "amount": [2_500_000]})
    >>> for_people(frame, ["amount"]).row(0)
    ('Ethereum', 'Base', 'USDC', 2.5)
    """
    keys = frame.select(chain, token).rows() if amounts else []
    converted = [
        pl.Series(
            column,
            [
                whole_tokens(v, c, t)
                for v, (c, t) in zip(frame[column].to_list(), keys, strict=True)
            ],
            dtype=pl.Float64,
        )
        for column in amounts
    ]
    names = [
        pl.Series(column, [chain_name(c) for c in frame[column].to_list()], dtype=pl.String)
        for column in CHAIN_COLUMNS
        if column in frame.columns
    ]
    return frame.with_columns(converted).with_columns(names)


def format_usd(value: float | None) -> str:
    """``$1.23M``, ``$45.6k``, ``$100``, ``$0.42``, ``-$10M``; empty for None.

    >>> format_usd(-1e7), format_usd(100.0), format_usd(None)
    ('-$10M', '$100', '')
    """
    if value is None:
        return ""
    sign, size = ("-" if value < 0 else ""), abs(value)
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if size >= limit:
            return f"{sign}${size / limit:.3g}{suffix}"
    return f"{sign}${size:.0f}" if size == int(size) else f"{sign}${size:.2f}"


def utc_date(value: datetime | None) -> str:
    """``2025-03-01 12:00 UTC``; empty for None.

    >>> utc_date(datetime(2025, 3, 1, 12, 0, tzinfo=UTC))
    '2025-03-01 12:00 UTC'
    """
    if value is None:
        return ""
    return f"{value.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
