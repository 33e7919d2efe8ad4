"""Liquidation cascades: seized collateral sold through AMM pools moves the oracle, and the next
round of health factors sees it.

A shock leaves accounts below a health factor of 1. Each round, every such account is
liquidated exactly as :func:`toolkit.credit.liquidation` says (just enough to restore health,
the liquidator taking the asset's bonus), the liquidators sell the seized collateral into the
asset's pool (:class:`PoolMarket`, a wei-exact :class:`toolkit.amm.v3.Pool`), and the oracle
takes the pool's new price. The sale lowers the price, which can push more accounts under 1:
the cascade runs until a round liquidates nobody. Comparing it with the same shock at fixed
prices (no markets) shows what the feedback adds to liquidations and bad debt.

>>> import numpy as np
>>> market = PoolMarket.around(60_000.0, depth=2_000_000.0)
>>> round(market.price())
60000
>>> proceeds = market.sell(1.0)  # one BTC into a pool two million deep
>>> 59_000 < proceeds < 60_000, market.price() < 60_000
(True, True)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from toolkit.amm.v3 import Pool
from toolkit.amm.v3.tick_math import MAX_TICK, MIN_SQRT_RATIO, get_tick_at_sqrt_ratio
from toolkit.arguments import ArgumentError, number, whole
from toolkit.credit import liquidation
from toolkit.models.health import CreditBook

__all__ = ["PoolMarket", "liquidation_cascade"]

_Q96 = 2**96
_UNIT = 10**6  # exact liquidations work in millionths of the credit asset
_MAX_INT256 = (1 << 255) - 1


@dataclass
class PoolMarket:
    """A Uniswap V3 pool of a collateral asset (token0) against the credit asset (token1):
    the price the oracle reads, and what selling into it pays.

    >>> market = PoolMarket.around(60_000.0, depth=500_000.0)
    >>> market.move_to(50_000.0); round(market.price())
    50000
    """

    pool: Pool
    asset_decimals: int = 8
    credit_decimals: int = 6

    @classmethod
    def around(
        cls,
        price: float,
        *,
        depth: float,
        width: float = 0.5,
        fee: int = 3000,
        tick_spacing: int = 60,
        asset_decimals: int = 8,
        credit_decimals: int = 6,
    ) -> PoolMarket:
        """A pool at ``price`` (credit units per asset unit) whose liquidity, spread evenly
        over ``price · (1 ± width)``, holds ``depth`` credit units below the price, with a
        tenth of that liquidity over the full price range.

        >>> round(PoolMarket.around(2_000.0, depth=10**6, asset_decimals=18).price(), 6)
        2000.0
        """
        number(price, "price", above=0)
        number(depth, "depth", above=0)
        number(width, "width", above=0, below=1)
        raw = price * 10**credit_decimals / 10**asset_decimals
        sqrt_price = int(math.sqrt(raw) * _Q96)
        pool = Pool(fee, tick_spacing, sqrt_price)

        def tick(p: float) -> int:
            t = get_tick_at_sqrt_ratio(int(math.sqrt(p * raw) * _Q96))
            return t // tick_spacing * tick_spacing

        lower, upper = tick(1 - width), tick(1 + width) + tick_spacing
        sqrt_lower = math.sqrt((1 - width) * raw) * _Q96
        credit_raw = depth * 10**credit_decimals
        liquidity = int(credit_raw * _Q96 / (sqrt_price - sqrt_lower))
        pool.mint(lower, upper, liquidity)
        # and a tenth of that over the full range, so a sale past the range meets thin
        # liquidity (as real pools have) rather than none
        full = MAX_TICK // tick_spacing * tick_spacing
        pool.mint(-full, full, max(1, liquidity // 10))
        return cls(pool, asset_decimals, credit_decimals)

    def price(self) -> float:
        """The pool's price in credit units per asset unit."""
        raw = (self.pool.sqrt_price_x96 / _Q96) ** 2
        return raw * 10**self.asset_decimals / 10**self.credit_decimals

    def move_to(self, price: float) -> None:
        """Trade the pool to ``price`` (as arbitrage does when the market moves): a swap with
        that price as its limit."""
        raw = number(price, "price", above=0) * 10**self.credit_decimals / 10**self.asset_decimals
        target = int(math.sqrt(raw) * _Q96)
        current = self.pool.sqrt_price_x96
        if target != current:
            self.pool.swap(target < current, _MAX_INT256, target)

    def sell(self, amount: float) -> float:
        """Sell ``amount`` asset units for the credit asset (exact input); returns the proceeds.
        A sale larger than the pool's range fills what the range holds."""
        raw = int(number(amount, "amount", minimum=0) * 10**self.asset_decimals)
        if raw == 0:
            return 0.0
        _, paid = self.pool.swap(True, raw, MIN_SQRT_RATIO + 1)
        return -paid / 10**self.credit_decimals


