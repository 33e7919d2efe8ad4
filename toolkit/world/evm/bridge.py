"""The rebalancing bridge on every scenario chain: a CCTP-style burn on ``send``, a mint on
``deliver``.

A :class:`Bridge` sits at :data:`BRIDGE` on every chain (one address everywhere, as CREATE2
deployments are). It is the on-chain half of the engine's rebalancing transfers
(:mod:`toolkit.engine.transfers`): the service's filler sends, the bridge's relayer delivers
(:mod:`toolkit.world.bridging` mirrors each engine transfer as the pair). Circle's CCTP burns
on the source (``depositForBurn``) and mints on the destination once its attesters signed the
burn (``receiveMessage``); this model keeps that shape, the simplest that conserves value: what
is in flight is what was burnt and not yet minted.

- ``send(token, amount, dstChain, recipient)`` pulls ``amount`` of ``token`` from the caller
  (``transferFrom``: the caller approved the bridge), burns it (``Transfer`` to the zero
  address), numbers the transfer (1, 2, ... per chain) and emits ``TransferSent(id, token,
  amount, dstChain, recipient)``; it returns the id. ``dstChain`` must be another chain.
- ``deliver(srcChain, id, token, amount, fee, recipient)``, by :data:`BRIDGE_RELAYER` only,
  mints ``amount - fee`` of ``token`` (this chain's) to ``recipient`` and ``fee`` to
  :data:`BRIDGE_FEES` (``Transfer`` events from the zero address), once per ``(srcChain,
  id)``, and emits ``TransferDelivered``. The relayer says what arrives: the engine's bridge
  model set the fee; the contract checks only ``fee <= amount``.
- ``sentTotal(token)`` and ``deliveredTotal(token)`` are what this chain's bridge burnt and
  minted (fees included) of a token: a token's sum of ``sentTotal`` over its chains less the
  sum of ``deliveredTotal`` is what bridges carry now.

Reverts carry ``Error(string)`` messages (``bridge: ...``); the ABI is our own
(:data:`toolkit.codecs.function_table.FUNCTIONS`, ``bridge.*``).

>>> from toolkit.scenario import load_scenario
>>> [b.address == BRIDGE for b in Bridge.build(load_scenario("single-pool"), 8453)]
[True]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final

from eth_utils import keccak

from toolkit.codecs import abi
from toolkit.codecs.functions import encode_call
from toolkit.scenario import Scenario
from toolkit.world.evm import gas
from toolkit.world.evm.contracts import ZERO, Contract, Execution, Message, Revert, register
from toolkit.world.evm.tokens import ERC20

__all__ = ["BRIDGE", "BRIDGE_FEES", "BRIDGE_RELAYER", "Bridge"]


def _address(phrase: str) -> str:
    return abi.hexstr(keccak(text=phrase)[12:])


#: The bridge contract's address on every chain (simulation addresses from fixed phrases).
BRIDGE: Final = _address("toolkit rebalancing bridge")
#: The bridge's relayer: the only account that delivers.
BRIDGE_RELAYER: Final = _address("toolkit rebalancing bridge relayer")
#: Where the bridge's fees are minted.
BRIDGE_FEES: Final = _address("toolkit rebalancing bridge fees")


class Bridge(Contract):
    """The burn-and-mint bridge of one chain (see the module docstring)."""

    functions: ClassVar[Mapping[str, str]] = {
        "bridge.send": "send",
        "bridge.deliver": "deliver",
        "bridge.sentTotal": "sent_total",
        "bridge.deliveredTotal": "delivered_total",
    }

    def __init__(self, address: str, chain_id: int) -> None:
        super().__init__(address)
        self.chain_id = chain_id
        self.count: dict[str, int] = {"sent": 0}
        self.sent: dict[str, int] = {}
        self.delivered: dict[str, int] = {}
        self.done: dict[tuple[int, int], bool] = {}

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        return [cls(BRIDGE, chain_id)]

    @staticmethod
    def _token(run: Execution, token: str) -> ERC20:
        contract = run.state.contracts.get(token)
        if not isinstance(contract, ERC20):
            raise Revert.error(f"bridge: {token} is not a token of this chain")
        return contract

    def send(
        self, msg: Message, token: str, amount: int, dstChain: int, recipient: str
    ) -> tuple[Any, ...]:
        run = msg.run
        held = self._token(run, token)
        if amount == 0:
            raise Revert.error("bridge: amount must be above zero")
        if dstChain == self.chain_id:
            raise Revert.error("bridge: dstChain must be another chain")
        if recipient == ZERO:
            raise Revert.error("bridge: recipient is the zero address")
        pull = encode_call("erc20.transferFrom", msg.sender, self.address, amount)
        run.call(self.address, token, bytes.fromhex(pull[2:]))
        held.burn(run, self.address, amount)
        number = self.count["sent"] + 1
        run.write(self.count, "sent", number)
        run.write(self.sent, token, self.sent.get(token, 0) + amount)
        run.emit(self.address, "bridge.TransferSent", number, token, amount, dstChain, recipient)
        return (number,)

    def deliver(
        self,
        msg: Message,
        srcChain: int,
        id: int,
        token: str,
        amount: int,
        fee: int,
        recipient: str,
    ) -> tuple[Any, ...]:
        run = msg.run
        if msg.sender != BRIDGE_RELAYER:
            raise Revert.error("bridge: only the relayer delivers")
        held = self._token(run, token)
        if self.done.get((srcChain, id), False):
            raise Revert.error(f"bridge: transfer {id} from chain {srcChain} already delivered")
        if fee > amount:
            raise Revert.error("bridge: fee above the amount")
        if recipient == ZERO:
            raise Revert.error("bridge: recipient is the zero address")
        run.write(self.done, (srcChain, id), True)
        run.write(self.delivered, token, self.delivered.get(token, 0) + amount)
        held.mint(run, recipient, amount - fee, logged=True)
        if fee:
            held.mint(run, BRIDGE_FEES, fee, logged=True)
        run.emit(
            self.address, "bridge.TransferDelivered", srcChain, id, token, amount, fee, recipient
        )
        return ()

    def sent_total(self, msg: Message, token: str) -> tuple[Any, ...]:
        return (self.sent.get(token, 0),)

    def delivered_total(self, msg: Message, token: str) -> tuple[Any, ...]:
        return (self.delivered.get(token, 0),)


register(Bridge)

assert all(key in gas.EXECUTION for key in Bridge.functions)
