"""The credit API (no key): protocol configuration, account info, collateral details, operator
status, and the endpoints that build unsigned calls (lock, unlock, draw, repay, auto top-up,
earn wrap/unwrap/claim), all answered from the credit ledger of the simulated chains
(:mod:`toolkit.world.evm.credit`).

Every figure comes from :mod:`toolkit.credit` through the hub's state at the service's clock.
Choices where the interface is silent, stated in the operation descriptions too:

- ``/info`` reports amounts in human units with the credit asset's decimals (``"995.000000"``)
  and health factors rounded down to 4 decimals (``"Infinity"`` with no debt); ``dueDate`` is
  ISO 8601 UTC, null with no debt.
- A draw beyond the remaining credit capacity, an unlock that leaves the position liquidatable
  or more than is locked, and a repay with no debt are 400s saying so; an unsupported
  collateral is 404, and so is a credit asset the scenario has no hub for.
- ``{asset}`` = ``eure`` is the EURe hub: the same rules and collateral, figures in EURe (18
  decimals; collateral valued at its USD price over the scenario's euro price), its own hub,
  escrow and operator; ``/info`` lists it under ``EURE`` beside ``USDC``. ``/credit/protocol``
  lists both hubs under ``creditHubs``; its collateral entries name the USDC hub's escrow (the
  document has one escrow per collateral), the EURe hub's lock calls name its own.
- Auto top-up settings are the service's own records (not on chain): enable (v2, or v1 with
  ``threshold`` and ``targetBalance``) and update store them, disable drops them, config reads
  them (404 when none). Update returns the calls still missing for the operator setup (usually
  none). The service executes them (:mod:`toolkit.world.topup`: the operator's caller draws
  for a card below its threshold, up to its target, keeping the health factor at or above the
  record's), and ``evm_revert`` rolls them back with the relay.
- Collateral on another chain (USDC on Ethereum by default) is named by its address there:
  lock and unlock then build calls on that chain's escrow (the interface has no chain
  parameter; the address says it). The hub counts a lock, and books off an unlock, once the
  source chain's confirmations have passed (:mod:`toolkit.world.collateral`); ``/info`` shows
  it from then on, and an unlock checks what the hub has booked.
- Lock with ``earn`` wraps the underlying into the strategy's ERC-4626 vault and locks the
  shares that deposit mints if it is mined within an hour (the share price grows every second,
  so a later deposit mints fewer); what it mints beyond that stays in the wallet.
- Unwrapping an ERC-7540 vault position (``/credit/earn/unwrap``, or unlock with ``unwrap``)
  requests the redemption (``requestRedeem``); ``/credit/earn/claim`` builds the claim of request
  ``claimRequestId`` (the ``requestId`` of the vault's ``RedeemRequest`` event) once it is
  claimable, a 400 saying when before that. A claim on a synchronous vault is a 400.

The operations, in the order they are served, by module:

- :mod:`.reads`: protocol configuration, account info, collateral details, operator status;
- :mod:`.lock`: lock and unlock; :mod:`.debt`: draw and repay (the card program's hot path);
- :mod:`.topup`: auto top-up enable, update, disable and config; :mod:`.earn`: wrap, unwrap, claim.

They share :mod:`.book` (the credit contracts a request addresses, its path parameters, the error
responses), :mod:`.wire` (figures and call lists on the wire) and :mod:`.strategies`.
"""

from toolkit.server.credit import debt, earn, lock, reads, topup
from toolkit.server.credit.book import CREDIT_ASSETS
from toolkit.server.credit.debt import draw_v1, draw_v2, hot_call, repay_v1, repay_v2
from toolkit.server.credit.earn import claim, unwrap, wrap
from toolkit.server.credit.lock import WRAP_HORIZON, lock_v1, lock_v2, unlock_v1, unlock_v2
from toolkit.server.credit.reads import (
    ZERO,
    collateral_v1,
    collateral_v2,
    info,
    operator_v1,
    operator_v2,
    protocol,
)
from toolkit.server.credit.strategies import STRATEGIES, Strategy
from toolkit.server.credit.topup import (
    TopUp,
    config_v2,
    disable_v1,
    disable_v2,
    enable_v1,
    enable_v2,
    topups,
    update_v2,
)
from toolkit.server.credit.wire import info_wire
from toolkit.server.routing import surface_router

__all__ = [
    "CREDIT_ASSETS",
    "STRATEGIES",
    "WRAP_HORIZON",
    "ZERO",
    "Strategy",
    "TopUp",
    "claim",
    "collateral_v1",
    "collateral_v2",
    "config_v2",
    "disable_v1",
    "disable_v2",
    "draw_v1",
    "draw_v2",
    "enable_v1",
    "enable_v2",
    "hot_call",
    "info",
    "info_wire",
    "lock_v1",
    "lock_v2",
    "operator_v1",
    "operator_v2",
    "protocol",
    "repay_v1",
    "repay_v2",
    "router",
    "topups",
    "unlock_v1",
    "unlock_v2",
    "unwrap",
    "update_v2",
    "wrap",
]

#: Every credit operation, in the order served. The modules' routes are taken as they are rather
#: than through ``include_router``, which would keep each included router as one more branch to
#: match through.
router = surface_router(tags=["credit"])
router.routes.extend(r for m in (reads, lock, debt, topup, earn) for r in m.router.routes)
