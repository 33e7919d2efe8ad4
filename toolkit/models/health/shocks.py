"""Deterministic stress grids: a :class:`~toolkit.models.health.CreditBook` under price shocks,
per asset with its holdings (:func:`stress`) or all together from the stored snapshot's totals
(:func:`snapshot_stress`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from toolkit.arguments import ArgumentError
from toolkit.models.health.book import CreditBook
from toolkit.models.health.kernel import liquidations

__all__ = ["DEFAULT_SHOCKS", "snapshot_stress", "stress"]

#: Price shocks of the stress grid: -5 % to -60 %.
DEFAULT_SHOCKS: tuple[float, ...] = (-0.05, -0.1, -0.2, -0.3, -0.4, -0.5, -0.6)


def stress(book: CreditBook, *, shocks: Sequence[float] = DEFAULT_SHOCKS) -> pl.DataFrame:
    """A deterministic shock grid of ``book``: each asset alone and all together, at every shock.

    Per scenario, at the book's prices shocked and its rules' maintenance LTVs and bonuses:
    accounts liquidatable (health below 1), the debt they owe (``debt_at_risk``), the
    collateral value at the shocked prices, what liquidating every liquidatable account back to
    health takes (:func:`liquidations`: ``repayment_needed``, ``collateral_to_seize`` with the
    bonus) and the ``bad_debt`` left where collateral cannot restore it.

    >>> import numpy as np
    >>> from toolkit.models.health import CreditBook
    >>> book = CreditBook(("a", "b"), ("usdc", "yobtc"),
    ...                   np.array([[1_000.0, 0.0], [0.0, 0.02]]), np.array([800.0, 500.0]),
    ...                   np.array([1.0, 60_000.0]))
    >>> frame = stress(book, shocks=[-0.5])
    >>> frame.select("shocked", "shock", "liquidatable", "debt_at_risk").rows()
    [('usdc', -0.5, 1, 800.0), ('yobtc', -0.5, 1, 500.0), ('all', -0.5, 2, 1300.0)]
    """
    assets = list(book.assets)
    base = book.prices
    owed, held = book.debt, book.collateral
    rows: list[tuple[str, float]] = []
    grid = []
    for shock in shocks:
        if not -1 < shock <= 0:
            raise ArgumentError("shocks", "price changes in (-1, 0]", shock)
        for i, asset in enumerate([*assets, "all"]):
            factor = np.ones(len(assets))
            if asset == "all":
                factor[:] += shock
            else:
                factor[i] += shock
            rows.append((asset, float(shock)))
            grid.append(base * factor)
    scenarios = np.array(grid)
    hf = book.health_factors(scenarios)
    at_risk = hf < 1
    value = held @ scenarios.T  # (n, s)
    needs = [liquidations(held * row, owed, assets, rules=book.rules) for row in scenarios]
    return pl.DataFrame(
        {
            "shocked": [r[0] for r in rows],
            "shock": [r[1] for r in rows],
            "liquidatable": at_risk.sum(axis=1).astype(np.int64),
            "debt_at_risk": (at_risk * owed).sum(axis=1),
            "collateral_value": value.sum(axis=0),
            "min_health_factor": hf.min(axis=1),
            "repayment_needed": [float(r.sum()) for r, _, _ in needs],
            "collateral_to_seize": [float(z.sum()) for _, z, _ in needs],
            "bad_debt": [float(b.sum()) for _, _, b in needs],
        }
    )


def snapshot_stress(
    accounts: pl.DataFrame, *, shocks: Sequence[float] = DEFAULT_SHOCKS
) -> pl.DataFrame:
    """Stress the stored book: the ``credit_accounts`` snapshot under shocks to every asset.

    ``accounts`` has the store's columns (``account``, ``asset``, ``round``, ``debt``,
    ``total_collateral_value``, ``liquidation_limit``, ``health_factor``; decimals as stored);
    the latest round of each account is taken. The API reports each account's totals, not its
    collateral mix, so the shock is one move of every collateral price together: the
    maintenance-weighted value ``W = debt · total_collateral_value / liquidation_limit``
    scales by ``1 + shock`` and so does the health factor. Per-asset shocks need the holdings:
    the collector stores them in ``credit_collateral``, and :func:`stress` of the
    :func:`collected_book` shocks each asset alone. Per shock: accounts with debt,
    ``liquidatable``, ``debt_at_risk``, the shocked collateral value and the lowest health
    factor.

    >>> import datetime as dt
    >>> from decimal import Decimal as D
    >>> book = pl.DataFrame({"account": ["a", "b"], "asset": ["USDC", "USDC"], "round": [0, 0],
    ...     "debt": [D("500"), D("0")], "total_collateral_value": [D("1000"), D("10")],
    ...     "liquidation_limit": [D("625"), D("0")], "health_factor": [D("1.6"), None]})
    >>> snapshot_stress(book, shocks=[-0.3, -0.4]).select("shock", "liquidatable").rows()
    [(-0.3, 0), (-0.4, 1)]
    """
    need = ("account", "asset", "round", "debt", "total_collateral_value", "liquidation_limit")
    missing = [c for c in need if c not in accounts.columns]
    if missing:
        raise ArgumentError("accounts", f"the credit_accounts columns ({', '.join(need)})", missing)
    for shock in shocks:
        if not -1 < shock <= 0:
            raise ArgumentError("shocks", "price changes in (-1, 0]", shock)
    latest = accounts.filter(
        pl.col("round") == pl.col("round").max().over("account", "asset")
    ).select(
        pl.col(c).cast(pl.Float64) for c in ("debt", "total_collateral_value", "liquidation_limit")
    )
    owed = latest["debt"].to_numpy()
    value = latest["total_collateral_value"].to_numpy()
    limit = latest["liquidation_limit"].to_numpy()
    indebted = (owed > 0) & (limit > 0)
    weighted = np.where(indebted, owed * value / np.where(indebted, limit, 1.0), 0.0)
    rows = []
    for shock in shocks:
        hf = np.where(indebted, weighted * (1 + shock) / np.where(indebted, owed, 1.0), np.inf)
        at_risk = hf < 1
        rows.append(
            (
                float(shock),
                int(indebted.sum()),
                int(at_risk.sum()),
                float(owed[at_risk].sum()),
                float(value.sum() * (1 + shock)),
                float(hf.min()) if hf.size else float("inf"),
            )
        )
    schema = [
        "shock",
        "indebted",
        "liquidatable",
        "debt_at_risk",
        "collateral_value",
        "min_health_factor",
    ]
    return pl.DataFrame(rows, schema=schema, orient="row")
