"""The stored prices and token names a report uses, set once for a block with :func:`priced`.

Every USD figure of :mod:`toolkit.report.units` reads the prices in use here (a simulated run's
scenario prices, oracle and pool reads, or a user's table; :func:`toolkit.store.price_at`, the
one lookup); tokens the registry does not know are named from the store's ``tokens`` table.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import datetime

import polars as pl

from toolkit.store import price_at

__all__ = ["price_usd", "priced"]

_EMPTY = pl.DataFrame()
#: The stored prices and token names in use (:func:`priced`): a report reads them once.
_PRICES: ContextVar[pl.DataFrame] = ContextVar("prices", default=_EMPTY)
_TOKENS: ContextVar[pl.DataFrame] = ContextVar("tokens", default=_EMPTY)


@contextlib.contextmanager
def priced(prices: pl.DataFrame, tokens: pl.DataFrame | None = None) -> Iterator[None]:
    """Use ``prices`` and ``tokens`` for every figure and table inside the block.

    Parameters
    ----------
    prices : polars.DataFrame
        The stored prices (:func:`toolkit.store.price_table`: chain, token, symbol,
        observed_at, usd).
    tokens : polars.DataFrame, optional
        The store's token names (chain, address, symbol, decimals); none by default.

    Returns
    -------
    contextlib.AbstractContextManager
        A context manager: inside it :func:`price_usd`, :func:`usd` and :func:`symbol_of` read
        these; on leaving, the ones in use before are back.

    Examples
    --------
    >>> from datetime import UTC
    >>> prices = pl.DataFrame({"chain": [1], "token": ["0x"], "symbol": ["WETH"],
    ...     "observed_at": [datetime(2026, 1, 1, tzinfo=UTC)], "usd": [3000.0]})
    >>> with priced(prices):
    ...     price_usd("WETH")
    3000.0
    >>> price_usd("WETH") is None
    True
    """
    marks = _PRICES.set(prices), _TOKENS.set(_EMPTY if tokens is None else tokens)
    try:
        yield
    finally:
        _PRICES.reset(marks[0])
        _TOKENS.reset(marks[1])


def stored_token(
    chain: int, *, symbol: str | None = None, address: str | None = None
) -> tuple[str, int] | None:
    """(symbol, decimals) of a token in the store's ``tokens`` names, by symbol or address."""
    tokens = _TOKENS.get()
    if tokens.is_empty():
        return None
    rows = tokens.filter(pl.col("chain") == chain)
    if symbol is not None:
        rows = rows.filter(pl.col("symbol").str.to_uppercase() == symbol.upper())
    if address is not None:
        rows = rows.filter(pl.col("address") == address.lower())
    return (str(rows["symbol"][0]), int(rows["decimals"][0])) if rows.height else None


def price_usd(
    symbol: str | None, chain: int | None = None, at: datetime | None = None
) -> float | None:
    """USD per whole token from the stored prices in use (:func:`priced`).

    ``ETH`` is priced as ``WETH``.

    Parameters
    ----------
    symbol : str or None
        The token's symbol.
    chain : int, optional
        The chain id (default: any chain's price of the symbol).
    at : datetime, optional
        The time to price at (default: the latest stored price).

    Returns
    -------
    float or None
        USD per whole token; None when no price is stored for it.

    Examples
    --------
    >>> price_usd("USDC"), price_usd(None)
    (None, None)
    """
    return price_at(_PRICES.get(), symbol, chain, at)


def prices_in_use() -> pl.DataFrame:
    """The stored prices :func:`priced` set (empty outside a block), for row-wise pricing."""
    return _PRICES.get()
