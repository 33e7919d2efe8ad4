"""The report's tables for the surfaces beyond RFQ: borrow quotes and authorizations,
calldata-guard findings and swap routes (credit health: :mod:`toolkit.report.credit`).

Each function takes the frames of :class:`toolkit.report.load.ReportData` and returns polars
frames in human units (whole tokens, USD at the default scenario's prices, chain names,
token symbols); the store keeps the exact integers.

>>> import polars as pl
>>> findings_table(pl.DataFrame({"findings": ['[]', '[{"field": "to", "message": "m", '
...     '"severity": "error"}]'], "status": [200, 200], "error": [None, None]})).rows()
[('to', 'error', 1, 'm')]
"""

from __future__ import annotations

import json

import polars as pl

from toolkit.models.bps import answer_counts, share_404, shortfall_bps
from toolkit.models.intervals import wilson_exprs
from toolkit.models.routes import impact_against_best
from toolkit.report.units import chain_name, symbol_of, usd_column, whole_tokens

__all__ = [
    "authorizations",
    "borrow_points",
    "borrow_table",
    "findings_table",
    "swap_impact_table",
]

#: Swap networks by chain id (the swap API's path names).
_NETWORK_CHAINS = {"mainnet": 1, "base": 8453}


def _at(frame: pl.DataFrame) -> str | None:
    """The observation-time column of a stored frame (each row priced at its time)."""
    return "observed_at" if "observed_at" in frame.columns else None


def borrow_table(borrow: pl.DataFrame) -> pl.DataFrame:
    """One row per borrow route (source, destination, token).

    Parameters
    ----------
    borrow : polars.DataFrame
        The store's ``borrow_quotes`` (src_chain, dst_chain, token address, amount in smallest
        units, status, fee_bps; observed_at prices each row at its time).

    Returns
    -------
    polars.DataFrame
        ``route`` and its keys, attempts by status, the 404 share with its Wilson 95 %
        interval, the median fee (bps) and the median amount asked in whole tokens and USD.

    Examples
    --------
    >>> usdc = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
    >>> borrow = pl.DataFrame({"src_chain": [1, 1], "dst_chain": [8453, 8453],
    ...     "token": [usdc] * 2, "amount": [10**8, 10**8], "status": [200, 404],
    ...     "fee_bps": [12.0, None]})
    >>> table = borrow_table(borrow)
    >>> table.select("route", "attempts", "ok", "blocked", "amount_median_tokens").row(0)
    ('Ethereum→Base USDC', 2, 1, 1, 100.0)
    """
    frame = _borrow_symbols(borrow)
    rows = frame.select("amount", "dst_chain", "token").rows()
    frame = frame.with_columns(
        usd_column(frame, "amount", chain="dst_chain", token="token", at=_at(frame)),
        pl.Series("amount_tokens", [whole_tokens(a, d, t) for a, d, t in rows], dtype=pl.Float64),
    )
    table = (
        frame.group_by("src_chain", "dst_chain", "token")
        .agg(
            *answer_counts(),
            pl.col("fee_bps").median().alias("fee_median_bps"),
            pl.col("amount_tokens").median().alias("amount_median_tokens"),
            pl.col("amount_usd").median().alias("amount_median_usd"),
        )
        .with_columns(
            (pl.col("attempts") - pl.col("ok") - pl.col("blocked")).alias("other"),
            share_404(),
            (pl.col("ok") + pl.col("blocked")).alias("answered"),
        )
        .with_columns(wilson_exprs("blocked", "answered", "share_404_"))
        .sort("src_chain", "dst_chain", "token")
    )
    routes = [
        f"{chain_name(s)}→{chain_name(d)} {t}"
        for s, d, t in table.select("src_chain", "dst_chain", "token").iter_rows()
    ]
    table = table.with_columns(pl.Series("route", routes, dtype=pl.String))
    return table.select(
        "route",
        "src_chain",
        "dst_chain",
        "token",
        "attempts",
        "ok",
        "blocked",
        "other",
        "share_404",
        "share_404_ci95_low",
        "share_404_ci95_high",
        "fee_median_bps",
        "amount_median_tokens",
        "amount_median_usd",
    )


