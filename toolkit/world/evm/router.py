"""The Universal Router as a simulated contract: ``execute(commands, inputs, deadline)`` running
the commands of :mod:`toolkit.codecs.universal_router` on the AMM pools of :mod:`.amm`. A
payer-is-user input is pulled with ``transferFrom`` against an ordinary allowance given to the
router (no Permit2); native coin comes as ``msg.value`` and is wrapped by ``WRAP_ETH``. Reverts
carry the router's custom errors: ``V3TooLittleReceived()``, ``V2TooLittleReceived()``,
``InsufficientToken()``, ``InsufficientETH()``, ``TransactionDeadlinePassed()``. Its gas is a
fixed part plus each command's (:func:`router_gas`).

>>> from toolkit.codecs import universal_router as ur
>>> router_gas([ur.WrapEth(ur.ADDRESS_THIS, 1)]) - router_gas([])
28000
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final

from toolkit.amm import AmmError
from toolkit.amm.v2 import Pair
from toolkit.amm.v3.tick_math import MAX_SQRT_RATIO, MIN_SQRT_RATIO
from toolkit.chain.errors import NotInRegistry
from toolkit.chain.registry import default_registry
from toolkit.codecs import universal_router as ur
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.functions import encode_call
from toolkit.scenario import Scenario
from toolkit.world.evm import gas
from toolkit.world.evm.amm import (
    V2PairContract,
    V3PoolContract,
    custom_error,
    token_at,
    transfer_from_token,
    transfer_token,
)
from toolkit.world.evm.contracts import Contract, Execution, Message, Revert, register
from toolkit.world.evm.markets import market_for

__all__ = ["GAS_PER_COMMAND", "UniversalRouter", "router_gas"]

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
            raise custom_error("TransactionDeadlinePassed()")
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
        return token_at(run, token).balances.get(owner, 0)

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
            raise custom_error("V3TooLittleReceived()")

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
            raise custom_error("V2TooLittleReceived()")

    def _wrap(self, msg: Message, command: ur.WrapEth) -> None:
        run = msg.run
        recipient = self._recipient(msg, command.recipient)
        have = run.state.balances.get(self.address, 0)
        amount = have if command.amount_min == ur.CONTRACT_BALANCE else command.amount_min
        if amount > have:
            raise custom_error("InsufficientETH()")
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
            raise custom_error("InsufficientETH()")
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
            raise custom_error("InsufficientToken()")
        if have:
            transfer_token(run, self.address, token, recipient, have)


register(UniversalRouter)
