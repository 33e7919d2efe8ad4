"""Human units for frames and figures meant for people; storage keeps exact integers.

Amounts are stored in a token's smallest units (``HUGEINT``); a report shows them in whole
tokens and in USD at the prices the store holds (``prices``: a simulated run's scenario prices,
oracle and pool reads, or a user's table), taken into use for a report with
:func:`toolkit.report.prices.priced`. Without a stored price a figure has no USD value rather
than an invented one. Chains show their registry name, tokens their symbol (the
registry's, else the store's ``tokens`` names read from chains); amounts and times as text in
:mod:`toolkit.report.text`.

>>> from datetime import UTC, datetime
>>> from toolkit.report.prices import priced
>>> at = datetime(2026, 1, 1, tzinfo=UTC)
>>> prices = pl.DataFrame({"chain": [1], "token": ["0x" + "aa" * 20], "symbol": ["WETH"],
...                        "observed_at": [at], "usd": [3000.0]})
>>> with priced(prices):
...     whole_tokens(2_500_000, 8453, "USDC"), usd(10**18, 1, "WETH"), usd(10**6, 1, "USDC")
(2.5, 3000.0, None)
>>> chain_name(8453)
'Base'
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import polars as pl

from toolkit.chain.registry import default_registry
from toolkit.report.prices import price_usd, prices_in_use, stored_token
from toolkit.store import prices_at

__all__ = [
    "chain_name",
    "for_people",
    "symbol_of",
    "token_decimals",
    "usd",
    "usd_column",
    "whole_tokens",
    "with_human_amounts",
]

NATIVE = "0x" + "00" * 20


def chain_name(chain: int | None) -> str:
    """A chain's registry name (``Base``), or its id when the registry does not know it.

    Parameters
    ----------
    chain : int or None
        A chain id.

    Returns
    -------
    str
        The registry's name; the id as text when unknown; '?' for None.

    Examples
    --------
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
    """A token's decimals from the registry, then the store's token names.

    Parameters
    ----------
    chain : int or None
        The chain id.
    symbol : str or None
        The token's symbol.

    Returns
    -------
    int
        Its decimals; 0 when neither knows the token (amounts then stay in smallest units, and
        the axis says so).

    Examples
    --------
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
    known = stored_token(chain, symbol=symbol)
    return known[1] if known is not None else 0


def symbol_of(chain: int, address: str) -> str:
    """A token's symbol from its address on ``chain`` (``ETH`` for the native coin).

    Parameters
    ----------
    chain : int
        The chain id.
    address : str
        The token's address (a symbol is returned as it is).

    Returns
    -------
    str
        The symbol the registry or the store's token names give, else the shortened address.

    Examples
    --------
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
    try:
        return default_registry().token_by_address(chain, address).symbol
    except (LookupError, ValueError):
        pass
    known = stored_token(chain, address=lowered)
    return known[0] if known is not None else f"{address[:6]}…{address[-4:]}"


def whole_tokens(amount: int | None, chain: int | None, symbol: str | None) -> float | None:
    """``amount`` smallest units as whole tokens (a float, for people).

    Parameters
    ----------
    amount : int or None
        The amount in the token's smallest units.
    chain : int or None
        The chain id.
    symbol : str or None
        The token's symbol (its decimals: :func:`token_decimals`).

    Returns
    -------
    float or None
        Whole tokens; None stays None.

    Examples
    --------
    >>> whole_tokens(2_500_000, 8453, "USDC"), whole_tokens(None, 8453, "USDC")
    (2.5, None)
    """
    if amount is None:
        return None
    return int(amount) / 10 ** token_decimals(chain, symbol)


def usd(
    amount: int | None, chain: int | None, symbol: str | None, at: datetime | None = None
) -> float | None:
    """``amount`` smallest units in USD at the stored prices in use (:mod:`~toolkit.report.prices`).

    Parameters
    ----------
    amount : int or None
        The amount in the token's smallest units.
    chain : int or None
        The chain id.
    symbol : str or None
        The token's symbol.
    at : datetime, optional
        The observation's time (default: the latest stored price).

    Returns
    -------
    float or None
        USD; None when the token has no stored price.

    Examples
    --------
    >>> from datetime import UTC
    >>> from toolkit.report.prices import priced
    >>> prices = pl.DataFrame({"chain": [1], "token": ["0x"], "symbol": ["WETH"],
    ...     "observed_at": [datetime(2026, 1, 1, tzinfo=UTC)], "usd": [3000.0]})
    >>> with priced(prices):
    ...     usd(5 * 10**17, 1, "WETH"), usd(10**6, 1, "USDC")
    (1500.0, None)
    """
    tokens = whole_tokens(amount, chain, symbol)
    price = price_usd(symbol, chain, at)
    return None if tokens is None or price is None else tokens * price


