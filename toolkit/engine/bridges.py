"""The bridge model of rebalancing transfers: per token and route, a latency and a cost.

Each route (token, source chain, destination chain) takes the scenario's ``[[bridges]]`` entry
that models it (:meth:`toolkit.scenario.Scenario.bridge`): a latency, log-normal by its median
and 95th percentile (``ln X ~ N(ln median, sigma)`` with ``sigma = ln(p95 / median) / z95``;
equal figures make it fixed), a fee of ``fee_bps`` of the amount (rounded up, kept by the
bridge, deducted from what arrives) and a fixed gas cost in USD on the source chain (the
entry's ``gas_usd``, else the source chain's ``fill_cost_usd``). Latencies are drawn from one
stream seeded by the engine's seed, in the order transfers are sent, so a seeded engine sends
and lands the same transfers at the same instants on every run.

>>> from toolkit.scenario import load_scenario
>>> bridges = Bridges(load_scenario("default"), seed=1)
>>> bridges.fee("USDC", 1, 8453, 1_000_000_000), bridges.gross("USDC", 1, 8453, 999_900_000)
(100000, 1000000000)
>>> 5 < bridges.latency("USDC", 1, 8453) < 60
True
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import NamedTuple

from toolkit.scenario import Scenario

__all__ = ["BridgeRoute", "Bridges"]

#: The standard normal's 95th percentile: ``p95 = median * exp(Z95 * sigma)``.
Z95 = 1.6448536269514722
_BPS = 10_000


class BridgeRoute(NamedTuple):
    """One route's bridge, ready to use: name, the median latency (s), log-normal ``mu`` and
    ``sigma`` (sigma 0: fixed at the median), the fee as an exact fraction of the amount, and
    the gas in USD."""

    name: str
    median_s: float
    mu: float
    sigma: float
    fee_share: Fraction
    gas_usd: float


class Bridges:
    """Every route a rebalancing transfer may take in ``scenario``, and the latency stream."""

    def __init__(self, scenario: Scenario, seed: int) -> None:
        # A string seed is hashed the same way on every run and machine (random.seed v2).
        self._rng = random.Random(f"toolkit bridges {seed}")
        self._routes: dict[tuple[str, int, int], BridgeRoute] = {}
        chains = {c.id: c for c in scenario.chains}
        held: dict[str, list[int]] = {}
        for token in scenario.tokens:
            held.setdefault(token.symbol, []).append(token.chain)
        for symbol, where in held.items():
            for src in where:
                for dst in where:
                    bridge = scenario.bridge(symbol, src, dst) if src != dst else None
                    if bridge is None:
                        continue
                    median, p95 = float(bridge.latency_s.median), float(bridge.latency_s.p95)
                    gas = (
                        bridge.gas_usd if bridge.gas_usd is not None else chains[src].fill_cost_usd
                    )
                    self._routes[(symbol, src, dst)] = BridgeRoute(
                        bridge.name,
                        median,
                        math.log(median),
                        math.log(p95 / median) / Z95,
                        Fraction(bridge.fee_bps) / _BPS,
                        float(gas),
                    )

    def route(self, symbol: str, src: int, dst: int) -> BridgeRoute:
        """The bridge of one route; KeyError names a route no ``[[bridges]]`` entry models."""
        try:
            return self._routes[(symbol, src, dst)]
        except KeyError:
            raise KeyError(f"no bridge for {symbol} from chain {src} to chain {dst}") from None

    def fee(self, symbol: str, src: int, dst: int, amount: int) -> int:
        """The bridge's fee on ``amount`` sent (rounded up: the bridge keeps the remainder)."""
        share = self.route(symbol, src, dst).fee_share
        return -(-amount * share.numerator // share.denominator)

    def gross(self, symbol: str, src: int, dst: int, arriving: int) -> int:
        """The smallest amount to send so that at least ``arriving`` arrives."""
        share = self.route(symbol, src, dst).fee_share
        if arriving <= 0:
            return 0
        keep = share.denominator - share.numerator  # what arrives per denominator sent
        amount = -(-arriving * share.denominator // keep)
        # The fee rounds up, so the inverse above may fall one unit short.
        while amount - self.fee(symbol, src, dst, amount) < arriving:
            amount += 1
        return amount

    def latency(self, symbol: str, src: int, dst: int) -> float:
        """A latency draw for one transfer on the route, in seconds (from the seeded stream)."""
        route = self.route(symbol, src, dst)
        if route.sigma == 0:
            return route.median_s
        return self._rng.lognormvariate(route.mu, route.sigma)
