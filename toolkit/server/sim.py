"""The simulation's read-only surface under ``/sim`` (OpenAPI tag ``simulation``): what the
chains' JSON-RPC cannot say, the engine's record of an order.

Not part of the service interface, and no API key needed. Everything that acts on the simulated
world goes through standard Ethereum JSON-RPC at ``/rpc/{chainId}`` (:mod:`toolkit.server.rpc`):
the user's ``approve`` and ``open()`` by ``eth_sendRawTransaction`` (or ``eth_sendTransaction``
from a development or impersonated account), time by ``evm_increaseTime``/``evm_mine`` (which
also let the service's filler fill and settle what falls due), what-if by
``evm_snapshot``/``evm_revert``; the pools' figures by ``eth_call`` of the pool contracts'
views (:mod:`toolkit.world.evm.pools`: ``balance``, ``reserved``, ``outstanding``,
``available`` of a token, as the engine has them). What stays here is what no contract holds,
the engine's record of an order, the loans owed and the engine's books against the chains':

- ``GET /sim/orders/{orderId}``: an order the escrow emitted ``Open`` for, as the world tracks
  it (status, the fill's pool, amount and fee, the fill, settlement and refund times) and any
  reservation held under its id; for an order whose transaction was built but not opened on
  chain, ``status`` is ``Built`` while the reservation lives.
- ``GET /sim/loans``: the liquidity API's loans not repaid yet, oldest first
  (:mod:`toolkit.world.lending`): the borrower (the authorization's ``caller``), what was lent
  where, what is owed on which ``repaymentChain``, the state of the filler's transfer to the
  borrower and what the borrower paid toward it so far. A borrower that cannot repay leaves its
  loan here, outstanding in the engine too.
- ``GET /sim/reconciliation``: the (chain, token) pairs where the service's holdings on chain
  (the filler's balance, its own transactions not yet mined accounted for) differ from the
  engine's (:meth:`toolkit.world.relay.Relay.reconcile`); ``mismatches`` is empty when the
  books agree.

Each brings the world up to the chains first (the escrow's events, the filler's due steps).
"""

from __future__ import annotations

from typing import Any

from eth_utils import to_checksum_address
from starlette.requests import Request
from starlette.responses import Response

from toolkit.codecs import caip2
from toolkit.resources import Hash32, parse_value
from toolkit.server.docs import ERROR_RESPONSES, operation
from toolkit.server.errors import ApiError
from toolkit.server.params import json_response, service_of
from toolkit.server.routing import surface_router
from toolkit.server.service import Service
from toolkit.world import OrderState, WorldError

__all__ = ["order_wire", "router"]

router = surface_router(prefix="/sim", tags=["simulation"])


def _order_id(text: str) -> str:
    value: str = parse_value(Hash32, text, "orderId")
    return value


def order_wire(state: OrderState) -> dict[str, Any]:
    """The JSON form of an escrowed order."""
    order, terms = state.order, state.order.terms
    body: dict[str, Any] = {
        "orderId": order.order_id,
        "status": state.status.value,
        "user": order.user,
        "depositor": state.depositor,
        "recipient": order.recipient,
        "input": {
            "chain": caip2.format(terms.src_chain),
            "token": terms.input_token,
            "amount": str(terms.input_amount),
        },
        "output": {
            "chain": caip2.format(terms.dst_chain),
            "token": terms.output_token,
            "amount": str(terms.output_amount),
        },
        "fillDeadline": order.fill_deadline,
        "expires": order.expires,
        "exclusiveFor": order.exclusive_for,
        "exclusiveUntil": order.exclusive_until,
        "depositedAt": state.deposited_at,
        "filledAt": state.filled_at,
        "settledAt": state.settled_at,
        "refundedAt": state.refunded_at,
        "fill": None,
    }
    if state.fill is not None:
        body["fill"] = {
            "pool": state.fill.pool,
            "amount": str(state.fill.amount),
            "earned": str(state.fill.earned),
            "reserved": state.fill.reserved,
            "exclusive": state.exclusive_fill,
        }
    return body


def _reservation(service: Service, key: str, now: float) -> dict[str, Any] | None:
    reservation = service.engine.reservation(key, now)
    if reservation is None:
        return None
    return {
        "kind": reservation.kind,
        "pool": reservation.pool,
        "amount": str(reservation.amount),
        "expiresAt": reservation.expires_at,
    }


@router.get(
    "/orders/{orderId}",
    summary="One order and the reservation held under its id (simulation)",
    responses=ERROR_RESPONSES,
    openapi_extra=operation(path=["orderId"]),
)
async def order(request: Request) -> Response:
    service = service_of(request)
    key = _order_id(request.path_params["orderId"])
    service.sync()
    now = service.now()
    reservation = _reservation(service, key, now)
    try:
        body = order_wire(service.world.order(key))
    except WorldError:
        if reservation is None:
            raise ApiError(404, f"orderId: no escrowed order and no reservation {key}") from None
        body = {"orderId": key, "status": "Built"}
    body["reservation"] = reservation
    return json_response(body)


@router.get(
    "/loans",
    summary="The liquidity API's loans not repaid yet (simulation)",
    responses=ERROR_RESPONSES,
    openapi_extra=operation(),
)
async def loans(request: Request) -> Response:
    service = service_of(request)
    service.sync()
    body = {
        "time": service.now(),
        "loans": [
            {
                "quoteId": loan.quote_id,
                "borrower": to_checksum_address(loan.borrower),
                "chain": caip2.format(loan.chain),
                "token": loan.symbol,
                "amount": str(loan.amount),
                "repaymentChain": loan.repayment_chain,
                "owed": str(loan.owed),
                "transfer": loan.transfer,
                "paid": str(loan.credit),
            }
            for loan in service.relay.loans.outstanding()
        ],
    }
    return json_response(body)


@router.get(
    "/reconciliation",
    summary="The engine's holdings per chain and token against the chains' (simulation)",
    responses=ERROR_RESPONSES,
    openapi_extra=operation(),
)
async def reconciliation(request: Request) -> Response:
    service = service_of(request)
    service.sync()
    now = service.now()
    mismatches = service.relay.reconcile(now)
    body = {
        "time": now,
        "checked": len(service.scenario.tokens),
        "mismatches": [
            {
                "chain": caip2.format(m.chain),
                "token": m.symbol,
                "engine": str(m.engine),
                "onChain": str(m.chain_figure),
                "fillerBalance": str(m.balance),
                "unmined": str(m.unmined),
            }
            for m in mismatches
        ],
    }
    return json_response(body)
