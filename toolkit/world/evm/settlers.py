"""The partner-escrow settlers as simulated contracts: the input settler escrow and the output
settler, deployed at every scenario chain's ``escrow`` and ``output_settler`` addresses.

Names, selectors, events and revert errors follow OIF's ``InputSettlerEscrow`` and
``OutputSettlerSimple`` (research: ``intents-encoding.md`` §1; ``openintentsframework/
oif-contracts``: ``src/input/escrow/InputSettlerEscrow.sol``, ``src/input/InputSettlerBase.sol``,
``src/input/InputSettlerPurchase.sol``, ``src/libs/MandateOutputEncodingLib.sol``).

``finalise(order, solveParams, destination, call)`` pays only for proven fills, as OIF's does,
checking in its order: ``NoDestination()`` (the destination's low 20 bytes are zero),
``WrongChain``, the caller is ``solveParams[0].solver`` (``NotOrderOwner()``; no order
purchases here, so the owner is always that solver), then ``_validateFills``: one solve
parameter per output (``InvalidTimestampLength()``), each fill timestamp at most
``fillDeadline`` (``FilledTooLate(uint32,uint32)``), and the proof series (per output its chain
id, oracle, settler and the payload hash of the fill description the solver and timestamp
give: :mod:`toolkit.codecs.proofs`) proven by the order's ``inputOracle``
(``efficientRequireProven``: the simulated oracle reverts ``NotProven()``,
:mod:`toolkit.world.evm.input_oracle`); only then ``InvalidOrderStatus()`` unless the order is
``Deposited``, the inputs to ``destination`` and ``Finalised``. An input oracle address
without code reverts with no data, as Solidity's call to an account without code does.
``finalise`` is not blocked after ``expires`` (OIF's neither).

Where the simulation chooses (the research is silent or the real thing needs what is not
simulated):

- **No governance fee**: ``refund`` and ``finalise`` move the whole inputs.
- ``fill`` of an output already filled reverts with ``AlreadyFilled()`` (OIF returns the
  existing record); the solver is ``fillerData``'s first word (OIF's ``proposedSolver``), or
  the caller when ``fillerData`` is shorter. Native outputs (token zero) are not supported.
- ``finalise`` with a non-empty ``call`` reverts (no ``orderFinalised`` callback is simulated);
  with no solve parameters it reverts ``Panic(0x32)``, Solidity's out-of-bounds read of
  ``solveParams[0]``.
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
from eth_utils import keccak

from toolkit.codecs import abi
from toolkit.codecs.escrow import (
    OUTPUT_TYPE,
    MandateOutput,
    StandardOrder,
    order_id,
    token_address,
)
from toolkit.codecs.functions import encode_call
from toolkit.codecs.proofs import fill_description, payload_hash, proof_series
from toolkit.scenario import Scenario
from toolkit.world.evm import gas
from toolkit.world.evm.contracts import Contract, Execution, Message, Revert, register

__all__ = ["CLAIMED", "DEPOSITED", "REFUNDED", "InputSettlerEscrow", "OutputSettler"]

#: ``orderStatus`` values (OIF's enum ``None, Deposited, Claimed, Refunded``).
DEPOSITED: Final = 1
CLAIMED: Final = 2
REFUNDED: Final = 3


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
        tuple(MandateOutput.from_abi(o) for o in outputs),
    )


class InputSettlerEscrow(Contract):
    """OIF's ``InputSettlerEscrow``: ``open``, ``refund``, ``finalise``, ``orderStatus``.

    ``open(order)`` checks as the contract does (``WrongChain``, ``TimestampPassed`` for
    ``fillDeadline`` then ``expires``, ``FillDeadlineAfterExpiry``, ``InvalidOrderStatus``),
    pulls every input from ``msg.sender`` by ``transferFrom`` (the caller approved the escrow)
    and emits ``Open(orderId, order)``. ``refund(order)``, by anyone once ``expires`` passed
    (``TimestampNotPassed``), returns the inputs to ``order.user`` with ``Refunded(orderId)``.
    ``finalise`` pays the inputs to ``destination`` with ``Finalised`` once the order's input
    oracle proves every output filled (see the module docstring for its checks).
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
            raise Revert.custom("WrongChain(uint256,uint256)", order.origin_chain_id, self.chain_id)
        if not run.timestamp < order.fill_deadline or not run.timestamp < order.expires:
            raise Revert.custom("TimestampPassed()")
        if order.fill_deadline > order.expires:
            raise Revert.custom(
                "FillDeadlineAfterExpiry(uint32,uint32)", order.fill_deadline, order.expires
            )
        key = order_id(order, self.address)
        if self.status.get(key, 0) != 0:
            raise Revert.custom("InvalidOrderStatus()")
        run.write(self.status, key, DEPOSITED)
        for token, amount in order.inputs:
            data = encode_call("erc20.transferFrom", msg.sender, self.address, amount)
            _call_token(run, self.address, token_address(token).lower(), data)
        run.emit(self.address, "escrow.Open", bytes.fromhex(key[2:]), order.as_abi())
        return ()

    def refund(self, msg: Message, order: Any) -> tuple[Any, ...]:
        run, order = msg.run, _order(order)
        if order.origin_chain_id != self.chain_id:
            raise Revert.custom("WrongChain(uint256,uint256)", order.origin_chain_id, self.chain_id)
        if not run.timestamp > order.expires:
            raise Revert.custom("TimestampNotPassed()")
        key = order_id(order, self.address)
        if self.status.get(key, 0) != DEPOSITED:
            raise Revert.custom("InvalidOrderStatus()")
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
        if not any(destination[12:]):
            raise Revert.custom("NoDestination()")
        if order.origin_chain_id != self.chain_id:
            raise Revert.custom("WrongChain(uint256,uint256)", order.origin_chain_id, self.chain_id)
        key = order_id(order, self.address)
        if not solveParams:
            raise Revert.custom("Panic(uint256)", 0x32)  # solveParams[0] out of bounds
        solver = bytes(solveParams[0][1])
        if abi.hexstr(solver[12:]) != msg.sender:
            raise Revert.custom("NotOrderOwner()")
        self._validate_fills(run, order, key, solveParams)
        if self.status.get(key, 0) != DEPOSITED:
            raise Revert.custom("InvalidOrderStatus()")
        if call:
            raise Revert(b"", "orderFinalised callbacks are not simulated")
        run.write(self.status, key, CLAIMED)
        to = abi.hexstr(destination[12:])
        for token, amount in order.inputs:
            data = encode_call("erc20.transfer", to, amount)
            _call_token(run, self.address, token_address(token).lower(), data)
        run.emit(self.address, "escrow.Finalised", bytes.fromhex(key[2:]), solver, destination)
        return ()

    def _validate_fills(
        self, run: Execution, order: StandardOrder, key: str, solve_params: Any
    ) -> None:
        """OIF's ``_validateFills``: every output's fill proven by the order's input oracle."""
        if len(solve_params) != len(order.outputs):
            raise Revert.custom("InvalidTimestampLength()")
        proofs = []
        for output, (timestamp, solver) in zip(order.outputs, solve_params, strict=True):
            if timestamp > order.fill_deadline:
                raise Revert.custom("FilledTooLate(uint32,uint32)", order.fill_deadline, timestamp)
            description = fill_description(abi.hexstr(bytes(solver)), key, timestamp, output)
            proofs.append((output, payload_hash(description)))
        oracle = order.input_oracle.lower()
        if oracle not in run.state.contracts:
            raise Revert(b"", "input oracle has no code")
        data = encode_call("inputOracle.efficientRequireProven", proof_series(proofs))
        run.call(self.address, oracle, bytes.fromhex(data[2:]))

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
            raise Revert.custom("FillDeadline()")
        _oracle, settler, chain_id, token, amount, recipient, _cb, _ctx = output
        if chain_id != self.chain_id:
            raise Revert.custom("WrongChain(uint256,uint256)", chain_id, self.chain_id)
        if abi.hexstr(bytes(settler)[12:]) != self.address:
            raise Revert.custom("WrongOutputSettler()")
        record = keccak(orderId + eth_abi.encode([OUTPUT_TYPE], [output]))
        if record in self.filled:
            raise Revert.custom("AlreadyFilled()")
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
