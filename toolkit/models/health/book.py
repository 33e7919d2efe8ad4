"""A collected credit book (``credit_accounts``, ``credit_collateral``, ``credit_protocol`` rows)
as the kernel's arrays, and the stress grid and Monte Carlo run on it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from toolkit.arguments import ArgumentError
from toolkit.credit import DEFAULT_RULES, CollateralRule, ProductRules
from toolkit.models.health.kernel import checked_array, from_bps, health_factor, maintenance_ltvs
from toolkit.models.health.montecarlo import estimate_volatility, monte_carlo
from toolkit.models.health.shocks import DEFAULT_SHOCKS, stress

__all__ = ["Book", "collected_book", "collected_monte_carlo", "collected_stress"]


@dataclass(frozen=True)
class Book:
    """A collected credit book as the arrays of the kernel (module docstring for the shapes).

    ``accounts`` and ``assets`` label the rows and columns of ``collateral`` (whole tokens,
    summed over the chains an asset is locked on); ``debt`` and ``prices`` are in the credit
    asset; ``maintenance_ltv`` and ``bonus`` are fractions per asset and ``rules`` the same
    parameters as product rules (what :func:`stress` and :func:`monte_carlo` take);
    ``stored_health_factor`` is what the service reported (``inf`` without debt).
    """

    accounts: tuple[str, ...]
    assets: tuple[str, ...]
    collateral: np.ndarray
    debt: np.ndarray
    prices: np.ndarray
    maintenance_ltv: np.ndarray
    bonus: np.ndarray
    stored_health_factor: np.ndarray
    rules: ProductRules

    @property
    def price_map(self) -> dict[str, float]:
        """``prices`` by asset, in the order of ``assets``."""
        return dict(zip(self.assets, self.prices.tolist(), strict=True))

    def health_factors(self, prices: np.ndarray | None = None) -> np.ndarray:
        """:func:`health_factor` of the book at ``prices`` (default: the book's)."""
        return health_factor(
            self.collateral,
            self.maintenance_ltv,
            self.debt,
            self.prices if prices is None else prices,
        )


def _columns(frame: pl.DataFrame, name: str, need: Sequence[str]) -> None:
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise ArgumentError(name, f"a frame with the columns {', '.join(need)}", missing)


def _latest(accounts: pl.DataFrame, asset: str) -> pl.DataFrame:
    """Each account's latest snapshot of ``asset`` (by ``observed_at`` when present, then
    ``round``)."""
    mine = accounts.filter(pl.col("asset").str.to_uppercase() == asset.upper())
    order = [c for c in ("observed_at", "round") if c in mine.columns]
    return mine.sort(order).group_by("account", maintain_order=True).last().sort("account")


def _price_row(prices: Mapping[str, float] | pl.DataFrame) -> dict[str, float]:
    if isinstance(prices, pl.DataFrame):
        if prices.height == 0:
            raise ArgumentError("prices", "a price table with at least one row", "no rows")
        return {str(k): float(v) for k, v in prices.row(prices.height - 1, named=True).items()}
    return {str(k): float(v) for k, v in prices.items()}


def _rules(
    protocol: pl.DataFrame | None, assets: Sequence[str], rules: ProductRules
) -> ProductRules:
    """Product rules whose collateral parameters are the protocol rows' (``credit_protocol``:
    latest round, one per symbol), else those of ``rules``."""
    if protocol is None:
        return ProductRules(collateral={a: rules.rule(a) for a in assets})
    _columns(protocol, "protocol", ("symbol", "maintenance_ltv_bps", "liquidation_bonus_bps"))
    if "round" in protocol.columns:
        protocol = protocol.filter(pl.col("round") == pl.col("round").max())
    found: dict[str, CollateralRule] = {}
    for row in protocol.iter_rows(named=True):
        symbol = str(row["symbol"]).lower()
        m, b = row["maintenance_ltv_bps"], row["liquidation_bonus_bps"]
        if m is None or b is None:
            raise ArgumentError(f"protocol.{symbol}", "a maintenance LTV and a bonus", None)
        ltv = row.get("ltv_bps")
        found[symbol] = CollateralRule(symbol, "collected", int(m if ltv is None else ltv), m, b)
    for asset in assets:
        if asset not in found:
            raise ArgumentError(
                "protocol", f"a row for every held asset (none for {asset!r})", asset
            )
    return ProductRules(collateral={a: found[a] for a in assets})


def collected_book(
    collateral: pl.DataFrame,
    accounts: pl.DataFrame,
    prices: Mapping[str, float] | pl.DataFrame,
    protocol: pl.DataFrame | None = None,
    *,
    asset: str = "USDC",
    rules: ProductRules = DEFAULT_RULES,
) -> Book:
    """The collected book of credit asset ``asset`` as a :class:`Book`.

    ``accounts`` are ``credit_accounts`` rows (``account``, ``asset``, ``round``, ``debt``,
    ``health_factor``; ``run_id`` and ``observed_at`` when present): each account's latest
    snapshot gives its debt. ``collateral`` are ``credit_collateral`` rows (``account``,
    ``asset``, ``symbol``, ``amount`` in smallest units, ``decimals``) of the same snapshot
    (matched on ``run_id`` and ``round`` where both frames have them); an account without rows
    holds nothing. ``prices`` maps each asset's symbol to its price in the credit asset, or is
    a price table (one column per symbol, oldest row first: its last row is taken).
    Maintenance LTVs and bonuses come from ``protocol`` (``credit_protocol`` rows, latest
    round) or, without it, from ``rules``. Assets are the protocol's symbols (else the held
    ones), sorted.

    >>> from decimal import Decimal as D
    >>> held = pl.DataFrame({"account": ["a", "a"], "asset": ["USDC", "USDC"], "round": [0, 0],
    ...     "symbol": ["usdc", "yobtc"], "amount": [500 * 10**6, 10**6], "decimals": [6, 8]})
    >>> book = pl.DataFrame({"account": ["a", "b"], "asset": ["USDC", "USDC"], "round": [0, 0],
    ...     "debt": [D("600"), D("0")], "health_factor": [D("1.470833333333333333"), None]})
    >>> b = collected_book(held, book, {"usdc": 1.0, "yobtc": 60_000.0})
    >>> b.accounts, b.assets, b.collateral.tolist()
    (('a', 'b'), ('usdc', 'yobtc'), [[500.0, 0.01], [0.0, 0.0]])
    >>> [round(float(h), 9) for h in b.health_factors()]
    [1.470833333, inf]
    """
    _columns(accounts, "accounts", ("account", "asset", "round", "debt", "health_factor"))
    _columns(collateral, "collateral", ("account", "asset", "symbol", "amount", "decimals"))
    latest = _latest(accounts, asset)
    place = [c for c in ("run_id", "round") if c in latest.columns and c in collateral.columns]
    held = (
        collateral.filter(pl.col("asset").str.to_uppercase() == asset.upper())
        .join(latest.select("account", *place), on=["account", *place], how="semi")
        .select(
            "account",
            pl.col("symbol").str.to_lowercase(),
            pl.col("amount").cast(pl.Float64) / pl.lit(10.0).pow(pl.col("decimals")),
        )
    )
    if held["amount"].null_count():
        raise ArgumentError("collateral", "an amount and decimals on every row", "a null")
    if protocol is not None and "symbol" in protocol.columns:
        assets = sorted({str(s).lower() for s in protocol["symbol"].drop_nulls()})
    else:
        assets = sorted(set(held["symbol"].to_list()))
    unknown = sorted(set(held["symbol"].to_list()) - set(assets))
    if unknown:
        raise ArgumentError("collateral", "symbols the protocol lists", unknown)
    given = {k.lower(): v for k, v in _price_row(prices).items()}
    missing = [a for a in assets if a not in given]
    if missing:
        raise ArgumentError("prices", "a price for every asset", missing)
    names = tuple(str(a) for a in latest["account"].to_list())
    row_of = {a: i for i, a in enumerate(names)}
    col_of = {a: j for j, a in enumerate(assets)}
    matrix = np.zeros((len(names), len(assets)))
    for account, symbol, amount in held.iter_rows():
        matrix[row_of[account], col_of[symbol]] += amount
    product = _rules(protocol, assets, rules)
    stored = latest["health_factor"].cast(pl.Float64).fill_null(np.inf).to_numpy()
    return Book(
        accounts=names,
        assets=tuple(assets),
        collateral=matrix,
        debt=latest["debt"].cast(pl.Float64).fill_null(0.0).to_numpy(),
        prices=checked_array([given[a] for a in assets], "prices", (1,)),
        maintenance_ltv=maintenance_ltvs(assets, product),
        bonus=from_bps([product.rule(a).liquidation_bonus_bps for a in assets]),
        stored_health_factor=stored,
        rules=product,
    )


def collected_stress(book: Book, *, shocks: Sequence[float] = DEFAULT_SHOCKS) -> pl.DataFrame:
    """:func:`stress` of a collected book: each asset alone and all together at every shock,
    with the book's maintenance LTVs and bonuses.

    >>> b = Book(("a",), ("usdc", "yobtc"), np.array([[0.0, 0.02]]), np.array([800.0]),
    ...     np.array([1.0, 60_000.0]), np.array([0.925, 0.7]), np.array([0.01, 0.08]),
    ...     np.array([1.05]), DEFAULT_RULES)
    >>> collected_stress(b, shocks=[-0.1]).select("shocked", "liquidatable").rows()
    [('usdc', 0), ('yobtc', 1), ('all', 1)]
    """
    return stress(book.collateral, book.debt, book.price_map, shocks=shocks, rules=book.rules)


def collected_monte_carlo(
    book: Book, price_table: pl.DataFrame, *, periods_per_year: float, **options: Any
) -> dict[str, float]:
    """:func:`monte_carlo` of a collected book, with volatilities and correlations estimated
    (:func:`estimate_volatility`) from ``price_table`` (a column per asset of the book, oldest
    row first, ``periods_per_year`` rows a year); ``options`` go to :func:`monte_carlo`.

    >>> b = Book(("a",), ("usdc", "yobtc"), np.array([[0.0, 0.02]]), np.array([800.0]),
    ...     np.array([1.0, 60_000.0]), np.array([0.925, 0.7]), np.array([0.01, 0.08]),
    ...     np.array([1.05]), DEFAULT_RULES)
    >>> history = pl.DataFrame({"usdc": [1.0, 1.0, 1.001, 1.0],
    ...                         "yobtc": [58_000.0, 61_000.0, 57_500.0, 60_000.0]})
    >>> r = collected_monte_carlo(b, history, periods_per_year=365, n_scenarios=1_000,
    ...                           progress=False)
    >>> r["scenarios"], 0 < r["liquidation_probability"] < 1
    (1000.0, True)
    """
    missing = [a for a in book.assets if a not in price_table.columns]
    if missing:
        raise ArgumentError(
            "price_table", "a frame with a column for every asset of the book", missing
        )
    vols, correlation = estimate_volatility(
        price_table.select(book.assets), periods_per_year=periods_per_year
    )
    return monte_carlo(
        book.collateral, book.debt, book.price_map, vols, correlation, rules=book.rules, **options
    )
