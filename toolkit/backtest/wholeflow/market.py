"""One chain's pools as the whole flow sees them (:class:`Market`: the oracle, depth, routes and
swaps executed on the ledger), the shocked reference path and the scaled scenario."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from toolkit.arguments import ArgumentError
from toolkit.backtest.wholeflow.settings import GENESIS, USDC_UNIT, WholeFlow
from toolkit.scenario import Scenario
from toolkit.world.evm.accounts import DEV_ACCOUNTS
from toolkit.world.evm.amm import V3PoolContract
from toolkit.world.evm.chains import genesis_copy
from toolkit.world.evm.contracts import Revert
from toolkit.world.evm.flow import BackgroundTraders, reference_path
from toolkit.world.evm.ledger import Ledger
from toolkit.world.evm.markets import market_for
from toolkit.world.evm.tokens import ERC20
from toolkit.world.swap import NoSwapRoute, find_route, mid_price, venues_of


def shock_path(settings: WholeFlow, seed: int, start: float) -> list[float]:
    base = reference_path(
        settings.steps,
        start=start,
        volatility=settings.volatility,
        step_s=settings.step_s,
        seed=seed,
    )
    begin = settings.shock_at_share * settings.span_h
    out = []
    for i, price in enumerate(base):
        hour = (i + 1) * settings.step_s / 3600
        done = min(1.0, max(0.0, (hour - begin) / settings.shock_h))
        out.append(price * (1.0 + settings.shock) ** done)
    return out


def scaled(scenario: Scenario, scale: float) -> Scenario:
    pools = tuple(
        dataclasses.replace(p, depth_usd=max(1, round(p.depth_usd * scale)))
        for p in scenario.amm.pools
    )
    return dataclasses.replace(scenario, amm=dataclasses.replace(scenario.amm, pools=pools))


def genesis_ledger(scenario: Scenario, chain_id: int) -> Ledger:
    """A fresh copy of ``chain_id``'s ledger at :data:`GENESIS`, for one run to step (copied
    from the chains built once per scenario: :func:`~toolkit.world.evm.chains.genesis_copy`)."""
    return genesis_copy(scenario, GENESIS, DEV_ACCOUNTS, lambda chains: chains.ledger(chain_id))


class Market:
    """One chain's pools: prices, depth, and swaps executed on the ledger. ``noise_usd`` is
    the median of the one background noise trade per step (scaled with the pools, so a noise
    trade moves a scaled pool as much as it would the full one)."""

    def __init__(
        self, scenario: Scenario, ledger: Ledger, seed: int, noise_usd: float = 20_000.0
    ) -> None:
        market = market_for(scenario, ledger.chain_id)
        if market is None:
            raise ArgumentError("scenario", f"AMM pools on chain {ledger.chain_id}", scenario.name)
        self.ledger = ledger
        self.weth = market.tokens["WETH"]
        self.usdc = market.tokens["USDC"]
        self.traders = BackgroundTraders(ledger, seed=seed, noise_trades=1, noise_usd=noise_usd)
        self.main = max(
            (c for c in self.traders.pools.values() if isinstance(c, V3PoolContract)),
            key=lambda c: c.spec.depth_usd if {"WETH", "USDC"} == _symbols(c) else -1,
        )

    def weth_usd(self) -> float:
        """WETH in USD at the deepest USDC/WETH pool's mid (the oracle)."""
        return self.traders.mid_price_usd(self.main.spec.label)

    def depth_usd(self, move: float = 0.02) -> float:
        """USDC the deepest pool pays for WETH sold until its price is ``move`` lower."""
        pool = self.main.pool
        weth_is_0 = self.main.spec.token0.symbol == "WETH"
        factor = (1 - move) if weth_is_0 else 1 / (1 - move)
        limit = int(pool.sqrt_price_x96 * math.sqrt(factor))
        amount0, amount1 = pool.quote(weth_is_0, 2**200, limit)
        return -(amount1 if weth_is_0 else amount0) / USDC_UNIT

    def route(self, token_in: str, token_out: str, amount: int, now: float) -> Any:
        """The route for ``amount`` (None: the pools cannot take it)."""
        try:
            return find_route(self.ledger, token_in, token_out, amount, now=GENESIS + now)
        except NoSwapRoute:
            return None

    def mid_out(self, token_in: str, token_out: str, amount: int) -> float:
        found = mid_price(venues_of(self.ledger), token_in, token_out)
        return 0.0 if found is None else float(found) * amount

    def swap(
        self, token_in: str, token_out: str, amount: int, now: float, who: str
    ) -> tuple[int, float]:
        """Route and execute ``amount`` on the ledger: ``(delivered, slippage_bps vs mid)``;
        ``(0, nan)`` when no route takes it or it reverts."""
        route = self.route(token_in, token_out, amount, now)
        if route is None:
            return 0, math.nan
        mid = self.mid_out(token_in, token_out, amount)
        run = self.ledger.direct(GENESIS + now)
        paying = run.state.contracts[token_in]
        receiving = run.state.contracts[token_out]
        assert isinstance(paying, ERC20) and isinstance(receiving, ERC20)
        paying.mint(run, who, amount)
        run.write(paying.allowances, (who, route.target.lower()), amount)
        before = receiving.balances.get(who, 0)
        try:
            run.call(who, route.target.lower(), bytes.fromhex(route.call_data[2:]), route.value)
        except Revert:
            run.rollback()
            return 0, math.nan
        out = receiving.balances.get(who, 0) - before
        return out, (1 - out / mid) * 10_000 if mid else math.nan


def _symbols(contract: Any) -> set[str]:
    return {contract.spec.token0.symbol, contract.spec.token1.symbol}
