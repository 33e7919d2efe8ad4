"""The simulated world behind the partner-intents flow: the escrow, the filler, settlement.

:class:`World` wraps a :class:`toolkit.engine.Engine` and shares its clock (every call takes
``now`` and moves the engine's clock; time never goes backwards).

- :meth:`World.deposit` records an order ``Deposited`` under
  :func:`toolkit.codecs.escrow.order_id` (``now < fillDeadline <= expires``, one deposit per
  order id). Orders arrive from the chains' escrow ``Open`` events (:mod:`toolkit.world.relay`,
  through :func:`toolkit.world.escrow.escrow_order`) or, in backtests, as an
  :class:`EscrowOrder` built directly, with no ABI encoding.
- The service's filler: :meth:`World.fill` (engine fill, until fillDeadline, honouring
  exclusivity; the destination's inventory pays the output), :meth:`World.unfill` when that
  fill's transaction reverted (the order is Deposited again), :meth:`World.settle` after the
  settlement delay (engine settle: the input is booked on the origin chain, or, under the
  ``instant-free`` policy, the lending pool is repaid in place), :meth:`World.refund` after
  ``expires`` for unfilled orders. :meth:`World.escrowed` sums the inputs the escrows hold.
- :meth:`World.advance` runs the filler up to ``now``: settles every filled order whose
  settlement delay passed and fills every escrowed order whose quote ``eta`` passed (source
  confirmations, then the destination's fill time); failed fills are retried until the
  fillDeadline, then reported missed (reclaimable).
- ``World(..., driven=True)`` leaves the filler to its caller (a backtest's event loop calls
  :meth:`World.fill` and :meth:`World.settle` when they fall due): no schedule is kept.

Statuses: Deposited, Filled, Settled, Refunded (:class:`OrderStatus`).
"""

from toolkit.world.order import (
    EscrowOrder,
    OrderState,
    OrderStatus,
    Progress,
    Reverted,
    WorldError,
)
from toolkit.world.world import World

__all__ = [
    "EscrowOrder",
    "OrderState",
    "OrderStatus",
    "Progress",
    "Reverted",
    "World",
    "WorldError",
]
