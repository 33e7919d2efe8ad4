"""A USDC/WETH market on a chain-id-1 node, at the real tokens' addresses, from Uniswap's
bytecode: something to ask "1,000 WETH → USDC" of without the internet.

Test ERC-20s are put at the registry's USDC, WETH and WBTC addresses on Ethereum (decimals as
the real tokens: 6, 18, 8; the contracts themselves say 18, which nothing here reads), so a
route the swap service names by real addresses and fee tiers maps onto these pools. Prices:
ETH at ``eth_usd``, BTC at ``btc_usd``. Liquidity, in the shape of the real market though
smaller: a deep 0.05 % USDC/WETH pool concentrated within about ±10 %, a 0.3 % pool within
about ±25 %, a thin 1 % pool wide, a V2 pair, and WBTC pools a two-hop route can go through.
Positions are seeded (``seed``), so the market is the same on every run.

>>> round(price_tick(3000.0, 18, 6))  # USDC (token0) / WETH at $3,000 a WETH
196256
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from web3.contract import Contract

from toolkit.chain import default_registry
from toolkit.testing.uniswap import Uniswap

__all__ = ["Market", "deploy_market", "price_tick"]


def price_tick(price: float, decimals_base: int, decimals_quote: int) -> float:
    """The V3 tick of a price of ``price`` quote tokens per base token, for a pool whose
    token0 is the quote token (raw units: token1 per token0)."""
    raw = 10**decimals_base / (price * 10**decimals_quote)  # token1 (base) per token0 (quote)
    return math.log(raw) / math.log(1.0001)


@dataclass
class Market:
    """The seeded market: tokens by symbol, V3 pools and V2 pairs by label."""

    tokens: dict[str, Contract]
    v3: dict[str, Contract]
    v2: dict[str, Contract]


def _positions(
    rng: random.Random, tick: int, spacing: int, count: int, width: int, amounts: tuple[int, int]
) -> list[tuple[int, ...]]:
    centre = tick // spacing
    ranges: list[tuple[int, ...]] = []
    for _ in range(count):
        half = rng.randint(1, width)
        skew = rng.randint(-half // 2, half // 2)
        lo, hi = centre - half + skew, centre + half + skew + 1
        ranges.append((lo * spacing, hi * spacing, *amounts))
    return ranges


def _sqrt_price(tick: float) -> int:
    return int(math.sqrt(1.0001**tick) * 2**96)


def deploy_market(
    uniswap: Uniswap, *, eth_usd: float = 3000.0, btc_usd: float = 90000.0, seed: int = 9
) -> Market:
    """Deploy the market (module docstring) with ``uniswap`` on a chain-id-1 node."""
    registry = default_registry()
    tokens = {
        symbol: uniswap.token(10**40, at=registry.token(1, symbol).address)
        for symbol in ("USDC", "WETH", "WBTC")
    }
    rng = random.Random(seed)
    usd = 10**6  # one USDC
    eth = 10**18
    v3: dict[str, Contract] = {}
    tick = price_tick(eth_usd, 18, 6)  # USDC is token0 (0xA0b8… < 0xC02a…)
    for fee, spacing, count, width, dollars in (
        (500, 10, 60, 100, 1_500_000),
        (3000, 60, 40, 40, 1_000_000),
        (10000, 200, 10, 50, 500_000),
    ):
        pool = uniswap.v3_pool(tokens["USDC"], tokens["WETH"], fee, _sqrt_price(tick))
        amounts = (dollars * usd, dollars * eth // int(eth_usd))
        uniswap.mint(pool, _positions(rng, round(tick), spacing, count, width, amounts))
        v3[f"USDC/WETH {fee / 10_000:g}%"] = pool
    # WBTC (0x2260… < both): token0 of its pools
    for other, decimals, price in (("USDC", 6, btc_usd), ("WETH", 18, btc_usd / eth_usd)):
        wbtc_tick = -price_tick(price, 8, decimals)  # WBTC is token0: other per WBTC
        pool = uniswap.v3_pool(tokens["WBTC"], tokens[other], 3000, _sqrt_price(wbtc_tick))
        per = 2_000_000  # dollars a position
        if other == "WETH":
            amounts = (per * 10**8 // int(btc_usd), per * eth // int(eth_usd))
        else:
            amounts = (per * 10**8 // int(btc_usd), per * usd)
        uniswap.mint(pool, _positions(rng, round(wbtc_tick), 60, 10, 40, amounts))
        v3[f"WBTC/{other} 0.3%"] = pool
    pair = uniswap.v2_pair(tokens["WETH"], tokens["USDC"], 5000 * eth, int(5000 * eth_usd) * usd)
    return Market(tokens, v3, {"USDC/WETH v2": pair})