def _borrow_symbols(borrow: pl.DataFrame) -> pl.DataFrame:
    """The borrow sweep stores the destination token's address: show its symbol."""
    symbols = [
        "?" if t is None or d is None else symbol_of(d, t)
        for d, t in borrow.select("dst_chain", "token").iter_rows()
    ]
    return borrow.with_columns(pl.Series("token", symbols, dtype=pl.String))


def borrow_points(borrow: pl.DataFrame) -> pl.DataFrame:
    """The priced borrow answers, one point each.

    Parameters
    ----------
    borrow : polars.DataFrame
        The store's ``borrow_quotes``.

    Returns
    -------
    polars.DataFrame
        ``pair`` (the chains), ``destination``, ``token`` (its symbol), ``amount_usd`` (null
        without a stored price) and ``fee_bps`` of each 200 answer with a fee.

    Examples
    --------
    >>> usdc = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
    >>> borrow = pl.DataFrame({"src_chain": [1, 1], "dst_chain": [8453, 8453],
    ...     "token": [usdc] * 2, "amount": [10**8, 10**8], "status": [200, 404],
    ...     "fee_bps": [12.0, None]})
    >>> borrow_points(borrow).rows()
    [('Ethereum→Base', 'Base', 'USDC', None, 12.0)]
    """
    ok = _borrow_symbols(borrow).filter((pl.col("status") == 200) & pl.col("fee_bps").is_not_null())
    ok = ok.with_columns(usd_column(ok, "amount", chain="dst_chain", token="token", at=_at(ok)))
    rows = [
        (f"{chain_name(s)}→{chain_name(d)}", chain_name(d), t, a, f)
        for s, d, t, a, f in ok.select(
            "src_chain", "dst_chain", "token", "amount_usd", "fee_bps"
        ).iter_rows()
    ]
    return pl.DataFrame(
        rows,
        schema={
            "pair": pl.String,
            "destination": pl.String,
            "token": pl.String,
            "amount_usd": pl.Float64,
            "fee_bps": pl.Float64,
        },
        orient="row",
    )


def authorizations(events: pl.DataFrame) -> int:
    """Loans authorized against borrow quotes, as the liquidity event stream reported them.

    Parameters
    ----------
    events : polars.DataFrame
        The store's ``liquidity_events`` (its ``reason`` column).

    Returns
    -------
    int
        The events whose reason is ``loan_authorized``; 0 without events.

    Examples
    --------
    >>> authorizations(pl.DataFrame({"reason": ["loan_authorized", None, "loan_authorized"]}))
    2
    """
    if events.height == 0 or "reason" not in events.columns:
        return 0
    return int((events["reason"] == "loan_authorized").sum())


def findings_table(transactions: pl.DataFrame) -> pl.DataFrame:
    """Calldata-guard findings counted by rule (the field at fault) and severity.

    Parameters
    ----------
    transactions : polars.DataFrame
        The store's ``transactions`` (``findings``: each a JSON list; ``[]`` adds no row).

    Returns
    -------
    polars.DataFrame
        ``rule``, ``severity``, ``count`` and one ``example`` message, most frequent first.

    Examples
    --------
    >>> findings_table(pl.DataFrame({"findings": ['[]', '[{"field": "to", "message": "m", '
    ...     '"severity": "error"}]']})).rows()
    [('to', 'error', 1, 'm')]
    """
    rows: dict[tuple[str, str], list[object]] = {}
    for text in transactions["findings"].to_list():
        for finding in json.loads(text) if text else []:
            key = (str(finding.get("field", "?")), str(finding.get("severity", "error")))
            entry = rows.setdefault(key, [0, str(finding.get("message", ""))])
            entry[0] = int(str(entry[0])) + 1
    return pl.DataFrame(
        [(field, severity, n, message) for (field, severity), (n, message) in rows.items()],
        schema={"rule": pl.String, "severity": pl.String, "count": pl.Int64, "example": pl.String},
        orient="row",
    ).sort(["count", "rule"], descending=[True, False])


