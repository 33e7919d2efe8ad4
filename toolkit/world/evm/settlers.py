"""The partner-escrow settlers as simulated contracts: the input settler escrow and the output
settler, deployed at every scenario chain's ``escrow`` and ``output_settler`` addresses.

Names, selectors, events and revert errors follow OIF's ``InputSettlerEscrow`` and
``OutputSettlerSimple`` (research: ``intents-encoding.md`` §1). Where the simulation chooses
(the research is silent or the real thing needs what is not simulated):

- **No oracle.** ``finalise`` releases the inputs on the solver's word: the escrow checks the
  caller is the solver named in ``solveParams[0]``, the order is ``Deposited`` and every solve
  timestamp is at most ``fillDeadline`` (``FilledTooLate``), but no proof that the output was
  delivered (a chain's contracts see only their own chain). The service's filler is the only
  caller that finalises in the simulation, after its own fill was mined.
- **No governance fee**: ``refund`` and ``finalise`` move the whole inputs.
- ``fill`` of an output already filled reverts with ``AlreadyFilled()`` (OIF returns the
  existing record); the solver is ``fillerData``'s first word (OIF's ``proposedSolver``), or
  the caller when ``fillerData`` is shorter. Native outputs (token zero) are not supported.
- Custom errors are reverted with their ABI selector and arguments (``WrongChain(uint256,
  uint256)``, ``TimestampPassed()``, ...); :attr:`Revert.reason` carries their name.

>>> from toolkit.scenario import load_scenario
>>> s = load_scenario("single-pool")
>>> [type(c).__name__ for c in InputSettlerEscrow.build(s, 1)]
['InputSettlerEscrow']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final

import eth_abi
from eth_utils import function_signature_to_4byte_selector, keccak

from toolkit.codecs import abi
from toolkit.codecs.escrow import (
    OUTPUT_TYPE,
    MandateOutput,
    StandardOrder,
    order_id,
    token_address,
)
from toolkit.codecs.functions import encode_call
from toolkit.scenario import Scenario
from toolkit.world.evm import gas
from toolkit.world.evm.contracts import Contract, Execution, Message, Revert, register

__all__ = ["CLAIMED", "DEPOSITED", "REFUNDED", "InputSettlerEscrow", "OutputSettler"]

#: ``orderStatus`` values (OIF's enum ``None, Deposited, Claimed, Refunded``).
DEPOSITED: Final = 1
CLAIMED: Final = 2
REFUNDED: Final = 3


def _error(signature: str, *args: Any) -> Revert:
    """A revert with a custom error's selector and ABI-encoded arguments."""
    name, _, rest = signature.partition("(")
    types = [t for t in rest.rstrip(")").split(",") if t]
    data = function_signature_to_4byte_selector(signature) + eth_abi.encode(types, list(args))
    return Revert(data, name)


def _call_token(run: Execution, caller: str, token: str, data: str) -> None:
    if token not in run.state.contracts:
        raise Revert(b"", "token has no code")
    run.call(caller, token, bytes.fromhex(data[2:]))


def _order(value: Any) -> StandardOrder:
    if isinstance(value, StandardOrder):
        return value
    user, nonce, origin, expires, fill_deadline, oracle, inputs, outputs = value
    return StandardOrder(
        user,
        nonce,
        origin,
        expires,
        fill_deadline,
        oracle,
        tuple((int(t), int(a)) for t, a in inputs),
        tuple(
            MandateOutput(
                abi.hexstr(o[0]),
                abi.hexstr(o[1]),
                o[2],
                abi.hexstr(o[3]),
                o[4],
                abi.hexstr(o[5]),
                o[6],
                o[7],
            )
            for o in outputs
        ),
    )


