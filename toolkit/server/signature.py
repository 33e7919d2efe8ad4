"""The borrow signing authorization: ``POST /liquidity/v2/chain/{dstChain}/protocol/{p}/signature``.

Answer: ``text/event-stream`` carrying ONE event named ``data`` whose data is the stringified
JSON ``{"data": BorrowAuthorization}``; the stream then ends. The signature is a real EIP-712
``Borrow`` signature by the scenario's signing key (recoverable with
:func:`toolkit.chain.borrow.recover_borrow_signer`), over: caller, the borrowed token and amount
of the quote, target = the output settler of the destination chain (where a partner-escrow fill
is delivered), ``targetCallData`` = the body's ``input``, a fresh nonce and a deadline of the
order window (60 s) from now.

Errors are decided before any stream starts and leave as plain JSON ``{error}`` bodies with a
400 (or 401) status, never as events: a client sees a status code it can act on, and a stream
that started always carries an authorization. The vendor document declares its 400 under the
event-stream media type without saying how it is framed; a plain body is the choice here.

``txHash`` is checked for form only: the simulation does not watch other solvers' deposits.

On the simulated chains the authorized loan is the filler's transfer of the amount to
``caller`` on ``dstChain``, and the caller repays by transferring ``requiredInput`` to the
quote's ``repaymentRecipient`` on its ``repaymentChain`` (:mod:`toolkit.world.lending`); so a
``caller`` that is the filler itself or the zero address is refused (400 naming ``caller``).
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import Response

from toolkit.chain.borrow import Borrow, sign_borrow
from toolkit.codecs import caip2
from toolkit.codecs.errors import InvalidValue
from toolkit.engine import EngineError
from toolkit.resources import SignatureBody, SignatureResponse
from toolkit.server.docs import ERROR_RESPONSES, operation
from toolkit.server.errors import ApiError
from toolkit.server.intents import engine_error
from toolkit.server.params import (
    check_protocol,
    path_chain,
    read_body,
    require_key,
    service_of,
)
from toolkit.server.routing import surface_router

__all__ = ["router"]

router = surface_router(tags=["liquidity"])

_BORROW = "borrow"


async def _one_event(payload: str) -> AsyncIterator[ServerSentEvent]:
    yield ServerSentEvent(data=payload, event="data")


@router.post(
    "/liquidity/v2/chain/{dstChain}/protocol/{protocol}/signature",
    summary="Signing authorization for a borrow (one SSE event named data)",
    description=(
        "Consumes the live borrow quote ``quoteId`` and streams one event ``data`` whose data "
        "is the JSON text of {data: BorrowAuthorization}, then ends. Errors (bad body, unknown "
        "or lapsed quote, wrong chain, a caller that is the service's filler or the zero "
        "address) are plain JSON 400 bodies sent before any stream starts. On the simulated "
        "chains the loan is then transferred to ``caller`` on ``dstChain``; it is repaid by "
        "the caller's transfer of ``requiredInput`` to ``repaymentRecipient`` on the quote's "
        "``repaymentChain``."
    ),
    responses={
        200: {
            "description": "One event named data",
            "content": {"text/event-stream": {"schema": SignatureResponse.model_json_schema()}},
        },
        400: ERROR_RESPONSES[400],
        401: ERROR_RESPONSES[401],
    },
    response_class=EventSourceResponse,
    openapi_extra=operation(path=["dstChain", "protocol"], key=True, body=SignatureBody),
)
async def signature(request: Request) -> Response:
    service = service_of(request)
    require_key(request, service)
    dst = path_chain(request.path_params["dstChain"], "dstChain")
    check_protocol(request.path_params["protocol"])
    body = await read_body(request, SignatureBody)
    # No await from here to the response: lookup, signature and consumption are one step.
    now = service.now()
    reservation = service.engine.reservation(body.quote_id, now)
    quote = reservation.quote if reservation is not None else None
    if reservation is None or reservation.kind != _BORROW or quote is None:
        raise ApiError.bad(
            "quoteId", f"{body.quote_id} is not a live borrow quote (lapsed, used or unknown)"
        )
    if quote.dst_chain != dst:
        raise ApiError.bad(
            "dstChain", f"must be the quote's destination chain {caip2.format(quote.dst_chain)}"
        )
    src_chain = body.metadata.src_chain if body.metadata is not None else None
    if src_chain is not None and caip2.parse(src_chain) != quote.src_chain:
        raise ApiError.bad(
            "metadata.srcChain", f"must be the quote's source chain {caip2.format(quote.src_chain)}"
        )
    try:
        service.relay.loans.check_borrower(body.caller)
    except ValueError as exc:
        raise ApiError.bad("caller", str(exc)) from None
    nonce = service.next_nonce()
    deadline = math.floor(now) + service.scenario.windows.order_s
    try:
        borrow = Borrow(
            chain_id=dst,
            pool=quote.pool_address,
            caller=body.caller,
            borrow_token=quote.dst_token,
            amount=reservation.amount,
            target=service.scenario.chain(dst).output_settler,
            target_call_data=bytes.fromhex(body.input[2:]),
            nonce=nonce,
            deadline=deadline,
        )
    except InvalidValue as exc:
        raise ApiError.bad(exc.field, exc.rule) from None
    signed = sign_borrow(service.scenario.auth.signer_key.reveal(), borrow)
    try:
        loan = service.engine.authorize(body.quote_id, now)
    except EngineError as exc:
        raise engine_error(exc, "quoteId") from None
    service.relay.lend(loan, body.caller, quote.repayment_chain, now)
    service.notify()
    payload = {
        "data": {
            "borrowAmount": str(loan.amount),
            "borrowCost": str(loan.cost),
            "borrowToken": loan.token,
            "liquidityPool": loan.pool_address,
            "nonce": str(nonce),
            "signature": signed,
            "deadline": str(deadline),
        }
    }
    text = json.dumps(payload, separators=(",", ":"))
    return EventSourceResponse(_one_event(text), ping=0)
