"""AMM pools as simulated contracts, deployed from each chain's market
(:mod:`toolkit.world.evm.markets`).

- :class:`V2PairContract`: ``UniswapV2Pair``'s ``token0``, ``token1``, ``getReserves`` and the
  swap (optimistic transfer out, then the ``K`` check of :class:`toolkit.amm.v2.Pair`), with
  ``Sync`` and ``Swap`` events. The fee is 0.30 %, as Uniswap V2's.
- :class:`V3PoolContract`: ``UniswapV3Pool``'s getters (``slot0``, ``liquidity``, ``fee``,
  ``tickSpacing``, ``ticks``, ``feeGrowthGlobal*X128``) and its swap, the wei-exact
  :class:`toolkit.amm.v3.Pool`: the output is sent first, then the payer's callback pays the
  input and the pool checks its balance grew by it ('IIA'), with the real ``Swap`` event.

The Universal Router that swaps through them is :mod:`toolkit.world.evm.router`.

Pool state changes go through :meth:`Execution.write` (a swap writes a new pool object), so a
revert anywhere in the transaction restores every pool.

>>> from toolkit.scenario import load_scenario
>>> from toolkit.world.evm import Chains
>>> chains = Chains(load_scenario("default"), genesis=1_760_000_000.0)
>>> ledger = chains.ledger(1)
>>> pools = [c for c in ledger.state.contracts.values() if isinstance(c, V3PoolContract)]
>>> pools[0].pool.fee, pools[0].pool.liquidity > 0
(500, True)
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from eth_utils import function_signature_to_4byte_selector

from toolkit.amm import AmmError
from toolkit.amm.v2 import Pair
from toolkit.amm.v3 import Pool, TickInfo
from toolkit.codecs.functions import encode_call
from toolkit.scenario import Scenario
from toolkit.world.evm.contracts import Contract, Execution, Message, Revert, register
from toolkit.world.evm.markets import MarketPool, market_for
from toolkit.world.evm.tokens import ERC20, WETH

__all__ = [
    "MarketERC20",
    "V2PairContract",
    "V3PoolContract",
    "copy_pool",
    "custom_error",
    "token_at",
    "transfer_from_token",
    "transfer_token",
]


def copy_pool(pool: Pool) -> Pool:
    """A copy of ``pool`` sharing nothing mutable (much cheaper than ``copy.deepcopy``)."""
    new = copy.copy(pool)
    new.ticks = {
        tick: TickInfo(
            info.liquidity_gross,
            info.liquidity_net,
            info.fee_growth_outside0_x128,
            info.fee_growth_outside1_x128,
        )
        for tick, info in pool.ticks.items()
    }
    new.tick_bitmap = dict(pool.tick_bitmap)
    new.positions = dict(pool.positions)
    return new


@functools.lru_cache(maxsize=256)
def _built(spec: MarketPool) -> tuple[Pool, int, int]:
    """``spec.build_v3()`` once per pool description (copied for each deployment)."""
    return spec.build_v3()


def custom_error(signature: str) -> Revert:
    """A revert with a custom error of no arguments (``V3TooLittleReceived()``, ...)."""
    return Revert(function_signature_to_4byte_selector(signature), signature.partition("(")[0])


def token_at(run: Execution, address: str) -> ERC20:
    """The token contract at ``address``; a revert when there is none."""
    contract = run.state.contracts.get(address)
    if not isinstance(contract, ERC20):
        raise Revert(b"", f"{address} is not a token")
    return contract


def transfer_token(run: Execution, sender: str, token: str, to: str, amount: int) -> None:
    """``token.transfer(to, amount)`` called by ``sender``."""
    data = encode_call("erc20.transfer", to, amount)
    run.call(sender, token, bytes.fromhex(data[2:]))


def transfer_from_token(
    run: Execution, spender: str, token: str, owner: str, to: str, amount: int
) -> None:
    """``token.transferFrom(owner, to, amount)`` called by ``spender``."""
    data = encode_call("erc20.transferFrom", owner, to, amount)
    run.call(spender, token, bytes.fromhex(data[2:]))


class MarketERC20(ERC20):
    """The market tokens a scenario does not list on a chain (USDT, the BTC token, the
    long-tail tokens; WETH where the scenario has none, as :class:`WETH`)."""

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        market = market_for(scenario, chain_id)
        if market is None:
            return []
        listed = {t.address.lower() for t in scenario.tokens if t.chain == chain_id}
        out: list[Contract] = []
        for token in market.tokens.values():
            if token.address.lower() in listed:
                continue
            kind = WETH if token.symbol == "WETH" else ERC20
            name = "Wrapped Ether" if token.symbol == "WETH" else None
            out.append(kind(token.address, token.symbol, token.decimals, name))
        return out


class V2PairContract(Contract):
    """A ``UniswapV2Pair`` of the market (module docstring)."""

    functions: ClassVar[Mapping[str, str]] = {
        "amm.token0": "token0",
        "amm.token1": "token1",
        "v2pair.getReserves": "get_reserves",
    }

    def __init__(self, spec: MarketPool) -> None:
        super().__init__(spec.address)
        self.spec = spec
        self.token0_address = spec.token0.address.lower()
        self.token1_address = spec.token1.address.lower()
        pair = spec.build_v2()
        self.fee_bps = pair.fee_bps
        self.reserves: dict[str, int] = {"0": pair.reserve0, "1": pair.reserve1, "t": 0}

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        market = market_for(scenario, chain_id)
        return [] if market is None else [cls(p) for p in market.pools if p.kind == "v2"]

    @property
    def pair(self) -> Pair:
        """The reserves as a :class:`~toolkit.amm.v2.Pair` (a copy: quoting does not write)."""
        return Pair(self.reserves["0"], self.reserves["1"], self.fee_bps)

    def genesis(self, run: Execution) -> None:
        token_at(run, self.token0_address).mint(run, self.address, self.reserves["0"])
        token_at(run, self.token1_address).mint(run, self.address, self.reserves["1"])

    def token0(self, msg: Message) -> tuple[Any, ...]:
        return (self.token0_address,)

    def token1(self, msg: Message) -> tuple[Any, ...]:
        return (self.token1_address,)

    def get_reserves(self, msg: Message) -> tuple[Any, ...]:
        return (self.reserves["0"], self.reserves["1"], self.reserves["t"])

    def swap_out(
        self, run: Execution, sender: str, amount0_out: int, amount1_out: int, to: str
    ) -> None:
        """``UniswapV2Pair.swap(amount0Out, amount1Out, to, "")`` called by ``sender``."""
        if to in (self.token0_address, self.token1_address):
            raise Revert.error("UniswapV2: INVALID_TO")
        pair = self.pair
        if amount0_out:
            transfer_token(run, self.address, self.token0_address, to, amount0_out)
        if amount1_out:
            transfer_token(run, self.address, self.token1_address, to, amount1_out)
        balance0 = token_at(run, self.token0_address).balances.get(self.address, 0)
        balance1 = token_at(run, self.token1_address).balances.get(self.address, 0)
        reserve0, reserve1 = self.reserves["0"], self.reserves["1"]
        amount0_in = max(0, balance0 - (reserve0 - amount0_out))
        amount1_in = max(0, balance1 - (reserve1 - amount1_out))
        try:
            pair.swap_raw(
                amount0_in=amount0_in,
                amount1_in=amount1_in,
                amount0_out=amount0_out,
                amount1_out=amount1_out,
            )
        except AmmError as exc:
            raise Revert.error(str(exc)) from None
        run.write(self.reserves, "0", balance0)
        run.write(self.reserves, "1", balance1)
        run.write(self.reserves, "t", run.timestamp % 2**32)
        run.emit(self.address, "v2pair.Sync", balance0, balance1)
        run.emit(
            self.address,
            "v2pair.Swap",
            sender,
            amount0_in,
            amount1_in,
            amount0_out,
            amount1_out,
            to,
        )


class V3PoolContract(Contract):
    """A ``UniswapV3Pool`` of the market (module docstring)."""

    functions: ClassVar[Mapping[str, str]] = {
        "amm.token0": "token0",
        "amm.token1": "token1",
        "v3pool.slot0": "slot0",
        "v3pool.liquidity": "liquidity",
        "v3pool.fee": "fee",
        "v3pool.tickSpacing": "tick_spacing",
        "v3pool.ticks": "ticks",
        "v3pool.tickBitmap": "tick_bitmap",
        "v3pool.feeGrowthGlobal0X128": "fee_growth0",
        "v3pool.feeGrowthGlobal1X128": "fee_growth1",
    }

    def __init__(self, spec: MarketPool) -> None:
        super().__init__(spec.address)
        self.spec = spec
        self.token0_address = spec.token0.address.lower()
        self.token1_address = spec.token1.address.lower()
        pool, self._held0, self._held1 = _built(spec)
        self.state: dict[str, Pool] = {"pool": copy_pool(pool)}

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        market = market_for(scenario, chain_id)
        return [] if market is None else [cls(p) for p in market.pools if p.kind == "v3"]

    @property
    def pool(self) -> Pool:
        """The pool's state (read only: swaps replace it through the journal)."""
        return self.state["pool"]

    def genesis(self, run: Execution) -> None:
        token_at(run, self.token0_address).mint(run, self.address, self._held0)
        token_at(run, self.token1_address).mint(run, self.address, self._held1)

    def token0(self, msg: Message) -> tuple[Any, ...]:
        return (self.token0_address,)

    def token1(self, msg: Message) -> tuple[Any, ...]:
        return (self.token1_address,)

    def slot0(self, msg: Message) -> tuple[Any, ...]:
        pool = self.pool
        return (pool.sqrt_price_x96, pool.tick, 0, 1, 1, 0, True)

    def liquidity(self, msg: Message) -> tuple[Any, ...]:
        return (self.pool.liquidity,)

    def fee(self, msg: Message) -> tuple[Any, ...]:
        return (self.pool.fee,)

    def tick_spacing(self, msg: Message) -> tuple[Any, ...]:
        return (self.pool.tick_spacing,)

    def ticks(self, msg: Message, tick: int) -> tuple[Any, ...]:
        info = self.pool.ticks.get(tick)
        if info is None:
            return (0, 0, 0, 0, 0, 0, 0, False)
        return (
            info.liquidity_gross,
            info.liquidity_net,
            info.fee_growth_outside0_x128,
            info.fee_growth_outside1_x128,
            0,
            0,
            0,
            True,
        )

    def tick_bitmap(self, msg: Message, word: int) -> tuple[Any, ...]:
        # the contract's own bitmap word: what a snapshot reader walks to find the ticks
        return (self.pool.tick_bitmap.get(word, 0),)

    def fee_growth0(self, msg: Message) -> tuple[Any, ...]:
        return (self.pool.fee_growth_global0_x128,)

    def fee_growth1(self, msg: Message) -> tuple[Any, ...]:
        return (self.pool.fee_growth_global1_x128,)

    def swap(
        self,
        run: Execution,
        sender: str,
        recipient: str,
        zero_for_one: bool,
        amount_specified: int,
        sqrt_price_limit_x96: int,
        pay: Callable[[str, int], None],
    ) -> tuple[int, int]:
        """``UniswapV3Pool.swap`` called by ``sender``: ``pay(token, amount)`` is the swap
        callback that must pay the input into the pool. The signed ``(amount0, amount1)``."""
        pool = copy_pool(self.pool)
        try:
            amount0, amount1 = pool.swap(zero_for_one, amount_specified, sqrt_price_limit_x96)
        except AmmError as exc:
            raise Revert.error(str(exc)) from None
        token_in, token_out = (
            (self.token0_address, self.token1_address)
            if zero_for_one
            else (self.token1_address, self.token0_address)
        )
        amount_in, amount_out = (amount0, -amount1) if zero_for_one else (amount1, -amount0)
        if amount_out > 0:
            transfer_token(run, self.address, token_out, recipient, amount_out)
        before = token_at(run, token_in).balances.get(self.address, 0)
        pay(token_in, amount_in)
        if token_at(run, token_in).balances.get(self.address, 0) < before + amount_in:
            raise Revert.error("IIA")
        run.write(self.state, "pool", pool)
        run.emit(
            self.address,
            "v3pool.Swap",
            sender,
            recipient,
            amount0,
            amount1,
            pool.sqrt_price_x96,
            pool.liquidity,
            pool.tick,
        )
        return amount0, amount1


register(MarketERC20)
register(V2PairContract)
register(V3PoolContract)
