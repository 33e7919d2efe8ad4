"""The credit book: one type for a book of accounts, whether generated for a backtest
(:func:`toolkit.backtest.generate_book`) or collected from the store (:func:`collected_book`),
and the market parameters its prices move with.

Every risk function of :mod:`toolkit.models.health` (:func:`~toolkit.models.health.stress`,
:func:`~toolkit.models.health.monte_carlo`, :func:`~toolkit.models.liquidation_cascade`) and the
credit backtest (:func:`toolkit.backtest.replay_credit`) take a :class:`CreditBook`.

Prices are one convention across the risk API: a float array in the order of the book's
``assets`` (``(n_assets,)``, or ``(n_scenarios, n_assets)`` for a scenario axis), in the credit
asset per whole token. The labels live once, on the book; an array is what the kernel
vectorises over scenarios, which a mapping of asset to price cannot carry. Labelled prices (a
mapping, or a price table from the store) are read once, where a book is made from them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from toolkit.arguments import ArgumentError
from toolkit.credit import DEFAULT_RULES, CollateralRule, ProductRules
from toolkit.models.health.kernel import checked_array, from_bps, health_factor, maintenance_ltvs

__all__ = ["CreditBook", "MarketParameters", "collected_book"]


@dataclass(frozen=True, eq=False)
class CreditBook:
    """A credit book as the arrays of the kernel, labelled.

    ``accounts`` and ``assets`` label the rows and columns of ``collateral`` (whole tokens,
    summed over the chains an asset is locked on); ``debt`` (per account) and ``prices`` (per
    asset, in the order of ``assets``) are in the credit asset; ``rules`` are the product rules
    whose maintenance LTVs and bonuses apply; ``stored_health_factor`` is what the service
    reported for a collected book (``inf`` without debt), None for a generated one. The repr
    gives the size and the totals (debt and collateral value in the credit asset).

    >>> book = CreditBook(("a", "b"), ("usdc", "yobtc"), np.array([[1_000.0, 0.0], [0.0, 0.02]]),
    ...                   np.array([500.0, 0.0]), np.array([1.0, 60_000.0]))
    >>> book.health_factors().tolist(), book.maintenance_ltv.tolist()
    ([1.85, inf], [0.925, 0.7])
    >>> book
    CreditBook(2 accounts, 1 with debt, assets usdc/yobtc, debt 500.00, collateral 2,200.00)
    """

    accounts: tuple[str, ...]
    assets: tuple[str, ...]
    collateral: np.ndarray
    debt: np.ndarray
    prices: np.ndarray
    rules: ProductRules = DEFAULT_RULES
    stored_health_factor: np.ndarray | None = None

    def __post_init__(self) -> None:
        held = checked_array(self.collateral, "collateral", (2,))
        owed = checked_array(self.debt, "debt", (1,))
        price = checked_array(self.prices, "prices", (1,))
        n, k = len(self.accounts), len(self.assets)
        if held.shape != (n, k):
            raise ArgumentError("collateral", f"of shape ({n}, {k}): accounts x assets", held.shape)
        if owed.shape != (n,):
            raise ArgumentError("debt", f"of shape ({n},): one per account", owed.shape)
        if price.shape != (k,):
            raise ArgumentError("prices", f"of shape ({k},): one per asset", price.shape)
        unknown = [a for a in self.assets if a.lower() not in self.rules.collateral]
        if unknown:
            raise ArgumentError("assets", "assets the product rules list", unknown)
        object.__setattr__(self, "accounts", tuple(str(a) for a in self.accounts))
        object.__setattr__(self, "assets", tuple(str(a) for a in self.assets))
        object.__setattr__(self, "collateral", held)
        object.__setattr__(self, "debt", owed)
        object.__setattr__(self, "prices", price)

    def __repr__(self) -> str:
        # the arrays of a book of thousands of accounts are no use in a repr: its size and totals
        indebted = int((self.debt > 0).sum())
        return (
            f"CreditBook({len(self.accounts):,} accounts, {indebted:,} with debt, assets "
            f"{'/'.join(self.assets)}, debt {self.debt.sum():,.2f}, collateral "
            f"{self.values().sum():,.2f})"
        )

    @functools.cached_property
    def maintenance_ltv(self) -> np.ndarray:
        """Maintenance LTVs per asset (fractions), from ``rules``."""
        return maintenance_ltvs(self.assets, self.rules)

    @functools.cached_property
    def bonus(self) -> np.ndarray:
        """Liquidation bonuses per asset (fractions), from ``rules``."""
        return from_bps([self.rules.rule(a).liquidation_bonus_bps for a in self.assets])

    def values(self, prices: np.ndarray | None = None) -> np.ndarray:
        """Collateral values ``(n_accounts, n_assets)`` at ``prices`` (default: the book's)."""
        return self.collateral * (self.prices if prices is None else prices)

    def health_factors(self, prices: np.ndarray | None = None) -> np.ndarray:
        """:func:`~toolkit.models.health.health_factor` of every account at ``prices``
        (default: the book's; a ``(n_scenarios, n_assets)`` array gives one row per scenario)."""
        return health_factor(
            self.collateral,
            self.maintenance_ltv,
            self.debt,
            self.prices if prices is None else prices,
        )

    def with_debt(self, debt: np.ndarray) -> CreditBook:
        """The same book owing ``debt`` (one amount per account, in the credit asset).

        >>> book = CreditBook(("a",), ("usdc",), np.array([[100.0]]), np.array([0.0]),
        ...                   np.array([1.0]))
        >>> book.with_debt(np.array([50.0])).health_factors().tolist()
        [1.85]
        """
        return replace(self, debt=debt, stored_health_factor=None)

    def with_rules(self, rules: ProductRules) -> CreditBook:
        """The same book under other product rules (a what-if of LTVs or bonuses)."""
        return replace(self, rules=rules)


@dataclass(frozen=True, eq=False)
class MarketParameters:
    """How a book's collateral prices move: annual volatilities of ``assets`` and the
    correlation matrix of their log returns (driftless correlated GBM, as
    :func:`~toolkit.models.health.correlated_prices` draws them). Estimated from a price table
    by :func:`~toolkit.models.health.estimate_volatility`.

    >>> MarketParameters(("usdc", "yobtc"), np.array([0.0, 0.6]), np.eye(2)).vols.tolist()
    [0.0, 0.6]
    """

    assets: tuple[str, ...]
    vols: np.ndarray
    correlation: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.assets)
        sigma = checked_array(self.vols, "vols", (1,))
        corr = np.asarray(self.correlation, dtype=np.float64)
        if sigma.shape != (n,):
            raise ArgumentError("vols", f"of shape ({n},): one per asset", sigma.shape)
        if corr.shape != (n, n):
            raise ArgumentError("correlation", f"of shape ({n}, {n})", corr.shape)
        object.__setattr__(self, "assets", tuple(str(a) for a in self.assets))
        object.__setattr__(self, "vols", sigma)
        object.__setattr__(self, "correlation", corr)

    def check_for(self, book: CreditBook) -> None:
        """Raise an :class:`~toolkit.arguments.ArgumentError` unless these parameters are for
        the assets of ``book``, in its order."""
        if self.assets != book.assets:
            raise ArgumentError(
                "market",
                f"parameters of the book's assets ({', '.join(book.assets)})",
                ", ".join(self.assets),
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
) -> CreditBook:
    """The collected book of credit asset ``asset`` as a :class:`CreditBook`.

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
    return CreditBook(
        accounts=names,
        assets=tuple(assets),
        collateral=matrix,
        debt=latest["debt"].cast(pl.Float64).fill_null(0.0).to_numpy(),
        prices=checked_array([given[a] for a in assets], "prices", (1,)),
        rules=product,
        stored_health_factor=stored,
    )
