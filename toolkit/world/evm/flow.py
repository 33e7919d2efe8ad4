"""Background flow on the simulated AMM pools for backtests: a reference price path for WETH
and traders who follow it.

- :func:`reference_path`: a seeded geometric Brownian motion of the WETH price in USD, one
  value per step (deterministic for a seed).
- :class:`BackgroundTraders`: at each :meth:`~BackgroundTraders.step`, arbitrageurs trade every
  WETH/stablecoin pool more than 1 bp away from the reference price to it (a V3 swap with the
  reference as its price limit; a V2 swap of the input that brings the reserves' ratio there,
  fee aside), then noise traders make
  ``noise_trades`` swaps of random direction on random pools, log-normal sizes around
  ``noise_usd``. Trades are the pools' own swaps (wei-exact, ``Swap``/``Sync`` events emitted in
  the execution) applied directly to the ledger's state, as set-up writes are: they move the
  pools between two route requests the way other users' transactions would, without
  occupying the simulated blocks. The traders' tokens are minted as needed (deep pockets).

>>> from toolkit.scenario import load_scenario
>>> from toolkit.world.evm import Chains
>>> ledger = Chains(load_scenario("default"), genesis=1_760_000_000.0).ledger(1)
>>> path = reference_path(3, start=3000.0, seed=7)
>>> traders = BackgroundTraders(ledger, seed=7)
>>> for i, price in enumerate(path):
...     _ = traders.step(1_760_000_000.0 + 12 * i, price)
>>> abs(traders.mid_price_usd("USDC/WETH v3 5bps") / path[-1] - 1) < 0.001
True
"""

from __future__ import annotations

import math
import random
from typing import Final

from toolkit.amm import AmmError
from toolkit.amm.v2 import Pair
from toolkit.amm.v3.tick_math import MAX_SQRT_RATIO, MIN_SQRT_RATIO
from toolkit.arguments import number, whole
from toolkit.world.evm.amm import V2PairContract, V3PoolContract, transfer_token
from toolkit.world.evm.contracts import Execution, Revert
from toolkit.world.evm.ledger import Ledger
from toolkit.world.evm.markets import MarketPool
from toolkit.world.evm.tokens import ERC20

__all__ = ["TRADER", "BackgroundTraders", "reference_path"]

#: The background traders' address.
TRADER: Final = "0x" + "7a" * 20
_STABLES: Final = frozenset({"USDC", "USDT"})
_SECONDS_PER_YEAR: Final = 365 * 24 * 3600
#: Arbitrageurs leave a pool alone within this relative distance of the reference (1 bp).
_TOLERANCE: Final = 1e-4


def reference_path(
    steps: int,
    *,
    start: float = 3000.0,
    volatility: float = 0.6,
    drift: float = 0.0,
    step_s: float = 12.0,
    seed: int = 0,
) -> list[float]:
    """``steps`` WETH prices (USD) of a geometric Brownian motion: annual ``volatility`` and
    ``drift``, one value per ``step_s``; the first is ``start`` moved by one step.

    >>> reference_path(2, seed=1) == reference_path(2, seed=1)
    True
    """
    whole(steps, "steps", minimum=1)
    number(start, "start", above=0)
    number(volatility, "volatility", minimum=0)
    number(step_s, "step_s", above=0)
    rng = random.Random(seed)
    dt = step_s / _SECONDS_PER_YEAR
    price, out = float(start), []
    for _ in range(steps):
        shock = rng.gauss(0.0, 1.0)
        price *= math.exp((drift - volatility**2 / 2) * dt + volatility * math.sqrt(dt) * shock)
        out.append(price)
    return out


