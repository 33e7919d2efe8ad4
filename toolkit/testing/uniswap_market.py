"""Markets on a chain-id-1 node, at the real tokens' addresses, from Uniswap's bytecode:
something to ask "1,000 WETH → USDC" of without the internet.

- :func:`deploy_service_market`: the market the embedded swap service routes over (a
  scenario's ``[amm]`` pools on the chain, :func:`toolkit.world.evm.markets.market_for`): the
  same tokens at the same addresses, pools at the same fee tiers, prices and liquidity ranges,
  so every leg of the service's route names a pool the node holds;
- :func:`deploy_market`: a USDC/WETH/WBTC market at chosen prices (below).

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

from toolkit.amm.v3 import Pool
from toolkit.chain import default_registry
from toolkit.scenario import Scenario, load_scenario
from toolkit.testing.uniswap import Uniswap
from toolkit.world.evm.markets import MarketPool, market_for

__all__ = ["Market", "deploy_market", "deploy_service_market", "price_tick"]


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


def deploy_service_market(
    uniswap: Uniswap, scenario: Scenario | str = "default", *, chain_id: int = 1
) -> Market:
    """Deploy with ``uniswap`` the AMM market of ``scenario`` on ``chain_id`` (the one the
    embedded service's swap endpoint routes over): each token at its address, each V3 pool at
    its price with the world's liquidity ranges as positions, each V2 pair with its reserves.
    Labels as the world's (``USDC/WETH v3 5bps``).

    The position manager turns each range's amounts back into liquidity, so a pool may hold a
    few units of liquidity more than the world's: the same routes, outputs within a few wei.
    """
    market = market_for(load_scenario(scenario), chain_id)
    if market is None:
        raise ValueError(f"scenario: no AMM pools on chain {chain_id}")
    tokens = {
        symbol: uniswap.token(10**40, at=token.address) for symbol, token in market.tokens.items()
    }
    v3: dict[str, Contract] = {}
    v2: dict[str, Contract] = {}
    for spec in market.pools:
        token0, token1 = tokens[spec.token0.symbol], tokens[spec.token1.symbol]
        if spec.kind == "v2":
            pair = spec.build_v2()
            v2[spec.label] = uniswap.v2_pair(token0, token1, pair.reserve0, pair.reserve1)
            continue
        pool, _, _ = spec.build_v3()
        _enable_fee(uniswap, spec.fee, pool.tick_spacing)
        deployed = uniswap.v3_pool(token0, token1, spec.fee, pool.sqrt_price_x96)
        uniswap.mint(deployed, _ranges(spec, pool))
        v3[spec.label] = deployed
    return Market(tokens, v3, v2)


def _enable_fee(uniswap: Uniswap, fee: int, spacing: int) -> None:
    """Enable a fee tier the factory does not ship with (the 1 bps tier: Uniswap's governance
    enabled it on Ethereum with a tick spacing of 1), as the factory's owner."""
    factory = uniswap.v3_factory
    if factory.functions.feeAmountTickSpacing(fee).call() == 0:
        call = factory.functions.enableFeeAmount(fee, spacing)
        uniswap.send(factory.address, call._encode_transaction_data())


def _ranges(spec: MarketPool, pool: Pool) -> list[tuple[int, ...]]:
    """The world's positions of ``pool`` as ``(lower, upper, amount0, amount1)``: what minting
    each range's liquidity at the pool's price takes."""
    fresh = Pool(spec.fee, pool.tick_spacing, pool.sqrt_price_x96)
    return [
        (lower, upper, *fresh.mint(lower, upper, liquidity))
        for (lower, upper), liquidity in pool.positions.items()
    ]
