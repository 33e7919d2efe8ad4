"""Read an ``open()`` transaction the way the escrow contract does, into an EscrowOrder.

Checks, in the contract's order (partner-escrow input settler ``open``): the transaction goes to
the escrow, ``originChainId`` equals the chain, ``now < fillDeadline``, ``now < expires``,
``fillDeadline <= expires``; the inputs are pulled from the sender (recorded as depositor), and
input token ids must be clean addresses (checked by the decoder).
"""

from __future__ import annotations

from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.escrow import (
    StandardOrder,
    decode_open,
    from_bytes32,
    order_id,
    parse_context,
    token_address,
)
from toolkit.engine import OrderTerms
from toolkit.scenario import Scenario
from toolkit.world.order import EscrowOrder, Reverted, WorldError

__all__ = ["escrow_order", "read_open"]


def read_open(scenario: Scenario, tx_to: str, chain_id: int, data: str, now: float) -> EscrowOrder:
    """Decode and check ``open()`` calldata sent to ``tx_to`` on ``chain_id`` at ``now``.

    Raises :class:`WorldError` for a transaction the simulated escrow cannot take (wrong
    contract, undecodable data, an order shape the service does not fill) and
    :class:`Reverted` where the real contract would revert.

    >>> from toolkit.scenario import load_scenario
    >>> try:
    ...     read_open(load_scenario("default", env={}), "0x" + "00" * 20, 1, "0x", 0.0)
    ... except WorldError as exc:
    ...     print(exc)
    tx_to: 0x0000000000000000000000000000000000000000 is not the escrow on chain 1
    """
    if type(chain_id) is not int:
        raise WorldError("chain_id: must be an integer chain id")
    try:
        chain = scenario.chain(chain_id)
    except KeyError:
        raise WorldError(f"chain_id: chain {chain_id} is not in the scenario") from None
    if not isinstance(tx_to, str) or tx_to.lower() != chain.escrow.lower():
        raise WorldError(f"tx_to: {tx_to} is not the escrow on chain {chain_id}")
    try:
        order = decode_open(data)
    except InvalidValue as exc:
        raise WorldError(str(exc)) from None
    if order.origin_chain_id != chain_id:
        raise Reverted(
            "WrongChain", f"originChainId {order.origin_chain_id} but the chain is {chain_id}"
        )
    if not now < order.fill_deadline:
        raise Reverted("TimestampPassed", f"fillDeadline {order.fill_deadline} is not after {now}")
    if not now < order.expires:
        raise Reverted("TimestampPassed", f"expires {order.expires} is not after {now}")
    if order.fill_deadline > order.expires:
        raise Reverted(
            "FillDeadlineAfterExpiry", f"fillDeadline {order.fill_deadline} > {order.expires}"
        )
    return escrow_order(scenario, chain_id, order)


def escrow_order(scenario: Scenario, chain_id: int, order: StandardOrder) -> EscrowOrder:
    """The EscrowOrder the world holds for ``order`` opened on ``chain_id``'s escrow.

    One path for both sources of orders: :func:`read_open` (calldata) and the chains'
    ``Open`` events (:mod:`toolkit.world.relay`).
    """
    chain = scenario.chain(chain_id)
    if len(order.inputs) != 1 or len(order.outputs) != 1:
        raise WorldError("order: the simulated escrow holds single-input, single-output orders")
    (token, amount), output = order.inputs[0], order.outputs[0]
    try:
        exclusivity = parse_context(output.context)
        output_token = from_bytes32(output.token)
        recipient = from_bytes32(output.recipient)
    except InvalidValue as exc:
        raise WorldError(f"outputs[0]: {exc}") from None
    terms = OrderTerms(
        chain_id, token_address(token), amount, output.chain_id, output_token, output.amount
    )
    return EscrowOrder(
        order_id=order_id(order, chain.escrow),
        user=order.user,
        terms=terms,
        recipient=recipient,
        fill_deadline=order.fill_deadline,
        expires=order.expires,
        exclusive_for=None if exclusivity is None else exclusivity.filler,
        exclusive_until=0 if exclusivity is None else exclusivity.start_time,
    )
