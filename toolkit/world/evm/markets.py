"""The AMM markets of the simulated chains, built from the scenario's ``[amm]`` section
(:mod:`toolkit.scenario.amm`): tokens and Uniswap V2/V3 pools per chain.

Depth is set in USD per pool (``depth_usd``) and shaped like the real pools: V3 liquidity
concentrated around the price in nested ranges (a quarter of the value within ±1 %, less and
less further out, none beyond ±90 %, so a large enough trade runs a pool dry), V2 reserves of
half the value on each side; ``shape = "stable"`` pools sit within ±10 %. The tokens are the
scenario's priced ``[[tokens]]`` of the chain and its ``[[amm.tokens]]``. Pool addresses are
derived from a label (``keccak`` of chain, kind, tokens and fee), so they are stable, plainly
not real deployments.

>>> from toolkit.scenario import load_scenario
>>> market = market_for(load_scenario("default"), 1)
>>> sorted(market.tokens)
['TAILA', 'TAILB', 'USDC', 'USDT', 'WBTC', 'WETH']
>>> [p.label for p in market.pools][:3]
['USDC/WETH v3 5bps', 'USDC/WETH v3 30bps', 'USDC/WETH v2']
>>> market_for(load_scenario("default"), 10) is None
True
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import Final

from eth_utils import keccak, to_checksum_address

from toolkit.amm.v2 import Pair
from toolkit.amm.v3 import Pool
from toolkit.amm.v3.tick_math import MAX_TICK, MIN_TICK
from toolkit.scenario import Scenario
from toolkit.scenario.amm import AmmPool

__all__ = ["MARKET_CHAINS", "Market", "MarketPool", "MarketToken", "market_for"]

#: Chain id → the swap API's network name.
MARKET_CHAINS: Final = {1: "mainnet", 8453: "base"}

#: V3 fee (pips) → tick spacing, as the factory enables them.
_SPACING: Final = {100: 1, 500: 10, 3000: 60, 10000: 200}
#: V3 liquidity shape: (half-width of the price range, share of the pool's value).
_SHAPE: Final = ((0.01, 0.25), (0.03, 0.25), (0.10, 0.2), (0.30, 0.15), (0.90, 0.15))
#: Stable pairs sit closer together.
_STABLE_SHAPE: Final = ((0.001, 0.4), (0.005, 0.3), (0.02, 0.2), (0.10, 0.1))


@dataclass(frozen=True)
class MarketToken:
    """A token of a market: symbol, address (checksummed), decimals and USD price."""

    symbol: str
    address: str
    decimals: int
    price_usd: Decimal


@dataclass(frozen=True)
class MarketPool:
    """A pool of a market: ``kind`` ``v2`` or ``v3``, its tokens (``token0`` has the lower
    address, as the factories order them), its fee (pips for V3, bps for V2) and value."""

    kind: str
    token0: MarketToken
    token1: MarketToken
    fee: int
    depth_usd: int
    address: str
    stable: bool = False
    #: The tokens' symbols in the scenario's order (for the label).
    names: tuple[str, str] = ("", "")

    @property
    def label(self) -> str:
        """E.g. ``USDC/WETH v3 5bps``."""
        names = self.names if all(self.names) else (self.token0.symbol, self.token1.symbol)
        pair = "/".join(names)
        if self.kind == "v2":
            return f"{pair} v2"
        return f"{pair} v3 {self.fee / 100:g}bps"

    def mid_price(self) -> Decimal:
        """token1 per token0, in smallest units, at the tokens' USD prices."""
        ratio = self.token0.price_usd / self.token1.price_usd
        return ratio * Decimal(10) ** (self.token1.decimals - self.token0.decimals)

    def build_v2(self) -> Pair:
        """A V2 pair holding half the value on each side."""
        half = Decimal(self.depth_usd) / 2
        reserve0 = int(half / self.token0.price_usd * 10**self.token0.decimals)
        reserve1 = int(half / self.token1.price_usd * 10**self.token1.decimals)
        return Pair(reserve0, reserve1, self.fee)

    def build_v3(self) -> tuple[Pool, int, int]:
        """A V3 pool at the mid price with its nested ranges minted; the pool and the
        ``(amount0, amount1)`` the positions put in."""
        price = self.mid_price()
        spacing = _SPACING[self.fee]
        with localcontext() as ctx:
            ctx.prec = 60
            sqrt_price_x96 = int(price.sqrt() * (1 << 96))
        pool = Pool(self.fee, spacing, sqrt_price_x96)
        p = float(price)
        usd_per_unit1 = float(self.token1.price_usd) / 10**self.token1.decimals
        total0 = total1 = 0
        lowest = -(-MIN_TICK // spacing) * spacing
        highest = MAX_TICK // spacing * spacing
        for width, share in _STABLE_SHAPE if self.stable else _SHAPE:
            lower = max(lowest, math.floor(math.log(p * (1 - width), 1.0001) / spacing) * spacing)
            upper = min(highest, math.ceil(math.log(p * (1 + width), 1.0001) / spacing) * spacing)
            sa, sb, s = 1.0001 ** (lower / 2), 1.0001 ** (upper / 2), math.sqrt(p)
            # Value of one unit of liquidity, in token1 smallest units, then in USD.
            per_l = (1 / s - 1 / sb) * p + (s - sa)
            liquidity = int(self.depth_usd * share / (per_l * usd_per_unit1))
            amount0, amount1 = pool.mint(lower, upper, liquidity)
            total0 += amount0
            total1 += amount1
        return pool, total0, total1


@dataclass(frozen=True)
class Market:
    """The tokens (by symbol) and pools of one chain."""

    chain_id: int
    tokens: dict[str, MarketToken]
    pools: tuple[MarketPool, ...]

    @property
    def weth(self) -> MarketToken:
        """The wrapped native coin."""
        return self.tokens["WETH"]


def _derived(label: str) -> str:
    return str(to_checksum_address(keccak(text=f"toolkit simulated market: {label}")[-20:]))


def market_for(scenario: Scenario, chain_id: int) -> Market | None:
    """The market of ``chain_id`` from the scenario's ``[amm]`` (None: no pool on the chain).
    Built once per distinct input."""
    pools = tuple(p for p in scenario.amm.pools if p.chain == chain_id)
    if not pools:
        return None
    listed = tuple(
        (t.symbol, t.address, t.decimals, scenario.pricing.price_usd(t.symbol))
        for t in scenario.tokens
        if t.chain == chain_id
    )
    extra = tuple(
        (t.symbol, t.address, t.decimals, t.price_usd)
        for t in scenario.amm.tokens
        if t.chain == chain_id
    )
    return _market(chain_id, listed + extra, pools)


@functools.lru_cache(maxsize=64)
def _market(
    chain_id: int,
    tokens_in: tuple[tuple[str, str, int, Decimal | None], ...],
    pools_in: tuple[AmmPool, ...],
) -> Market:
    tokens = {
        symbol: MarketToken(symbol, str(to_checksum_address(address)), decimals, price)
        for symbol, address, decimals, price in tokens_in
        if price is not None
    }
    pools = []
    for spec in pools_in:
        a, b = spec.tokens
        t0, t1 = sorted((tokens[a], tokens[b]), key=lambda t: t.address.lower())
        address = _derived(f"{chain_id}:{spec.kind}:{t0.address}:{t1.address}:{spec.fee}")
        stable = spec.shape == "stable"
        pools.append(
            MarketPool(spec.kind, t0, t1, spec.fee, spec.depth_usd, address, stable, (a, b))
        )
    return Market(chain_id, tokens, tuple(pools))
