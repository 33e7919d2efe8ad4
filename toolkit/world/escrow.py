"""An opened escrow order as the world holds it: :func:`escrow_order` turns a decoded
``StandardOrder`` (from a chain's ``Open`` event) into an :class:`EscrowOrder`.

The escrow contract on the simulated chains (:mod:`toolkit.world.evm.settlers`) makes the
contract's checks; :meth:`toolkit.world.World.deposit` repeats the timing checks for the
backtests' fast path.
"""

from __future__ import annotations

from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.escrow import (
    StandardOrder,
    from_bytes32,
    order_id,
    parse_context,
    token_address,
)
from toolkit.engine import OrderTerms
from toolkit.scenario import Scenario
from toolkit.world.order import EscrowOrder, Reverted, WorldError

__all__ = ["check_timing", "escrow_order"]


def check_timing(order: EscrowOrder, now: float) -> None:
    """The escrow's timing checks on opening ``order`` at ``now`` (the contract's revert names):
    ``now < fillDeadline <= expires``.

    >>> from toolkit.engine import OrderTerms
    >>> terms = OrderTerms(1, "0xa", 5, 8453, "0xb", 4)
    >>> check_timing(EscrowOrder("0x01", "0xu", terms, "0xu", 100, 200), now=150.0)
    Traceback (most recent call last):
    ...
    toolkit.world.order.Reverted: TimestampPassed: fillDeadline 100 is not after 150.0
    """
    if not isinstance(order, EscrowOrder):
        raise WorldError("order: must be an EscrowOrder")
    if not now < order.fill_deadline:
        raise Reverted("TimestampPassed", f"fillDeadline {order.fill_deadline} is not after {now}")
    if not now < order.expires:
        raise Reverted("TimestampPassed", f"expires {order.expires} is not after {now}")
    if order.fill_deadline > order.expires:
        raise Reverted(
            "FillDeadlineAfterExpiry", f"fillDeadline {order.fill_deadline} > {order.expires}"
        )


def escrow_order(scenario: Scenario, chain_id: int, order: StandardOrder) -> EscrowOrder:
    """The EscrowOrder the world holds for ``order`` opened on ``chain_id``'s escrow.

    The chains' ``Open`` events become world orders through it (:mod:`toolkit.world.relay`);
    a test can feed it a decoded ``open()`` calldata the same way.
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