class InputSettlerEscrow(Contract):
    """OIF's ``InputSettlerEscrow``: ``open``, ``refund``, ``finalise``, ``orderStatus``.

    ``open(order)`` checks as the contract does (``WrongChain``, ``TimestampPassed`` for
    ``fillDeadline`` then ``expires``, ``FillDeadlineAfterExpiry``, ``InvalidOrderStatus``),
    pulls every input from ``msg.sender`` by ``transferFrom`` (the caller approved the escrow)
    and emits ``Open(orderId, order)``. ``refund(order)``, by anyone once ``expires`` passed
    (``TimestampNotPassed``), returns the inputs to ``order.user`` with ``Refunded(orderId)``.
    ``finalise`` pays the inputs to ``destination`` with ``Finalised`` (see the module
    docstring for what it does not check).
    """

    functions: ClassVar[Mapping[str, str]] = {
        "escrow.open": "open",
        "escrow.refund": "refund",
        "escrow.finalise": "finalise",
        "escrow.orderStatus": "order_status",
    }

    def __init__(self, address: str, chain_id: int) -> None:
        super().__init__(address)
        self.chain_id = chain_id
        self.status: dict[str, int] = {}

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        return [cls(scenario.chain(chain_id).escrow, chain_id)]

    def open(self, msg: Message, order: Any) -> tuple[Any, ...]:
        run, order = msg.run, _order(order)
        if order.origin_chain_id != self.chain_id:
            raise _error("WrongChain(uint256,uint256)", order.origin_chain_id, self.chain_id)
        if not run.timestamp < order.fill_deadline or not run.timestamp < order.expires:
            raise _error("TimestampPassed()")
        if order.fill_deadline > order.expires:
            raise _error(
                "FillDeadlineAfterExpiry(uint32,uint32)", order.fill_deadline, order.expires
            )
        key = order_id(order, self.address)
        if self.status.get(key, 0) != 0:
            raise _error("InvalidOrderStatus()")
        run.write(self.status, key, DEPOSITED)
        for token, amount in order.inputs:
            data = encode_call("erc20.transferFrom", msg.sender, self.address, amount)
            _call_token(run, self.address, token_address(token).lower(), data)
        run.emit(self.address, "escrow.Open", bytes.fromhex(key[2:]), order.as_abi())
        return ()

    def refund(self, msg: Message, order: Any) -> tuple[Any, ...]:
        run, order = msg.run, _order(order)
        if not run.timestamp > order.expires:
            raise _error("TimestampNotPassed()")
        key = order_id(order, self.address)
        if self.status.get(key, 0) != DEPOSITED:
            raise _error("InvalidOrderStatus()")
        run.write(self.status, key, REFUNDED)
        for token, amount in order.inputs:
            data = encode_call("erc20.transfer", order.user, amount)
            _call_token(run, self.address, token_address(token).lower(), data)
        run.emit(self.address, "escrow.Refunded", bytes.fromhex(key[2:]))
        return ()

    def finalise(
        self, msg: Message, order: Any, solveParams: Any, destination: bytes, call: bytes
    ) -> tuple[Any, ...]:
        run, order = msg.run, _order(order)
        key = order_id(order, self.address)
        if self.status.get(key, 0) != DEPOSITED:
            raise _error("InvalidOrderStatus()")
        if len(solveParams) != len(order.outputs) or not solveParams:
            raise _error("InvalidSolveParams()")
        solver = bytes(solveParams[0][1])
        if abi.hexstr(solver[12:]) != msg.sender:
            raise _error("NotOrderOwner()")
        for timestamp, _ in solveParams:
            if timestamp > order.fill_deadline:
                raise _error("FilledTooLate(uint32,uint32)", order.fill_deadline, timestamp)
        run.write(self.status, key, CLAIMED)
        to = abi.hexstr(destination[12:])
        for token, amount in order.inputs:
            data = encode_call("erc20.transfer", to, amount)
            _call_token(run, self.address, token_address(token).lower(), data)
        run.emit(self.address, "escrow.Finalised", bytes.fromhex(key[2:]), solver, destination)
        return ()

    def order_status(self, msg: Message, orderId: bytes) -> tuple[Any, ...]:
        return (self.status.get(abi.hexstr(orderId), 0),)


class OutputSettler(Contract):
    """OIF's ``OutputSettlerSimple`` for ERC-20 outputs: ``fill`` delivers one output.

    ``fill(orderId, output, fillDeadline, fillerData)`` checks ``block.timestamp <=
    fillDeadline`` (``FillDeadline()``), that the output is for this chain and settler
    (``WrongChain``, ``WrongOutputSettler()``), transfers ``output.amount`` of ``output.token``
    from the caller to ``output.recipient`` by ``transferFrom`` (the filler approved the
    settler) and emits ``OutputFilled(orderId, solver, timestamp, output, amount)``.
    """

    functions: ClassVar[Mapping[str, str]] = {"outputSettler.fill": "fill"}

    def __init__(self, address: str, chain_id: int) -> None:
        super().__init__(address)
        self.chain_id = chain_id
        self.filled: dict[bytes, tuple[bytes, int]] = {}

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        return [cls(scenario.chain(chain_id).output_settler, chain_id)]

    def fill(
        self, msg: Message, orderId: bytes, output: Any, fillDeadline: int, fillerData: bytes
    ) -> tuple[Any, ...]:
        run = msg.run
        if run.timestamp > fillDeadline:
            raise _error("FillDeadline()")
        _oracle, settler, chain_id, token, amount, recipient, _cb, _ctx = output
        if chain_id != self.chain_id:
            raise _error("WrongChain(uint256,uint256)", chain_id, self.chain_id)
        if abi.hexstr(bytes(settler)[12:]) != self.address:
            raise _error("WrongOutputSettler()")
        record = keccak(orderId + eth_abi.encode([OUTPUT_TYPE], [output]))
        if record in self.filled:
            raise _error("AlreadyFilled()")
        solver = (
            bytes(fillerData[:32])
            if len(fillerData) >= 32
            else bytes(12) + bytes.fromhex(msg.sender[2:])
        )
        run.write(self.filled, record, (solver, run.timestamp))
        data = encode_call(
            "erc20.transferFrom", msg.sender, abi.hexstr(bytes(recipient)[12:]), amount
        )
        _call_token(run, self.address, abi.hexstr(bytes(token)[12:]), data)
        run.emit(
            self.address,
            "outputSettler.OutputFilled",
            orderId,
            solver,
            run.timestamp,
            output,
            amount,
        )
        return (record,)


register(InputSettlerEscrow)
register(OutputSettler)

assert all(
    key in gas.EXECUTION for cls in (InputSettlerEscrow, OutputSettler) for key in cls.functions
)