def liquidation_cascade(
    book: CreditBook,
    *,
    markets: Mapping[str, PoolMarket] | None = None,
    shock: Mapping[str, float] | None = None,
    max_rounds: int = 50,
    min_repay: float = 1.0,
) -> pl.DataFrame:
    """Run a cascade (module docstring) and return one row per round: accounts liquidated,
    collateral value seized, debt repaid, bad debt, and each market asset's price after the
    round's sales. Round 0 is the shock itself (``shock``: asset → price change, ``-0.3``).

    ``book`` gives the holdings, debts, prices and rules; ``markets`` maps the assets sold
    through a pool (the others keep their price);
    the shock moves those pools first, as arbitrage would. A liquidation that would repay less
    than ``min_repay`` credit units is left alone (no liquidator pays gas for dust), which is
    what ends the geometric tail of small rounds.

    Parameters
    ----------
    collateral : numpy.ndarray
        (n_accounts, n_assets) collateral in asset units, assets in the order of prices.
    debt : numpy.ndarray
        Each account's debt in credit units.
    prices : mapping of str to float
        Each asset's price in credit units before the shock.
    markets : mapping of str to PoolMarket, optional
        The assets sold through a pool; the others keep their price.
    shock : mapping of str to float, optional
        Asset to relative price change (-0.3: down 30 %).
    max_rounds : int
        The most rounds run.
    min_repay : float
        The smallest repayment a liquidator makes (credit units).
    rules : ProductRules
        The credit product's LTVs and liquidation bonus.

    Returns
    -------
    polars.DataFrame
        One row per round (0: the shock): liquidated, collateral seized, debt repaid, bad debt
        and each market asset's price.

    Examples
    --------
    >>> import numpy as np
    >>> book = CreditBook(("a", "b", "c"), ("usdc", "yobtc"),
    ...     np.array([[0.0, 0.02], [0.0, 0.05], [1_000.0, 0.0]]),
    ...     np.array([780.0, 2_000.0, 500.0]), np.array([1.0, 60_000.0]))
    >>> rounds = liquidation_cascade(book, shock={"yobtc": -0.1},
    ...     markets={"yobtc": PoolMarket.around(60_000.0, depth=50_000.0)})
    >>> rounds["liquidated"].to_list()[:2], rounds.height > 2
    ([0, 2], True)
    """
    assets: Sequence[str] = list(book.assets)
    rules = book.rules
    held = book.collateral.copy()
    owed = book.debt.copy()
    whole(max_rounds, "max_rounds", minimum=1)
    number(min_repay, "min_repay", minimum=0)
    unknown = sorted((set(markets or {}) | set(shock or {})) - set(assets))
    if unknown:
        raise ArgumentError("markets/shock", f"keyed by the assets {', '.join(assets)}", unknown)
    price = book.prices.copy()
    for asset, move in (shock or {}).items():
        price[assets.index(asset)] *= 1.0 + number(move, f"shock[{asset!r}]", above=-1)
    for asset, market in (markets or {}).items():
        market.move_to(price[assets.index(asset)])  # the pool moves with the market
    m = book.maintenance_ltv
    rows = [_row(0, 0, 0.0, 0.0, 0.0, assets, price)]
    for round_ in range(1, max_rounds + 1):
        weak = np.flatnonzero((owed > 0) & ((held * price) @ m < owed))
        if weak.size == 0:
            break
        sold = np.zeros(len(assets))
        seized_value = repaid = bad = 0.0
        liquidated = 0
        for i in weak:
            values = {
                a: int(held[i, j] * price[j] * _UNIT) for j, a in enumerate(assets) if held[i, j]
            }
            liq = liquidation(values, int(owed[i] * _UNIT), rules=rules)
            if liq.repaid < min_repay * _UNIT and not liq.bad_debt:
                continue
            liquidated += 1
            for asset, value in liq.seized.items():
                j = assets.index(asset)
                units = min(held[i, j], value / _UNIT / price[j])
                held[i, j] -= units
                sold[j] += units
            seized_value += sum(liq.seized.values()) / _UNIT
            repaid += liq.repaid / _UNIT
            owed[i] -= liq.repaid / _UNIT
            if liq.bad_debt:
                bad += liq.bad_debt / _UNIT
                owed[i] = 0.0
        if liquidated == 0:
            break
        for asset, market in (markets or {}).items():
            j = assets.index(asset)
            market.sell(sold[j])
            price[j] = market.price()
        rows.append(_row(round_, liquidated, seized_value, repaid, bad, assets, price))
    return pl.DataFrame(rows)


def _row(
    round_: int,
    liquidated: int,
    seized: float,
    repaid: float,
    bad: float,
    assets: Sequence[str],
    price: np.ndarray,
) -> dict[str, float | int]:
    row: dict[str, float | int] = {
        "round": round_,
        "liquidated": liquidated,
        "seized_value": seized,
        "repaid": repaid,
        "bad_debt": bad,
    }
    row.update({f"price_{a}": float(p) for a, p in zip(assets, price, strict=True)})
    return row