def usd_column(
    frame: pl.DataFrame, amount: str, *, chain: str, token: str, at: str | None = None
) -> pl.Series:
    """Column ``amount`` (smallest units) of ``frame`` in USD, each row priced at its time.

    One as-of join (:func:`toolkit.store.prices_at`) against the stored prices in use.

    Parameters
    ----------
    frame : polars.DataFrame
        The rows to price.
    amount : str
        The column of amounts in smallest units.
    chain : str
        The column of each row's chain id.
    token : str
        The column of each row's token symbol.
    at : str, optional
        The column of each row's observation time (default: the latest stored price).

    Returns
    -------
    polars.Series
        ``<amount>_usd``; null where the token has no stored price.

    Examples
    --------
    >>> from datetime import UTC
    >>> from toolkit.report.prices import priced
    >>> t0 = datetime(2026, 1, 1, tzinfo=UTC)
    >>> t1 = datetime(2026, 1, 2, tzinfo=UTC)
    >>> prices = pl.DataFrame({"chain": [1, 1], "token": ["0x", "0x"], "symbol": ["WETH"] * 2,
    ...     "observed_at": [t0, t1], "usd": [3000.0, 2000.0]})
    >>> seen = pl.DataFrame({"c": [1, 1], "t": ["WETH"] * 2, "a": [10**18] * 2, "w": [t0, t1]})
    >>> with priced(prices):
    ...     usd_column(seen, "a", chain="c", token="t", at="w").to_list()
    [3000.0, 2000.0]
    """
    tokens = pl.Series(
        [whole_tokens(v, c, t) for v, c, t in frame.select(amount, chain, token).iter_rows()],
        dtype=pl.Float64,
    )
    times = frame[at] if at is not None else pl.Series([None] * frame.height, dtype=pl.Datetime)
    wanted = pl.DataFrame(
        {"symbol": frame[token].cast(pl.String), "chain": frame[chain], "at": times}
    )
    return (tokens * prices_at(prices_in_use(), wanted)).alias(f"{amount}_usd")


def with_human_amounts(
    frame: pl.DataFrame,
    columns: Sequence[str],
    *,
    chain: str,
    token: str,
    at: str | None = None,
) -> pl.DataFrame:
    """Add ``<column>_tokens`` and ``<column>_usd`` beside each smallest-unit ``column``.

    Parameters
    ----------
    frame : polars.DataFrame
        The rows; its integer columns are kept as they are.
    columns : sequence of str
        The columns of amounts in smallest units.
    chain : str
        The column of each row's chain id.
    token : str
        The column of each row's token symbol.
    at : str, optional
        The column of each row's observation time (each row priced at its time; default: the
        latest stored price).

    Returns
    -------
    polars.DataFrame
        ``frame`` with the two columns added after each amount column.

    Examples
    --------
    >>> from datetime import UTC
    >>> from toolkit.report.prices import priced
    >>> frame = pl.DataFrame({"chain": [1], "token": ["WETH"], "amount": [5 * 10**17]})
    >>> prices = pl.DataFrame({"chain": [1], "token": ["0x"], "symbol": ["WETH"],
    ...     "observed_at": [datetime(2026, 1, 1, tzinfo=UTC)], "usd": [3000.0]})
    >>> with priced(prices):
    ...     with_human_amounts(frame, ["amount"], chain="chain", token="token").row(0)
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
        added.append(usd_column(frame, column, chain=chain, token=token, at=at))
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

    Parameters
    ----------
    frame : polars.DataFrame
        A stored frame (exact amounts, chain ids).
    amounts : sequence of str
        The smallest-unit columns to show in whole tokens.
    token, chain : str
        The columns naming each row's token symbol and its chain.

    Returns
    -------
    polars.DataFrame
        A new frame in human units; the input is unchanged.

    Examples
    --------
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