def swap_impact_table(swaps: pl.DataFrame) -> pl.DataFrame:
    """Each answered swap route in human units, with its price impact.

    Parameters
    ----------
    swaps : polars.DataFrame
        The store's ``swap_routes`` (network, token_in, token_out, amount_in, amount_out,
        status; observed_at prices each row at its time).

    Returns
    -------
    polars.DataFrame
        ``chain`` (its name), ``network`` (the swap API's), ``pair, token_in, token_out,
        amount_in_tokens, size_usd, amount_out_tokens, rate, impact_bps, cost_bps``. ``rate``
        is output per input in whole tokens; ``impact_bps`` how much worse it is than the best
        rate of the same pair and network (its smallest size, in practice: the cost of size,
        :func:`toolkit.models.routes.impact_against_best`); ``cost_bps`` the all-in loss
        against the stored USD prices, pool fee included (:func:`toolkit.models.bps.shortfall_bps`).

    Examples
    --------
    >>> usdc = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
    >>> weth = "0x4200000000000000000000000000000000000006"
    >>> swaps = pl.DataFrame({"network": ["base"] * 2, "token_in": [usdc] * 2,
    ...     "token_out": [weth] * 2, "amount_in": [10**8, 10**10],
    ...     "amount_out": [25 * 10**15, 24 * 10**17], "status": [200, 200]})
    >>> impact = swap_impact_table(swaps)
    >>> impact["pair"][0], impact["amount_in_tokens"].to_list()
    ('USDC→WETH', [100.0, 10000.0])
    >>> impact["impact_bps"].round(1).to_list()
    [0.0, 400.0]
    """
    answered = _priced_swaps(swaps)
    rows = []
    for network, chain, sym_in, sym_out, amount_in, amount_out, usd_in, usd_out in answered.select(
        "network", "_chain", "_in", "_out", "amount_in", "amount_out", "amount_in_usd",
        "amount_out_usd",
    ).iter_rows():  # fmt: skip
        size_in = whole_tokens(amount_in, chain, sym_in)
        size_out = whole_tokens(amount_out, chain, sym_out)
        rate = size_out / size_in if size_in and size_out is not None else None
        cost = shortfall_bps(usd_out, usd_in) if usd_in and usd_out is not None else None
        rows.append(
            (
                chain_name(chain) if chain else str(network),
                network,
                f"{sym_in}→{sym_out}",
                sym_in,
                sym_out,
                size_in,
                usd_in,
                size_out,
                rate,
                cost,
            )
        )
    frame = pl.DataFrame(
        rows,
        schema={
            "chain": pl.String,
            "network": pl.String,
            "pair": pl.String,
            "token_in": pl.String,
            "token_out": pl.String,
            "amount_in_tokens": pl.Float64,
            "size_usd": pl.Float64,
            "amount_out_tokens": pl.Float64,
            "rate": pl.Float64,
            "cost_bps": pl.Float64,
        },
        orient="row",
    )
    return (
        impact_against_best(frame)
        .select(
            "chain",
            "network",
            "pair",
            "token_in",
            "token_out",
            "amount_in_tokens",
            "size_usd",
            "amount_out_tokens",
            "rate",
            "impact_bps",
            "cost_bps",
        )
        .sort("chain", "pair", "amount_in_tokens")
    )


def _priced_swaps(swaps: pl.DataFrame) -> pl.DataFrame:
    """The answered routes of ``swaps`` with their chain id (``_chain``), token symbols
    (``_in``, ``_out``) and both amounts in USD at the stored prices."""
    answered = swaps.filter((pl.col("status") == 200) & pl.col("amount_out").is_not_null())
    chains = [_NETWORK_CHAINS.get(str(n), 0) for n in answered["network"].to_list()]
    symbols = {
        name: [symbol_of(c, t) for c, t in zip(chains, answered[column], strict=True)]
        for name, column in (("_in", "token_in"), ("_out", "token_out"))
    }
    answered = answered.with_columns(
        pl.Series("_chain", chains, dtype=pl.Int64),
        *(pl.Series(name, values, dtype=pl.String) for name, values in symbols.items()),
    )
    at = _at(answered)
    answered = answered.with_columns(
        usd_column(answered, "amount_in", chain="_chain", token="_in", at=at),
        usd_column(answered, "amount_out", chain="_chain", token="_out", at=at),
    )
    return answered