class BackgroundTraders:
    """Arbitrage to a reference WETH price and noise trades on a ledger's pools (module
    docstring)."""

    def __init__(
        self,
        ledger: Ledger,
        *,
        seed: int = 0,
        noise_usd: float = 50_000.0,
        noise_trades: int = 2,
    ) -> None:
        number(noise_usd, "noise_usd", minimum=0)
        whole(noise_trades, "noise_trades", minimum=0)
        self.ledger = ledger
        self.rng = random.Random(seed)
        self.noise_usd = float(noise_usd)
        self.noise_trades = noise_trades
        self.pools: dict[str, V2PairContract | V3PoolContract] = {
            c.spec.label: c
            for c in ledger.state.contracts.values()
            if isinstance(c, V2PairContract | V3PoolContract)
        }
        if not self.pools:
            raise ValueError(f"ledger: chain {ledger.chain_id} has no AMM pools")

    # -- prices ----------------------------------------------------------------------------

    def mid_price_usd(self, label: str) -> float:
        """The USD price of the non-stable token of a stablecoin pool, at the pool's mid."""
        contract = self.pools[label]
        spec = contract.spec
        raw = self._raw_price(contract)  # token1 per token0, smallest units
        scale = 10 ** (spec.token0.decimals - spec.token1.decimals)
        token1_per_token0 = raw * scale
        if spec.token1.symbol in _STABLES:
            return token1_per_token0
        return 1 / token1_per_token0

    @staticmethod
    def _raw_price(contract: V2PairContract | V3PoolContract) -> float:
        if isinstance(contract, V2PairContract):
            return contract.reserves["1"] / contract.reserves["0"]
        return (contract.pool.sqrt_price_x96 / 2**96) ** 2

    # -- trading ---------------------------------------------------------------------------

    def step(self, now: float, weth_usd: float) -> list[str]:
        """Arbitrage every WETH/stablecoin pool to ``weth_usd``, then the noise trades; the
        labels of the pools traded (a trade a pool refuses is skipped)."""
        number(weth_usd, "weth_usd", above=0)
        traded = []
        for label, contract in self.pools.items():
            symbols = {contract.spec.token0.symbol, contract.spec.token1.symbol}
            if (
                symbols & _STABLES
                and "WETH" in symbols
                and self._arbitrage(now, contract, weth_usd)
            ):
                traded.append(label)
        labels = sorted(self.pools)
        for _ in range(self.noise_trades):
            label = self.rng.choice(labels)
            contract = self.pools[label]
            zero_for_one = self.rng.random() < 0.5
            spec = contract.spec
            token = spec.token0 if zero_for_one else spec.token1
            price = weth_usd if token.symbol == "WETH" else float(token.price_usd)
            usd = self.noise_usd * math.exp(self.rng.gauss(0.0, 1.0) - 0.5)
            amount = int(usd / price * 10**token.decimals)
            if amount and self._swap(now, contract, zero_for_one, amount, None):
                traded.append(label)
        return traded

    def _arbitrage(
        self, now: float, contract: V2PairContract | V3PoolContract, weth_usd: float
    ) -> bool:
        spec: MarketPool = contract.spec
        usd0 = weth_usd if spec.token0.symbol == "WETH" else float(spec.token0.price_usd)
        usd1 = weth_usd if spec.token1.symbol == "WETH" else float(spec.token1.price_usd)
        target = usd0 / usd1 * 10 ** (spec.token1.decimals - spec.token0.decimals)
        current = self._raw_price(contract)
        if abs(target / current - 1) < _TOLERANCE:
            return False
        zero_for_one = target < current  # selling token0 lowers token1 per token0
        if isinstance(contract, V3PoolContract):
            limit = int(math.sqrt(target) * 2**96)
            limit = min(max(limit, MIN_SQRT_RATIO + 1), MAX_SQRT_RATIO - 1)
            return self._swap(now, contract, zero_for_one, 2**200, limit)
        r0, r1 = contract.reserves["0"], contract.reserves["1"]
        k = r0 * r1
        if zero_for_one:  # add token0 until r1 / r0 = target
            amount = math.isqrt(int(k / target)) - r0
        else:
            amount = math.isqrt(int(k * target)) - r1
        return amount > 0 and self._swap(now, contract, zero_for_one, amount, None)

    def _fund(self, run: Execution, token: str, amount: int) -> ERC20:
        contract = run.state.contracts[token]
        assert isinstance(contract, ERC20)
        have = contract.balances.get(TRADER, 0)
        if have < amount:
            contract.mint(run, TRADER, amount - have)
        return contract

    def _swap(
        self,
        now: float,
        contract: V2PairContract | V3PoolContract,
        zero_for_one: bool,
        amount: int,
        limit: int | None,
    ) -> bool:
        """One trade in its own execution: kept when it succeeds, undone when it fails."""
        run = self.ledger.direct(now)
        token_in = contract.token0_address if zero_for_one else contract.token1_address
        try:
            if isinstance(contract, V3PoolContract):
                if limit is None:
                    limit = MIN_SQRT_RATIO + 1 if zero_for_one else MAX_SQRT_RATIO - 1

                def pay(token: str, owed: int) -> None:
                    self._fund(run, token, owed)
                    transfer_token(run, TRADER, token, contract.address, owed)

                contract.swap(run, TRADER, TRADER, zero_for_one, amount, limit, pay)
                return True
            pair = Pair(contract.reserves["0"], contract.reserves["1"], contract.fee_bps)
            out = pair.get_amount_out(amount, zero_for_one)
            self._fund(run, token_in, amount)
            transfer_token(run, TRADER, token_in, contract.address, amount)
            amount0_out, amount1_out = (0, out) if zero_for_one else (out, 0)
            contract.swap_out(run, TRADER, amount0_out, amount1_out, TRADER)
            return True
        except (AmmError, Revert):
            run.rollback()
            return False
