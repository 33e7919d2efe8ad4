"""The inputs of the route models (:mod:`toolkit.models.routes`), collected from an embedded
service: routes from ``GET /swap/{network}/v1/route`` (:class:`~toolkit.client.SwapClient`),
intents quotes from ``GET /partner-intents/rfq`` (:class:`~toolkit.client.ServiceClient`), and
the routes' calldata executed on the simulated chains after background flow
(:class:`~toolkit.world.evm.flow.BackgroundTraders`) has moved the pools.

:class:`RouteLab` owns an embedded service on a :class:`~toolkit.clock.VirtualClock` (time moves
only when the lab moves it) and gives frames, nothing else:

- :meth:`~RouteLab.venues`: the network's pools as symbol-named venues, for
  :func:`~toolkit.models.splits.route_comparison`;
- :meth:`~RouteLab.observe`: pairs × USD sizes × networks through the endpoint, with the pools'
  mid output and the gas in USD (:func:`~toolkit.models.routes.impact_curves`);
- :meth:`~RouteLab.delay_trials`: routes quoted, then executed ``delays`` seconds later while
  the pools move (:func:`~toolkit.models.slippage.delay_outcomes`);
- :meth:`~RouteLab.strategy_legs`: USDC on one chain into WETH on another, intents order then
  swap against swap then intents order (:func:`~toolkit.models.routes.firm_vs_indicative`).

>>> lab = RouteLab(seed=1)
>>> frame = lab.observe([("USDC", "WETH")], [1_000.0], networks=["base"])
>>> frame.select("network", "pair", "status").row(0)
('base', 'USDC/WETH', 200)
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from decimal import Decimal
from typing import Final, cast

import polars as pl

from toolkit.amm.routing import Venue
from toolkit.arguments import ArgumentError, number, whole
from toolkit.backtest.legs import intents_leg, intents_quote, swap_leg
from toolkit.backtest.stale import TRIAL_SCHEMA, TrialPlan, execute_route
from toolkit.client import (
    EmbeddedService,
    NotFound,
    ServiceClient,
    SwapClient,
)
from toolkit.clock import VirtualClock
from toolkit.models.routes import LEG_SCHEMA
from toolkit.resources import RouteResult
from toolkit.scenario import load_scenario
from toolkit.server.service import Service
from toolkit.world.evm.amm import V2PairContract, V3PoolContract
from toolkit.world.evm.flow import BackgroundTraders, reference_path
from toolkit.world.evm.ledger import Ledger
from toolkit.world.evm.markets import MarketToken, market_for
from toolkit.world.swap import mid_price, venues_of

__all__ = ["NETWORK_CHAINS", "RouteLab"]

#: The swap API's networks and their chains.
NETWORK_CHAINS: Final = {"mainnet": 1, "base": 8453}
#: Where the lab's clock starts (any fixed time: the lab is deterministic for a seed).
START: Final = 1_760_000_000.0


class RouteLab:
    """Route requests, intents quotes and stale-route executions on one embedded service (module
    docstring). ``scenario`` (default ``default``) must give AMM pools on mainnet and Base;
    ``seed`` seeds the background flow."""

    def __init__(self, scenario: str = "default", *, seed: int = 0) -> None:
        self.seed = whole(seed, "seed", minimum=0)
        self.clock = VirtualClock(START)
        self.service = EmbeddedService(load_scenario(scenario), clock=self.clock)
        self.swap = SwapClient(embedded=self.service, env={})
        self.intents = ServiceClient(embedded=self.service, env={})
        state = cast(Service, self.service.app.state.service)  # type: ignore[attr-defined]
        self.state = state
        scenario_ = state.scenario
        self.markets = {}
        for network, chain_id in NETWORK_CHAINS.items():
            market = market_for(scenario_, chain_id)
            if market is None:
                raise ArgumentError("scenario", "AMM pools on mainnet and Base", scenario)
            self.markets[network] = market

    # -- helpers ------------------------------------------------------------------------------

    def ledger(self, network: str) -> Ledger:
        """The simulated chain of ``network``."""
        if network not in NETWORK_CHAINS:
            raise ArgumentError("network", "mainnet or base", network)
        return self.state.chains.ledger(NETWORK_CHAINS[network])

    def token(self, network: str, symbol: str) -> MarketToken:
        """A token of the network's market by symbol."""
        tokens = self.markets[network].tokens
        if symbol not in tokens:
            raise ArgumentError("symbol", f"one of {', '.join(sorted(tokens))}", symbol)
        return tokens[symbol]

    def _mid(self, network: str, a: str, b: str) -> Decimal:
        """``b`` per ``a`` in smallest units at the pools' mid prices."""
        found = mid_price(
            venues_of(self.ledger(network)),
            self.token(network, a).address.lower(),
            self.token(network, b).address.lower(),
        )
        if found is None:
            raise ArgumentError("pair", f"tokens joined by pools on {network}", (a, b))
        return found

    def weth_usd(self, network: str) -> float:
        """WETH in USD at the network's USDC/WETH mid price."""
        weth, usdc = self.token(network, "WETH"), self.token(network, "USDC")
        return float(self._mid(network, "WETH", "USDC")) * 10 ** (weth.decimals - usdc.decimals)

    def usd_value(self, network: str, symbol: str, amount: int) -> float:
        """What ``amount`` (smallest units) of ``symbol`` is worth in USD at mid prices (the
        stablecoins at 1 USD)."""
        token = self.token(network, symbol)
        if symbol in ("USDC", "USDT"):
            return amount / 10**token.decimals
        usdc = self.token(network, "USDC")
        return float(amount * self._mid(network, symbol, "USDC")) / 10**usdc.decimals

    def units(self, network: str, symbol: str, usd: float) -> int:
        """The smallest units of ``symbol`` worth ``usd`` at mid prices."""
        one = 10 ** self.token(network, symbol).decimals
        return int(usd / self.usd_value(network, symbol, one) * one)

    # -- pools --------------------------------------------------------------------------------

    def venues(self, network: str) -> list[Venue]:
        """The network's pools as venues named by their labels (``USDC/WETH v3 5bps``), tokens
        by symbol; copies, so the models never touch the chain."""
        out: list[Venue] = []
        for contract in self.ledger(network).state.contracts.values():
            if isinstance(contract, V2PairContract):
                spec = contract.spec
                pair = copy.deepcopy(contract.pair)
                out.append(Venue.v2(spec.label, spec.token0.symbol, spec.token1.symbol, pair))
            elif isinstance(contract, V3PoolContract):
                spec = contract.spec
                pool = copy.deepcopy(contract.pool)
                out.append(Venue.v3(spec.label, spec.token0.symbol, spec.token1.symbol, pool))
        return out

    # -- the endpoint -------------------------------------------------------------------------

    def observe(
        self,
        pairs: Sequence[tuple[str, str]],
        sizes_usd: Sequence[float],
        *,
        networks: Sequence[str] = ("mainnet", "base"),
    ) -> pl.DataFrame:
        """One route request per network × pair × size: ``network``, ``pair``,
        ``amount_in_usd``, ``amount_in``, ``status`` (200 or 404), ``amount_out``, ``mid_out``
        (the input at the pools' mid prices), ``gas_used`` and ``gas_usd`` (at the chain's base
        fee and the WETH mid price)."""
        rows = []
        for network in networks:
            ledger = self.ledger(network)
            eth_usd = self.weth_usd(network)
            for a, b in pairs:
                token_in, token_out = self.token(network, a), self.token(network, b)
                mid = self._mid(network, a, b)
                for usd in sizes_usd:
                    amount = self.units(network, a, number(usd, "sizes_usd[]", above=0))
                    row: dict[str, object] = {
                        "network": network,
                        "pair": f"{a}/{b}",
                        "amount_in_usd": float(usd),
                        "amount_in": amount,
                        "mid_out": float(amount * mid),
                    }
                    try:
                        route = self.swap.route(
                            network,
                            amount_in=amount,
                            token_in=token_in.address,
                            token_out=token_out.address,
                        )
                    except NotFound:
                        rows.append({**row, "status": 404})
                        continue
                    gas_usd = route.gas_used * ledger.base_fee / 1e18 * eth_usd
                    rows.append(
                        {
                            **row,
                            "status": 200,
                            "amount_out": route.amount_out_int,
                            "gas_used": route.gas_used,
                            "gas_usd": gas_usd,
                        }
                    )
        schema = {
            "network": pl.String,
            "pair": pl.String,
            "amount_in_usd": pl.Float64,
            "amount_in": pl.Int128,
            "status": pl.Int64,
            "amount_out": pl.Int128,
            "mid_out": pl.Float64,
            "gas_used": pl.Int64,
            "gas_usd": pl.Float64,
        }
        return pl.DataFrame(rows, schema=schema)

    # -- stale routes -------------------------------------------------------------------------

    def delay_trials(
        self,
        network: str,
        pair: tuple[str, str],
        size_usd: float,
        delays_s: Sequence[float],
        *,
        trials: int = 20,
        noise_usd: float = 50_000.0,
        noise_trades: int = 2,
        volatility: float = 0.6,
        stride_blocks: int | None = None,
    ) -> pl.DataFrame:
        """``trials`` routes for ``size_usd`` of ``pair`` on ``network``, each quoted by the
        endpoint and executed (its calldata, with no minimum) after each of ``delays_s``
        seconds while :class:`~toolkit.world.evm.flow.BackgroundTraders` trade every block:
        arbitrage to a reference WETH price path (annual ``volatility``) and ``noise_trades``
        noise trades of about ``noise_usd`` a block. The pools keep moving from one trial to the
        next. A new trial is quoted every ``stride_blocks`` blocks (default: the longest delay,
        so trials do not overlap); a shorter stride lets trials overlap, many more for the same
        simulated time, and ``cluster`` numbers the trials quoted within one longest delay of
        each other (their executions see the same moves: :func:`toolkit.models.delay_outcomes`
        clusters its intervals by it). Columns: ``network``, ``pair``, ``size_usd``, ``trial``,
        ``cluster``, ``delay_s``, ``quoted_out`` and ``executed_out`` (null when the route
        reverted anyway)."""
        whole(trials, "trials", minimum=1)
        if not delays_s:
            raise ArgumentError("delays_s", "at least one delay", delays_s)
        ledger = self.ledger(network)
        block = ledger.block_time_s
        plan = TrialPlan.of(delays_s, block, trials, stride_blocks)
        token_in, token_out = self.token(network, pair[0]), self.token(network, pair[1])
        amount = self.units(network, pair[0], number(size_usd, "size_usd", above=0))
        traders = BackgroundTraders(
            ledger, seed=self.seed, noise_usd=noise_usd, noise_trades=noise_trades
        )
        path = reference_path(
            plan.blocks,
            start=self.weth_usd(network),
            volatility=volatility,
            step_s=block,
            seed=self.seed,
        )
        prices = iter(path)

        def move() -> float:
            now = self.clock.advance(block)
            traders.step(now, next(prices))
            return now

        def quote() -> RouteResult:
            return self.swap.route(
                network,
                amount_in=amount,
                token_in=token_in.address,
                token_out=token_out.address,
                slippage_bps=10_000,
            )

        def execute(route: RouteResult, now: float) -> int | None:
            return execute_route(ledger, route, token_in, token_out, amount, now)

        label = {"network": network, "pair": "/".join(pair), "size_usd": float(size_usd)}
        rows = [{**label, **row} for row in plan.run(quote, move, execute)]
        return pl.DataFrame(rows, schema=TRIAL_SCHEMA)

    # -- firm against indicative ------------------------------------------------------------------

    def strategy_legs(
        self,
        sizes_usd: Sequence[float],
        *,
        source: str = "mainnet",
        destination: str = "base",
        swap_delay_s: float | None = None,
    ) -> pl.DataFrame:
        """USDC on ``source`` into WETH on ``destination``, two ways, per size: ``intents then
        swap`` (an intents order of USDC to ``destination``, its quote firm, then a route of
        the USDC received into WETH there, quoted now and executed once the order is filled:
        the quote's ``eta`` later) and ``swap then intents`` (a route of USDC into WETH on
        ``source``, executed ``swap_delay_s`` later, one block by default, then an intents
        order of that WETH to ``destination``). One row per leg as
        :func:`~toolkit.models.routes.firm_vs_indicative` takes them; values in USD, USDC at
        1 and WETH, on either chain, at the destination's USDC/WETH mid price (the asset the
        order ends in, priced where it ends), so the two strategies are valued alike; a
        refused intents quote has no output."""
        src, dst = self.ledger(source), self.ledger(destination)
        delay = src.block_time_s if swap_delay_s is None else number(swap_delay_s, "swap_delay_s")
        weth_usd = self.weth_usd(destination) / 10 ** self.token(destination, "WETH").decimals
        rows: list[dict[str, object]] = []
        for usd in sizes_usd:
            size = number(usd, "sizes_usd[]", above=0)
            usdc_in = self.units(source, "USDC", size)
            # 1. intents order USDC -> USDC on the destination, then swap there
            usdc = self.token(destination, "USDC").address
            quote = intents_quote(self.intents, src.chain_id, dst.chain_id, usdc_in, usdc)
            base = {"strategy": "intents then swap", "size_usd": size}
            out = None if quote is None else self.usd_value(destination, "USDC", quote[0])
            rows.append(intents_leg(base, 1, source, size, out))
            if quote is not None:
                received, eta = quote
                rows.append(self._swap_leg(base, 2, destination, received, float(eta), weth_usd))
            # 2. swap USDC -> WETH on the source, then intents order of the WETH
            second = {"strategy": "swap then intents", "size_usd": size}
            swap = self._swap_leg(second, 1, source, usdc_in, delay, weth_usd)
            rows.append(swap)
            weth = cast(int, swap.pop("_amount_out"))
            weth_dst = self.token(destination, "WETH").address
            moved = intents_quote(self.intents, src.chain_id, dst.chain_id, weth, weth_dst)
            out = None if moved is None else moved[0] * weth_usd
            rows.append(intents_leg(second, 2, source, weth * weth_usd, out))
        for row in rows:
            row.pop("_amount_out", None)
        return pl.DataFrame(rows, schema=LEG_SCHEMA)

    def _swap_leg(
        self,
        base: dict[str, object],
        step: int,
        network: str,
        usdc: int,
        delay: float,
        weth_usd: float,
    ) -> dict[str, object]:
        """A route of ``usdc`` into WETH on ``network`` as a leg (WETH at ``weth_usd`` a wei)."""
        weth, usdc_token = self.token(network, "WETH"), self.token(network, "USDC")
        route = self.swap.route(
            network, amount_in=usdc, token_in=usdc_token.address, token_out=weth.address
        )
        gas_usd = route.gas_used * self.ledger(network).base_fee / 1e18 * self.weth_usd(network)
        value_in = self.usd_value(network, "USDC", usdc)
        return swap_leg(
            base, step, network, delay, value_in, route.amount_out_int, weth_usd, gas_usd
        )

    def close(self) -> None:
        """Close the clients and the embedded service."""
        self.swap.close()
        self.intents.close()
        self.service.close()
