"""A credit book over days of price paths: spending draws, repayments (some late), overdue
interest, liquidations, bad debt; and the same book swept over LTV and bonus settings.

The book is vectorised over accounts with numpy (floats, in the credit asset's whole units);
every rule comes from :mod:`toolkit.credit` (fee, term, overdue APR, LTVs, bonuses), and each
liquidation is the exact :func:`toolkit.credit.liquidation` of the account, so a backtest and
the ledger agree on what a liquidation does. One step is one day:

1. prices move (driftless correlated GBM, :func:`toolkit.models.health.correlated_prices`);
2. accounts spend (Poisson, log-normal amounts): a spend is a draw when the account's
   maintenance health factor stays at least 1 and capacity remains, else it is declined; the
   first draw on a zero balance sets the due date (37 days later);
3. accounts due today repay in full, except a ``late_share`` that repays ``late_d`` later,
   paying 15 % APR on the principal for every overdue day;
4. accounts whose health factor is below 1 are liquidated just enough to restore it, the
   liquidator taking the asset's bonus in collateral; what collateral cannot cover is bad debt.

The book is a :class:`~toolkit.models.health.CreditBook` (the one the risk functions take) and
its prices move with :class:`~toolkit.models.health.MarketParameters`; a collected book replays
the same way as a generated one, its debt taken as drawn on day 0.

>>> book = generate_book(200, seed=1)
>>> result = replay_credit(book, default_market(), span_d=30, seed=1)
>>> result.daily.height, result.summary.fees > 0
(30, True)
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np
import polars as pl

from toolkit.arguments import ArgumentError, fraction, number, whole
from toolkit.backtest.creditday import BookState
from toolkit.credit import BPS, DEFAULT_RULES, ProductRules
from toolkit.models.health import CreditBook, MarketParameters, correlated_prices
from toolkit.models.health.results import Row
from toolkit.progress import progress_bar

__all__ = [
    "CREDIT_SWEEP_KEYS",
    "CreditBehaviour",
    "CreditResult",
    "CreditSummary",
    "credit_sweep",
    "default_market",
    "generate_book",
    "replay_credit",
    "scaled_rules",
]

#: The settings a credit sweep may vary: factors on every asset's LTV (maintenance LTV
#: follows, keeping its margin) and on every liquidation bonus.
CREDIT_SWEEP_KEYS: tuple[str, ...] = ("ltv_scale", "bonus_scale")


@dataclass(frozen=True)
class CreditBehaviour:
    """How the accounts behave: spends per day and their median size (whole credit units,
    log-normal with ``sigma``), and the share that repays ``late_d`` after the due date."""

    spends_per_day: float = 1.0
    spend_median: float = 60.0
    sigma: float = 0.8
    late_share: float = 0.15
    late_d: int = 10

    def __post_init__(self) -> None:
        number(self.spends_per_day, "spends_per_day", minimum=0)
        number(self.spend_median, "spend_median", above=0)
        number(self.sigma, "sigma", minimum=0)
        fraction(self.late_share, "late_share")
        whole(self.late_d, "late_d", minimum=0)


@dataclass(frozen=True)
class CreditSummary(Row):
    """The figures of a whole credit replay; amounts in whole units of the credit asset.

    ``fees`` (origination) and ``interest`` (overdue) make ``revenue``; ``liquidations`` counts
    the liquidation calls that moved something, ``bonus`` what liquidators earned over the debt
    they repaid, ``bad_debt`` what collateral could not cover; ``peak_debt`` and ``end_debt``
    are the book's largest and last daily debt; ``declined`` counts spends refused for lack of
    capacity.
    """

    accounts: int
    span_d: int
    fees: float
    interest: float
    liquidations: int
    bonus: float
    bad_debt: float
    revenue: float
    peak_debt: float
    end_debt: float
    declined: int


@dataclass(frozen=True)
class CreditResult:
    """``daily`` (one row per day) and the ``summary`` of the whole run."""

    daily: pl.DataFrame
    summary: CreditSummary


_ASSETS = ("usdc", "gtusdcp", "superusdc", "yousd", "yobtc")
_PRICES = (1.0, 1.0, 1.0, 1.0, 60_000.0)
_VOLS = (0.0, 0.02, 0.04, 0.04, 0.6)


def default_market(*, correlation: float = 0.3) -> MarketParameters:
    """The default collateral assets' annual volatilities (the stablecoin 0, its vaults 2 to
    4 %, the BTC vault 60 %), every pair of returns ``correlation``-ed.

    >>> default_market().vols.tolist()
    [0.0, 0.02, 0.04, 0.04, 0.6]
    """
    n = len(_ASSETS)
    corr = np.full((n, n), number(correlation, "correlation", minimum=0, below=1))
    np.fill_diagonal(corr, 1.0)
    return MarketParameters(_ASSETS, np.array(_VOLS), corr)


def generate_book(
    n_accounts: int = 1_000,
    *,
    seed: int = 0,
    median_collateral: float = 5_000.0,
) -> CreditBook:
    """A seeded book without debt under the default rules: each account (``a0000``, ...)
    holds one to three of the default collateral assets, worth about ``median_collateral`` in
    all (log-normal), at today's prices; :func:`default_market` says how they move.

    >>> book = generate_book(3, seed=2)
    >>> book.accounts, book.collateral.shape, float(book.debt.sum())
    (('a0000', 'a0001', 'a0002'), (3, 5), 0.0)
    """
    whole(n_accounts, "n_accounts", minimum=1)
    rng = np.random.default_rng(whole(seed, "seed", minimum=0))
    n = len(_ASSETS)
    holds = rng.random((n_accounts, n)) < 0.35
    holds[np.arange(n_accounts), rng.integers(0, n, n_accounts)] = True  # at least one
    weights = rng.random((n_accounts, n)) * holds
    weights /= weights.sum(axis=1, keepdims=True)
    worth = median_collateral * rng.lognormal(0.0, 0.8, n_accounts)
    prices = np.array(_PRICES)
    width = max(4, len(str(n_accounts - 1)))
    return CreditBook(
        accounts=tuple(f"a{i:0{width}d}" for i in range(n_accounts)),
        assets=_ASSETS,
        collateral=weights * worth[:, None] / prices,
        debt=np.zeros(n_accounts),
        prices=prices,
        rules=DEFAULT_RULES,
    )


def scaled_rules(
    rules: ProductRules, *, ltv_scale: float = 1.0, bonus_scale: float = 1.0
) -> ProductRules:
    """``rules`` with every LTV scaled (the maintenance LTV keeps its margin above it, capped at
    100 %) and every liquidation bonus scaled; bps rounded to whole numbers.

    >>> scaled_rules(DEFAULT_RULES, ltv_scale=0.5).rule("usdc").ltv_bps
    4500
    """
    number(ltv_scale, "ltv_scale", above=0)
    number(bonus_scale, "bonus_scale", minimum=0)
    collateral = {}
    for asset, rule in rules.collateral.items():
        ltv = min(BPS, round(rule.ltv_bps * ltv_scale))
        margin = rule.maintenance_ltv_bps - rule.ltv_bps
        collateral[asset] = dataclasses.replace(
            rule,
            ltv_bps=ltv,
            maintenance_ltv_bps=min(BPS, ltv + margin),
            liquidation_bonus_bps=min(BPS, round(rule.liquidation_bonus_bps * bonus_scale)),
        )
    return dataclasses.replace(rules, collateral=collateral)


def replay_credit(
    book: CreditBook,
    market: MarketParameters,
    *,
    span_d: int = 90,
    seed: int = 0,
    behaviour: CreditBehaviour = CreditBehaviour(),
    shocks: Mapping[int, Mapping[str, float]] | None = None,
    progress: bool = True,
) -> CreditResult:
    """Run ``book`` under its rules for ``span_d`` daily steps (module docstring), its prices
    moving as ``market`` says; the same seed gives the same prices, spends and repayments,
    whatever the rules (common random numbers for sweeps: :meth:`CreditBook.with_rules`).
    A book's debt (a collected one's) is taken as first drawn on day 0, due a term later.

    A progress bar counts the days (``progress=False`` or ``TQDM_DISABLE=1`` hides it).
    ``shocks`` adds deterministic price moves on top of the paths: ``{10: {"yobtc": -0.5}}``
    halves the BTC vault's price on day 10 (a crash to stress a setting with).
    """
    whole(span_d, "span_d", minimum=1)
    market.check_for(book)
    moves = _shock_factors(book, shocks)
    rng = np.random.default_rng(whole(seed, "seed", minimum=0))
    state = BookState.start(book, behaviour, rng)
    prices = book.prices.copy()
    rows = []
    for day in progress_bar(range(span_d), desc="credit book", unit="day", enabled=progress):
        step = correlated_prices(
            prices, market.vols, market.correlation, horizon_d=1.0, n_scenarios=1, rng=rng
        )
        prices = step[0] * moves.get(day, 1.0)
        values = state.held * prices
        row = {"day": day, **state.spend(day, values, behaviour, rng)}
        row.update(state.repay(day, behaviour, rng))
        row.update(state.liquidate(values, prices))
        rows.append(state.close_day(day, row, prices))
    daily = pl.DataFrame(rows)
    fees, interest = _total(rows, "fees"), _total(rows, "interest")
    return CreditResult(
        daily,
        CreditSummary(
            accounts=state.held.shape[0],
            span_d=span_d,
            fees=fees,
            interest=interest,
            liquidations=sum(r["liquidations"] for r in rows),
            bonus=_total(rows, "liquidation_bonus"),
            bad_debt=_total(rows, "bad_debt"),
            revenue=fees + interest,
            peak_debt=float(daily["debt"].max()),  # type: ignore[arg-type]
            end_debt=float(daily["debt"][-1]),
            declined=int(daily["declined"].sum()),
        ),
    )


def _total(rows: Sequence[Mapping[str, float]], key: str) -> float:
    """The days' ``key`` summed in day order, as the book accrues them (not compensated)."""
    total = 0.0
    for row in rows:
        total += row[key]
    return total


