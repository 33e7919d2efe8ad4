"""The AMM markets of the simulated chains: tokens and Uniswap V2/V3 pools on Ethereum and Base.

Depth is set in USD per pool and shaped like the real pools: V3 liquidity concentrated around
the price in nested ranges (a quarter of the value within ±1 %, less and less further out, none
beyond ±90 %, so a large enough trade runs a pool dry), V2 reserves of half the value on each
side. Mainnet pools are deeper than Base's. Tokens:

- USDC and WETH at the scenario's addresses (its prices when it has them: ``[prices]``), USDT and
  the chain's BTC (WBTC on Ethereum, cbBTC on Base) at their real addresses;
- two long-tail tokens of the simulation only, ``TAILA`` (a V2 pair with WETH: two hops from
  USDC) and ``TAILB`` (a 1 % V3 pool with the BTC token: three hops from USDC).

Pool and long-tail token addresses are derived from a label (``keccak`` of it), so they are
stable, plainly not real deployments.

>>> from toolkit.scenario import load_scenario
>>> market = market_for(load_scenario("default", env={}), 1)
>>> sorted(market.tokens)
['TAILA', 'TAILB', 'USDC', 'USDT', 'WBTC', 'WETH']
>>> [p.label for p in market.pools][:3]
['USDC/WETH v3 5bps', 'USDC/WETH v3 30bps', 'USDC/WETH v2']
>>> market_for(load_scenario("default", env={}), 10) is None
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
from toolkit.scenario import Scenario, Token

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

    @property
    def label(self) -> str:
        """E.g. ``USDC/WETH v3 5bps``."""
        pair = "/".join(sorted((self.token0.symbol, self.token1.symbol), key=_order))
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


def _order(symbol: str) -> int:
    return ("USDC", "WETH", "USDT", "WBTC", "cbBTC", "TAILA", "TAILB").index(symbol)


def _derived(label: str) -> str:
    return str(to_checksum_address(keccak(text=f"toolkit simulated market: {label}")[-20:]))


# (symbol, address, decimals, USD price) per chain; USDC and WETH may come from the scenario.
_TOKENS: Final[dict[int, tuple[tuple[str, str, int, str], ...]]] = {
    1: (
        ("USDC", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", 6, "1"),
        ("WETH", "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", 18, "3000"),
        ("USDT", "0xdAC17F958D2ee523a2206206994597C13D831ec7", 6, "1"),
        ("WBTC", "0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599", 8, "90000"),
        ("TAILA", _derived("1:TAILA"), 18, "0.5"),
        ("TAILB", _derived("1:TAILB"), 18, "12"),
    ),
    8453: (
        ("USDC", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", 6, "1"),
        ("WETH", "0x4200000000000000000000000000000000000006", 18, "3000"),
        ("USDT", "0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2", 6, "1"),
        ("cbBTC", "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf", 8, "90000"),
        ("TAILA", _derived("8453:TAILA"), 18, "0.5"),
        ("TAILB", _derived("8453:TAILB"), 18, "12"),
    ),
}

# (kind, token a, token b, fee, depth in USD, stable) per chain.
_POOLS: Final[dict[int, tuple[tuple[str, str, str, int, int, bool], ...]]] = {
    1: (
        ("v3", "USDC", "WETH", 500, 150_000_000, False),
        ("v3", "USDC", "WETH", 3000, 60_000_000, False),
        ("v2", "USDC", "WETH", 30, 30_000_000, False),
        ("v3", "WETH", "USDT", 3000, 50_000_000, False),
        ("v3", "USDC", "USDT", 100, 40_000_000, True),
        ("v3", "WETH", "WBTC", 3000, 150_000_000, False),
        ("v2", "WETH", "TAILA", 30, 3_000_000, False),
        ("v3", "WBTC", "TAILB", 10000, 1_000_000, False),
    ),
    8453: (
        ("v3", "USDC", "WETH", 500, 40_000_000, False),
        ("v3", "USDC", "WETH", 3000, 10_000_000, False),
        ("v2", "USDC", "WETH", 30, 5_000_000, False),
        ("v3", "WETH", "USDT", 3000, 5_000_000, False),
        ("v3", "USDC", "USDT", 100, 10_000_000, True),
        ("v3", "WETH", "cbBTC", 3000, 20_000_000, False),
        ("v2", "WETH", "TAILA", 30, 1_000_000, False),
        ("v3", "cbBTC", "TAILB", 10000, 500_000, False),
    ),
}


def market_for(scenario: Scenario, chain_id: int) -> Market | None:
    """The market of ``chain_id`` (None for a chain without one): USDC and WETH take the
    scenario's address and price where it has them. Built once per distinct input."""
    if chain_id not in _TOKENS:
        return None
    listed = tuple(t for t in scenario.tokens if t.chain == chain_id)
    return _market(chain_id, listed, scenario.pricing.prices_usd)


@functools.lru_cache(maxsize=64)
def _market(
    chain_id: int, listed: tuple[Token, ...], prices: tuple[tuple[str, Decimal], ...]
) -> Market:
    given = dict(prices)
    tokens: dict[str, MarketToken] = {}
    for symbol, address, decimals, price in _TOKENS[chain_id]:
        usd = Decimal(price)
        for token in listed:
            if token.symbol == symbol:
                address, decimals = token.address, token.decimals
                usd = given.get(symbol) or usd
        tokens[symbol] = MarketToken(symbol, str(to_checksum_address(address)), decimals, usd)
    pools = []
    for kind, a, b, fee, depth, stable in _POOLS[chain_id]:
        t0, t1 = sorted((tokens[a], tokens[b]), key=lambda t: t.address.lower())
        address = _derived(f"{chain_id}:{kind}:{t0.address}:{t1.address}:{fee}")
        pools.append(MarketPool(kind, t0, t1, fee, depth, address, stable))
    return Market(chain_id, tokens, tuple(pools))
