"""The simulation control surface under ``/sim`` (OpenAPI tag ``simulation``).

Not part of the service interface: these endpoints stand in for the chains, through the
simulated world (:mod:`toolkit.world`), so that a whole partner-intents flow runs over HTTP:
quote → transaction → broadcast → fill → settlement → repayment. They need no API key (anyone
can broadcast to a chain) and act at the app's clock.

- ``POST /sim/broadcast``: body a TransactionRequest (the ``transactionRequest`` answered by the
  transaction endpoint). The world decodes the ``open()`` call, checks it as the escrow does
  and escrows the order. Answer: the order (``orderId``, ``status`` ``Deposited``, a simulated
  ``txHash``, ...). A transaction the escrow would not take is a 400 naming the field (``to``,
  ``chainId``, ``data``), with the contract's error name when it would revert.
- ``POST /sim/advance``: the filler settles fills whose settlement delay passed and fills
  orders whose source confirmations passed (retrying until ``fillDeadline``). Answer: order
  ids per outcome (``filled``, ``settled``, ``missed``, ``refunded``) and ``retried``.
- ``POST /sim/fill/{orderId}``, ``POST /sim/settle/{orderId}``: one step now. 404 for an order
  the escrow never saw or no capacity; 409 when the step is not allowed now (wrong status,
  deadline passed, settlement delay not over, terms the service refuses).
- ``GET /sim/pools``: every pool's balance, reserved, outstanding and available amounts.
- ``GET /sim/orders/{orderId}``: an escrowed order and any reservation held under its id; for
  an order whose transaction was built but not broadcast, ``status`` is ``Built`` while the
  reservation lives.
"""

from __future__ import annotations

from typing import Any

from eth_utils import keccak
from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from toolkit.codecs import caip2
from toolkit.engine import EngineError
from toolkit.resources import Hash32, TransactionRequest, parse_value
from toolkit.server.docs import ERROR_RESPONSES, operation
from toolkit.server.errors import ApiError
from toolkit.server.params import json_response, read_body, service_of
from toolkit.server.service import Service
from toolkit.world import OrderState, Reverted, WorldError

__all__ = ["order_wire", "router"]

router = APIRouter(prefix="/sim", tags=["simulation"])

_SIM_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERROR_RESPONSES,
    409: {"description": "Not allowed now", "content": ERROR_RESPONSES[400]["content"]},
}
# World messages name its arguments; the broadcast body uses TransactionRequest wire names.
_BROADCAST_FIELDS = {"tx_to": "to", "chain_id": "chainId", "sender": "from"}


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


def _broadcast_error(exc: WorldError) -> ApiError:
    if isinstance(exc, Reverted):
        return ApiError.bad("data", f"the escrow reverts: {exc.reason} ({exc.detail})")
    head, sep, rest = str(exc).partition(": ")
    if sep and head in _BROADCAST_FIELDS:
        return ApiError.bad(_BROADCAST_FIELDS[head], rest)
    return ApiError.bad("data", str(exc))


def _known(service: Service, key: str) -> None:
    try:
        service.world.order(key)
    except WorldError:
        raise ApiError(404, f"orderId: the escrow holds no order {key}") from None


def _step_error(exc: Exception) -> ApiError:
    if isinstance(exc, EngineError) and exc.status == 404:
        return ApiError(404, f"orderId: {exc}")
    return ApiError(409, f"orderId: {exc}")


@router.post(
    "/broadcast",
    summary="Broadcast an escrow open() transaction (simulation)",
    responses=ERROR_RESPONSES,
)
async def broadcast(request: Request) -> Response:
    service = service_of(request)
    tx = await read_body(request, TransactionRequest)
    now = service.now()
    try:
        key = service.world.broadcast(tx.to, tx.chain_id, tx.data, tx.from_, now)
    except WorldError as exc:
        raise _broadcast_error(exc) from None
    body = order_wire(service.world.order(key))
    # A stand-in transaction hash: the world has no blocks, but a deposit needs a name.
    body["txHash"] = "0x" + keccak(tx.chain_id.to_bytes(32, "big") + bytes.fromhex(key[2:])).hex()
    body["reservation"] = _reservation(service, key, now)
    service.notify()
    return json_response(body)


@router.post(
    "/advance",
    summary="Fill and settle what is due at the current clock (simulation)",
)
async def advance(request: Request) -> Response:
    service = service_of(request)
    now = service.now()
    progress = service.world.advance(now)
    service.notify()
    return json_response({"time": now, **progress._asdict()})


@router.post(
    "/fill/{orderId}",
    summary="Fill one escrowed order now (simulation)",
    responses=_SIM_ERRORS,
    openapi_extra=operation(path=["orderId"]),
)
async def fill(request: Request) -> Response:
    service = service_of(request)
    key = _order_id(request.path_params["orderId"])
    _known(service, key)
    try:
        service.world.fill(key, service.now())
    except (WorldError, EngineError) as exc:
        raise _step_error(exc) from None
    service.notify()
    return json_response(order_wire(service.world.order(key)))


@router.post(
    "/settle/{orderId}",
    summary="Settle one filled order: the pool is repaid with the fee (simulation)",
    responses=_SIM_ERRORS,
    openapi_extra=operation(path=["orderId"]),
)
async def settle(request: Request) -> Response:
    service = service_of(request)
    key = _order_id(request.path_params["orderId"])
    _known(service, key)
    try:
        settlement = service.world.settle(key, service.now())
    except (WorldError, EngineError) as exc:
        raise _step_error(exc) from None
    service.notify()
    body = order_wire(service.world.order(key))
    body["settlement"] = {
        "pool": settlement.pool,
        "repaid": str(settlement.amount),
        "earned": str(settlement.earned),
    }
    return json_response(body)


@router.get("/pools", summary="Every pool's figures (simulation)")
async def pools(request: Request) -> Response:
    service = service_of(request)
    service.sync()
    states = service.engine.pools(service.now())
    service.notify()
    data = [
        {
            "id": p.id,
            "chain": f"eip155:{p.chain}",
            "token": p.symbol,
            "poolType": p.type,
            "address": p.address,
            "balance": str(p.balance),
            "reserved": str(p.reserved),
            "outstanding": str(p.outstanding),
            "available": str(p.available),
        }
        for p in states
    ]
    return json_response({"data": data})


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