def _shock_factors(
    book: CreditBook, shocks: Mapping[int, Mapping[str, float]] | None
) -> dict[int, np.ndarray]:
    """Each shocked day's price factors, one per asset of the book (1 where none moves)."""
    moves = {}
    for day_, change in (shocks or {}).items():
        whole(day_, "shocks (day)", minimum=0)
        factor = np.ones(len(book.assets))
        for asset, move in change.items():
            if asset not in book.assets:
                raise ArgumentError("shocks", f"moves of {', '.join(book.assets)}", asset)
            factor[book.assets.index(asset)] = 1.0 + number(move, f"shocks[{day_}]", above=-1)
        moves[day_] = factor
    return moves


def _credit_point(
    book: CreditBook,
    market: MarketParameters,
    point: Mapping[str, float],
    span_d: int,
    seed: int,
    behaviour: CreditBehaviour,
    shocks: Mapping[int, Mapping[str, float]] | None,
) -> CreditSummary:
    scaled = book.with_rules(scaled_rules(book.rules, **point))
    run = replay_credit(
        scaled, market, span_d=span_d, seed=seed, behaviour=behaviour, shocks=shocks, progress=False
    )
    return run.summary


def credit_sweep(
    book: CreditBook,
    market: MarketParameters,
    grid: Mapping[str, Sequence[float]],
    *,
    span_d: int = 90,
    seed: int = 0,
    behaviour: CreditBehaviour = CreditBehaviour(),
    shocks: Mapping[int, Mapping[str, float]] | None = None,
    executor: Executor | None = None,
) -> pl.DataFrame:
    """Replay ``book`` at every point of ``grid`` (``ltv_scale``, ``bonus_scale``: the
    Cartesian product, factors on the book's rules) through ``executor`` (anything with
    ``submit``, as :func:`toolkit.backtest.sweep` takes: a process pool, a Dask client's
    executor; None runs in this process); one row per point (its settings and the
    :class:`CreditSummary` fields), in grid order, every point on the same seed.

    >>> book = generate_book(100, seed=3)
    >>> frame = credit_sweep(book, default_market(), {"ltv_scale": [0.5, 1.0]}, span_d=20)
    >>> frame["ltv_scale"].to_list(), frame["fees"][0] <= frame["fees"][1]
    ([0.5, 1.0], True)
    """
    unknown = sorted(set(grid) - set(CREDIT_SWEEP_KEYS))
    if not grid or unknown:
        raise ArgumentError("grid", f"a mapping of {' or '.join(CREDIT_SWEEP_KEYS)}", unknown)
    keys = list(grid)
    points = [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*grid.values())]
    for point in points:
        scaled_rules(book.rules, **point)  # fail here, not inside a worker
    market.check_for(book)
    args = (span_d, seed, behaviour, shocks)
    if executor is None:
        rows = [_credit_point(book, market, p, *args) for p in points]
    else:
        task = _credit_point
        futures = [executor.submit(task, book, market, p, *args) for p in points]
        rows = [future.result() for future in futures]
    return pl.DataFrame(
        [{**point, **row.as_dict()} for point, row in zip(points, rows, strict=True)]
    )
