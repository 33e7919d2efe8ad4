"""AMM pools and the Universal Router as simulated contracts, deployed from each chain's market
(:mod:`toolkit.world.evm.markets`).

- :class:`V2PairContract`: ``UniswapV2Pair``'s ``token0``, ``token1``, ``getReserves`` and the
  swap (optimistic transfer out, then the ``K`` check of :class:`toolkit.amm.v2.Pair`), with
  ``Sync`` and ``Swap`` events. The fee is 0.30 %, as Uniswap V2's.
- :class:`V3PoolContract`: ``UniswapV3Pool``'s getters (``slot0``, ``liquidity``, ``fee``,
  ``tickSpacing``, ``ticks``, ``feeGrowthGlobal*X128``) and its swap, the wei-exact
  :class:`toolkit.amm.v3.Pool`: the output is sent first, then the payer's callback pays the
  input and the pool checks its balance grew by it ('IIA'), with the real ``Swap`` event.
- :class:`UniversalRouter`: ``execute(commands, inputs, deadline)`` running the commands of
  :mod:`toolkit.codecs.universal_router` on those pools. A payer-is-user input is pulled with
  ``transferFrom`` against an ordinary allowance given to the router (no Permit2); native coin
  comes as ``msg.value`` and is wrapped by ``WRAP_ETH``. Reverts carry the router's custom
  errors: ``V3TooLittleReceived()``, ``V2TooLittleReceived()``, ``InsufficientToken()``,
  ``InsufficientETH()``, ``TransactionDeadlinePassed()``.

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
from typing import Any, ClassVar, Final

from eth_utils import function_signature_to_4byte_selector

from toolkit.amm import AmmError
from toolkit.amm.v2 import Pair
from toolkit.amm.v3 import Pool, TickInfo
from toolkit.amm.v3.tick_math import MAX_SQRT_RATIO, MIN_SQRT_RATIO
from toolkit.chain.errors import NotInRegistry
from toolkit.chain.registry import default_registry
from toolkit.codecs import universal_router as ur
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.functions import encode_call
from toolkit.scenario import Scenario
from toolkit.world.evm import gas
from toolkit.world.evm.contracts import (
    ERC20,
    WETH,
    Contract,
    Execution,
    Message,
    Revert,
    register,
)
from toolkit.world.evm.markets import MarketPool, market_for

__all__ = [
    "GAS_PER_COMMAND",
    "MarketERC20",
    "UniversalRouter",
    "V2PairContract",
    "V3PoolContract",
    "copy_pool",
    "router_gas",
    "transfer_token",
]

#: Execution gas the router adds per command, on top of its fixed part (``gas.EXECUTION``):
#: per V3 hop, per V2 hop (the token transfers included), per wrap, unwrap and sweep.
GAS_PER_COMMAND: Final = {
    "v3_hop": 88_000,
    "v2_hop": 62_000,
    "wrap": 28_000,
    "unwrap": 34_000,
    "sweep": 14_000,
}
_MSG_SENDER: Final = ur.MSG_SENDER.lower()
_ADDRESS_THIS: Final = ur.ADDRESS_THIS.lower()


def router_gas(commands: Iterable[ur.Command]) -> int:
    """Execution gas of ``execute`` with ``commands``: the fixed part plus each command's
    (:data:`GAS_PER_COMMAND`; a swap command pays per hop)."""
    total = gas.execution("universalRouter.execute")
    for command in commands:
        if isinstance(command, ur.V3SwapExactIn):
            total += GAS_PER_COMMAND["v3_hop"] * (len(command.path) // 2)
        elif isinstance(command, ur.V2SwapExactIn):
            total += GAS_PER_COMMAND["v2_hop"] * (len(command.path) - 1)
        elif isinstance(command, ur.WrapEth):
            total += GAS_PER_COMMAND["wrap"]
        elif isinstance(command, ur.UnwrapWeth):
            total += GAS_PER_COMMAND["unwrap"]
        else:
            total += GAS_PER_COMMAND["sweep"]
    return total


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


def _custom(signature: str) -> Revert:
    return Revert(function_signature_to_4byte_selector(signature), signature.partition("(")[0])


def _token(run: Execution, address: str) -> ERC20:
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
        _token(run, self.token0_address).mint(run, self.address, self.reserves["0"])
        _token(run, self.token1_address).mint(run, self.address, self.reserves["1"])

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
        balance0 = _token(run, self.token0_address).balances.get(self.address, 0)
        balance1 = _token(run, self.token1_address).balances.get(self.address, 0)
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
        _token(run, self.token0_address).mint(run, self.address, self._held0)
        _token(run, self.token1_address).mint(run, self.address, self._held1)

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
        before = _token(run, token_in).balances.get(self.address, 0)
        pay(token_in, amount_in)
        if _token(run, token_in).balances.get(self.address, 0) < before + amount_in:
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


class UniversalRouter(Contract):
    """The Universal Router of a chain with a market (module docstring)."""

    functions: ClassVar[Mapping[str, str]] = {"universalRouter.execute": "execute_commands"}

    def __init__(self, address: str, weth: str) -> None:
        super().__init__(address)
        self.weth = weth.lower()

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        market = market_for(scenario, chain_id)
        if market is None or "WETH" not in market.tokens:
            return []
        try:
            address = default_registry().swap_router(chain_id)
        except NotInRegistry:
            return []
        return [cls(address, market.weth.address)]

    def gas(self, data: bytes) -> int:
        """:func:`router_gas` of the decoded commands (a malformed call: ``gas.REVERT``)."""
        try:
            commands, _ = ur.decode_execute(data)
        except InvalidValue:
            return gas.REVERT
        return router_gas(commands)

    # -- execute ------------------------------------------------------------------------------

    def execute_commands(
        self, msg: Message, commands: bytes, inputs: tuple[bytes, ...], deadline: int
    ) -> tuple[Any, ...]:
        run = msg.run
        if run.timestamp > deadline:
            raise _custom("TransactionDeadlinePassed()")
        try:
            decoded = ur.decode_commands(commands, inputs)
        except InvalidValue:
            raise Revert(b"", "malformed commands") from None
        for command in decoded:
            if isinstance(command, ur.V3SwapExactIn):
                self._v3_exact_in(msg, command)
            elif isinstance(command, ur.V2SwapExactIn):
                self._v2_exact_in(msg, command)
            elif isinstance(command, ur.WrapEth):
                self._wrap(msg, command)
            elif isinstance(command, ur.UnwrapWeth):
                self._unwrap(msg, command)
            else:
                self._sweep(msg, command)
        return ()

    def _recipient(self, msg: Message, address: str) -> str:
        address = address.lower()
        if address == _MSG_SENDER:
            return msg.sender
        if address == _ADDRESS_THIS:
            return self.address
        return address

    def _balance(self, run: Execution, token: str, owner: str) -> int:
        return _token(run, token).balances.get(owner, 0)

    def _pool(self, run: Execution, a: str, b: str, fee: int | None) -> Any:
        """The V3 pool of ``a``/``b`` at ``fee``, or the V2 pair when ``fee`` is None (the
        deployed router computes the address from the factory; here it is looked up)."""
        tokens = {a, b}
        for contract in run.state.contracts.values():
            if fee is None and isinstance(contract, V2PairContract):
                found = {contract.token0_address, contract.token1_address} == tokens
            elif fee is not None and isinstance(contract, V3PoolContract):
                found = {
                    contract.token0_address,
                    contract.token1_address,
                } == tokens and contract.pool.fee == fee
            else:
                continue
            if found:
                return contract
        raise Revert(b"", f"no pool for {a}/{b}")

    def _pay(self, run: Execution, payer: str, token: str, to: str, amount: int) -> None:
        if payer == self.address:
            transfer_token(run, self.address, token, to, amount)
        else:
            transfer_from_token(run, self.address, token, payer, to, amount)

    def _v3_exact_in(self, msg: Message, command: ur.V3SwapExactIn) -> None:
        run = msg.run
        recipient = self._recipient(msg, command.recipient)
        payer = msg.sender if command.payer_is_user else self.address
        path = [str(x).lower() if i % 2 == 0 else int(x) for i, x in enumerate(command.path)]
        amount = command.amount_in
        if amount == ur.CONTRACT_BALANCE:
            amount = self._balance(run, str(path[0]), self.address)
        hops = len(path) // 2
        for hop in range(hops):
            token_in, fee, token_out = str(path[2 * hop]), int(path[2 * hop + 1]), path[2 * hop + 2]
            pool: V3PoolContract = self._pool(run, token_in, str(token_out), fee)
            zero_for_one = token_in < str(token_out)
            to = recipient if hop == hops - 1 else self.address
            hop_payer = payer if hop == 0 else self.address
            limit = MIN_SQRT_RATIO + 1 if zero_for_one else MAX_SQRT_RATIO - 1

            def pay(
                token: str, owed: int, _payer: str = hop_payer, _pool: str = pool.address
            ) -> None:
                self._pay(run, _payer, token, _pool, owed)

            amount0, amount1 = pool.swap(run, self.address, to, zero_for_one, amount, limit, pay)
            amount = -(amount1 if zero_for_one else amount0)
        if amount < command.amount_out_min:
            raise _custom("V3TooLittleReceived()")

    def _v2_exact_in(self, msg: Message, command: ur.V2SwapExactIn) -> None:
        run = msg.run
        recipient = self._recipient(msg, command.recipient)
        path = [t.lower() for t in command.path]
        pairs: list[V2PairContract] = [
            self._pool(run, path[i], path[i + 1], None) for i in range(len(path) - 1)
        ]
        amount = command.amount_in
        if amount == ur.CONTRACT_BALANCE:
            amount = self._balance(run, path[0], self.address)
        payer = msg.sender if command.payer_is_user else self.address
        if amount:
            self._pay(run, payer, path[0], pairs[0].address, amount)
        before = self._balance(run, path[-1], recipient)
        for i, pair in enumerate(pairs):
            token_in = path[i]
            zero_for_one = token_in == pair.token0_address
            reserve_in, reserve_out = (
                (pair.reserves["0"], pair.reserves["1"])
                if zero_for_one
                else (pair.reserves["1"], pair.reserves["0"])
            )
            amount_input = self._balance(run, token_in, pair.address) - reserve_in
            try:
                out = Pair(reserve_in, reserve_out, pair.fee_bps).get_amount_out(amount_input, True)
            except AmmError as exc:
                raise Revert.error(str(exc)) from None
            to = recipient if i == len(pairs) - 1 else pairs[i + 1].address
            amount0_out, amount1_out = (0, out) if zero_for_one else (out, 0)
            pair.swap_out(run, self.address, amount0_out, amount1_out, to)
        if self._balance(run, path[-1], recipient) - before < command.amount_out_min:
            raise _custom("V2TooLittleReceived()")

    def _wrap(self, msg: Message, command: ur.WrapEth) -> None:
        run = msg.run
        recipient = self._recipient(msg, command.recipient)
        have = run.state.balances.get(self.address, 0)
        amount = have if command.amount_min == ur.CONTRACT_BALANCE else command.amount_min
        if amount > have:
            raise _custom("InsufficientETH()")
        if amount:
            data = encode_call("weth.deposit")
            run.call(self.address, self.weth, bytes.fromhex(data[2:]), amount)
            if recipient != self.address:
                transfer_token(run, self.address, self.weth, recipient, amount)

    def _unwrap(self, msg: Message, command: ur.UnwrapWeth) -> None:
        run = msg.run
        recipient = self._recipient(msg, command.recipient)
        have = self._balance(run, self.weth, self.address)
        if have < command.amount_min:
            raise _custom("InsufficientETH()")
        if have:
            data = encode_call("weth.withdraw", have)
            run.call(self.address, self.weth, bytes.fromhex(data[2:]))
            if recipient != self.address:
                run.move_native(self.address, recipient, have)

    def _sweep(self, msg: Message, command: ur.Sweep) -> None:
        run = msg.run
        recipient = self._recipient(msg, command.recipient)
        token = command.token.lower()
        have = self._balance(run, token, self.address)
        if have < command.amount_min:
            raise _custom("InsufficientToken()")
        if have:
            transfer_token(run, self.address, token, recipient, have)


register(MarketERC20)
register(V2PairContract)
register(V3PoolContract)
register(UniversalRouter)
