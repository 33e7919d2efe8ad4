"""The report's credit tables: the credit book as last observed, for people (debt and
collateral in the credit asset's units and in USD, health factors and their bands), per credit
asset, and the collaterals the protocol accepts.

>>> credit_accounts_table(pl.DataFrame({"account": ["0xa"], "asset": ["USDC"],
...     "debt": [0.0], "total_collateral_value": [10.0], "health_factor": [None],
...     "run_id": ["c"], "observed_at": [None]}))["band"].to_list()
['no debt']
"""

from __future__ import annotations

from decimal import Decimal

import polars as pl

from toolkit.report.units import chain_name, usd_column

__all__ = [
    "HF_WATCH",
    "credit_accounts_table",
    "credit_collateral_table",
]

#: Health factors below this (and at least 1) are on the watch list; below 1 is liquidatable.
HF_WATCH = 1.3


def _at(frame: pl.DataFrame) -> str | None:
    """The observation-time column of a stored frame (each row priced at its time)."""
    return "observed_at" if "observed_at" in frame.columns else None


def _float(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


def credit_accounts_table(accounts: pl.DataFrame) -> pl.DataFrame:
    """The credit book in floats for people, one row per account and credit asset as last
    observed.

    Parameters
    ----------
    accounts : polars.DataFrame
        :func:`toolkit.report.load.credit_book`'s frame.

    Returns
    -------
    polars.DataFrame
        ``account``, ``asset``, debt and collateral value in that credit asset's units,
        ``debt_usd`` / ``collateral_value_usd`` at the asset's price when one is known (else
        empty), the health factor (null: no debt) and its band (``< 1``, ``1 to 1.3``,
        ``≥ 1.3``, ``no debt``), and the ``run_id`` and ``observed_at`` it came from.

    Examples
    --------
    >>> from datetime import UTC, datetime
    >>> accounts = pl.DataFrame({"account": ["0xa", "0xb"], "asset": ["USDC"] * 2,
    ...     "debt": [900.0, 0.0], "total_collateral_value": [1000.0, 50.0],
    ...     "health_factor": [1.1, None], "run_id": ["c"] * 2,
    ...     "observed_at": [datetime(2026, 1, 1, tzinfo=UTC)] * 2})
    >>> credit_accounts_table(accounts).select("account", "health_factor", "band").rows()
    [('0xa', 1.1, '1 to 1.3'), ('0xb', None, 'no debt')]
    """
    hf = [_float(v) for v in accounts["health_factor"].to_list()]
    bands = [
        "no debt"
        if v is None
        else "< 1"
        if v < 1
        else f"1 to {HF_WATCH:g}"
        if v < HF_WATCH
        else f"≥ {HF_WATCH:g}"
        for v in hf
    ]
    debt = [_float(v) for v in accounts["debt"].to_list()]
    collateral = [_float(v) for v in accounts["total_collateral_value"].to_list()]
    # Debt is in the asset's whole units: one whole token priced at the observation's time.
    one = accounts.select(
        pl.col("asset"),
        pl.lit(None, dtype=pl.Int64).alias("chain"),
        pl.lit(1).alias("unit"),
        *([pl.col("observed_at")] if "observed_at" in accounts.columns else []),
    )
    prices = usd_column(one, "unit", chain="chain", token="asset", at=_at(one)).to_list()
    return pl.DataFrame(
        {
            "account": accounts["account"],
            "asset": accounts["asset"],
            "debt": debt,
            "collateral_value": collateral,
            "debt_usd": [_times(d, p) for d, p in zip(debt, prices, strict=True)],
            "collateral_value_usd": [_times(c, p) for c, p in zip(collateral, prices, strict=True)],
            "health_factor": hf,
            "band": bands,
            "run_id": accounts["run_id"],
            "observed_at": accounts["observed_at"],
        },
        schema={
            "account": pl.String,
            "asset": pl.String,
            "debt": pl.Float64,
            "collateral_value": pl.Float64,
            "debt_usd": pl.Float64,
            "collateral_value_usd": pl.Float64,
            "health_factor": pl.Float64,
            "band": pl.String,
            "run_id": pl.String,
            "observed_at": accounts.schema["observed_at"],
        },
    )


def _times(value: float | None, price: float | None) -> float | None:
    return None if value is None or price is None else value * price


def credit_book_table(accounts: pl.DataFrame) -> pl.DataFrame:
    """Per credit asset (never summed across currencies): accounts, accounts with debt, in each
    health band, total debt and collateral value in the asset's units, and the debt in USD at
    the asset's price (empty when the asset has no price: no rate is assumed)."""
    hf = pl.col("health_factor")
    indebted = hf.is_not_null() & (pl.col("debt") > 0)
    return (
        accounts.group_by("asset")
        .agg(
            pl.col("account").n_unique().alias("accounts"),
            indebted.sum().alias("with_debt"),
            (indebted & (hf < 1)).sum().alias("hf_below_1"),
            (indebted & (hf < HF_WATCH)).sum().alias(f"hf_below_{HF_WATCH:g}"),
            pl.col("debt").sum().alias("total_debt"),
            pl.col("debt_usd").sum().alias("total_debt_usd"),
            pl.col("collateral_value").sum().alias("total_collateral_value"),
            pl.col("run_id").n_unique().alias("runs"),
            pl.col("observed_at").max().alias("latest_observation"),
        )
        .with_columns(
            pl.when(pl.col("total_debt_usd") > 0)
            .then(pl.col("total_debt_usd"))
            .when(pl.col("total_debt") == 0)
            .then(0.0)
            .alias("total_debt_usd")
        )
        .sort("asset")
    )


def credit_collateral_table(protocol: pl.DataFrame) -> pl.DataFrame:
    """The collaterals the protocol accepts, per chain, with LTVs in %.

    Parameters
    ----------
    protocol : polars.DataFrame
        The store's ``credit_collateral`` rows of a protocol snapshot (chain, symbol,
        collateral, ltv_bps, maintenance_ltv_bps, liquidation_bonus_bps, strategy).

    Returns
    -------
    polars.DataFrame
        ``chain`` (its name), ``collateral`` (its symbol, else its address), ``ltv_pct``,
        ``maintenance_ltv_pct``, ``liquidation_bonus_pct`` and ``strategy``.

    Examples
    --------
    >>> protocol = pl.DataFrame({"chain": [8453], "symbol": ["WETH"], "collateral": ["0x42"],
    ...     "ltv_bps": [8000], "maintenance_ltv_bps": [8500], "liquidation_bonus_bps": [500],
    ...     "strategy": ["none"]})
    >>> credit_collateral_table(protocol).rows()
    [('Base', 'WETH', 80.0, 85.0, 5.0, 'none')]
    """
    return protocol.select(
        pl.col("chain").map_elements(chain_name, return_dtype=pl.String).alias("chain"),
        pl.col("symbol").fill_null(pl.col("collateral")).alias("collateral"),
        (pl.col("ltv_bps") / 100).alias("ltv_pct"),
        (pl.col("maintenance_ltv_bps") / 100).alias("maintenance_ltv_pct"),
        (pl.col("liquidation_bonus_bps") / 100).alias("liquidation_bonus_pct"),
        pl.col("strategy"),
    ).sort("chain", "collateral")
