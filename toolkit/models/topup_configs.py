"""The auto top-up model's store input: each stored config (``credit_topup_configs``, through
:func:`toolkit.store.queries.topup_configs`) replayed by
:func:`~toolkit.models.topup.simulate_topups` from its account's position in the credit book
the store gives."""

from __future__ import annotations

import polars as pl

from toolkit.arguments import ArgumentError, whole
from toolkit.models.health import CreditBook, from_bps
from toolkit.models.topup import simulate_topups

__all__ = ["CONFIG_COLUMNS", "stored_topups"]


#: The columns :func:`stored_topups` reads of its configs
#: (:func:`toolkit.store.queries.topup_configs` gives them).
CONFIG_COLUMNS = (
    "account",
    "receiver",
    "asset",
    "threshold",
    "target_balance",
    "health_factor_bps",
)


def stored_topups(
    configs: pl.DataFrame,
    book: CreditBook,
    spends: pl.DataFrame,
    *,
    asset: str = "USDC",
    unit: int = 10**6,
    idle_rate: float = 0.05,
    gas_per_top_up: int = 10_000,
) -> pl.DataFrame:
    """Each stored auto top-up config of credit asset ``asset`` replayed against ``spends``
    from its account's position in ``book``: the top-up model's store input.

    ``configs`` has :func:`toolkit.store.queries.topup_configs`' columns (:data:`CONFIG_COLUMNS`
    at least); ``book`` is the store's credit book
    (:func:`toolkit.report.load.stored_credit_book`) or any other, whose accounts must hold
    every configured account. The store keeps configs and positions but no card spends, so
    ``spends`` (``t``, ``amount``: :func:`~toolkit.models.topup.spending`) is the spending
    each receiver is assumed to see. An account's collateral is weighted by the
    book's rules (maintenance LTV for the health factor, LTV for capacity), its debt is the
    starting principal, and the config's ``health_factor_bps`` (10000 = 1.0) the floor a draw
    keeps (at least 1: below it the capacity binds first).

    Parameters
    ----------
    configs : polars.DataFrame
        Stored configs: account, receiver, asset, threshold, target_balance (smallest units),
        health_factor_bps.
    book : CreditBook
        The accounts' collateral, debt, prices and rules (whole credit units).
    spends : polars.DataFrame
        t (seconds) and amount (smallest units), as simulate_topups takes.
    asset : str
        The credit asset whose configs are replayed.
    unit : int
        The credit asset's smallest units per whole unit (10**6 for USDC).
    idle_rate, gas_per_top_up : float, int
        As for simulate_topups.

    Returns
    -------
    polars.DataFrame
        One row per config: account, receiver, threshold, target_balance,
        health_factor_floor, then :class:`~toolkit.models.topup.TopUpSummary`'s fields.

    Examples
    --------
    >>> from toolkit.backtest import generate_book
    >>> from toolkit.models.topup import spending
    >>> book = generate_book(2, seed=2)
    >>> configs = pl.DataFrame({"account": ["a0001"], "receiver": ["0xcard"], "asset": ["USDC"],
    ...     "threshold": [100 * 10**6], "target_balance": [300 * 10**6],
    ...     "health_factor_bps": [13_000]})
    >>> spends = spending(rate_per_d=2, median=40 * 10**6, sigma=0.5, span_d=30, seed=1)
    >>> stored_topups(configs, book, spends).select("account", "top_ups", "declined").rows()
    [('a0001', 12, 0)]
    """
    missing = [c for c in CONFIG_COLUMNS if c not in configs.columns]
    if missing:
        raise ArgumentError("configs", f"a frame with columns {', '.join(CONFIG_COLUMNS)}", missing)
    whole(unit, "unit", minimum=1)
    mine = configs.filter(pl.col("asset").str.to_uppercase() == asset.upper())
    row_of = {a.lower(): i for i, a in enumerate(book.accounts)}
    unknown = sorted({a for a in mine["account"].to_list() if a.lower() not in row_of})
    if unknown:
        raise ArgumentError("configs", "accounts the book holds", unknown)
    values = book.values()
    ltv = from_bps([book.rules.rule(a).ltv_bps for a in book.assets])
    rows = []
    for config in mine.iter_rows(named=True):
        i = row_of[config["account"].lower()]
        total = float(values[i].sum())
        # an account without collateral can draw nothing: any weights give a zero ceiling
        maintenance = float(values[i] @ book.maintenance_ltv) / total if total else 1.0
        floor = max(1.0, int(config["health_factor_bps"]) / 10_000)
        run = simulate_topups(
            spends,
            collateral_value=round(total * unit),
            maintenance_ltv=maintenance,
            ltv=min(float(values[i] @ ltv) / total, maintenance) if total else 0.0,
            threshold=int(config["threshold"]),
            target_balance=int(config["target_balance"]),
            min_health_factor=floor,
            principal=round(float(book.debt[i]) * unit),
            idle_rate=idle_rate,
            gas_per_top_up=gas_per_top_up,
            rules=book.rules,
        )
        rows.append(
            {"account": config["account"], "receiver": config["receiver"],
             "threshold": int(config["threshold"]), "target_balance": int(config["target_balance"]),
             "health_factor_floor": floor, **run.summary.as_dict()}
        )  # fmt: skip
    return pl.DataFrame(rows, schema=_STORED_SCHEMA)


_STORED_SCHEMA = {
    "account": pl.String,
    "receiver": pl.String,
    "threshold": pl.Int64,
    "target_balance": pl.Int64,
    "health_factor_floor": pl.Float64,
    "top_ups": pl.Int64,
    "drawn": pl.Int64,
    "fees": pl.Int64,
    "declined": pl.Int64,
    "idle": pl.Float64,
    "idle_cost": pl.Float64,
    "gas": pl.Int64,
    "cost": pl.Float64,
    "min_health_factor": pl.Float64,
}
