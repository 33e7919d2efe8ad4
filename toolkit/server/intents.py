"""The partner-intents surface: ``GET /partner-intents/rfq`` and ``POST .../transaction``.

RFQ: the API key, then the query (400 naming the parameter), then one engine call that prices
the order and reserves its output for the quote window (400 no route, 404 no capacity).

Transaction: the posted quote is validated (mixed-origin inputs are a 400), the escrow
``open()`` call is built, and when the quote carries a live ``quoteId`` the engine re-keys its
reservation to the orderId for the order window. Without a quoteId, or after it lapsed, the
calldata is returned all the same and nothing is reserved or refreshed, as the spec says.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from toolkit.chain.builder import build_open
from toolkit.codecs import erc7930
from toolkit.engine import EngineError, ReservedQuote
from toolkit.resources import FAILURE_HANDLING, PROVIDER, Quote, RfqQuery, RfqResponse
from toolkit.server.docs import ERROR_RESPONSES, operation
from toolkit.server.errors import ApiError
from toolkit.server.params import json_response, read_body, read_query, require_key, service_of
from toolkit.server.routing import surface_router

__all__ = ["engine_error", "interop", "router"]

router = surface_router(tags=["partner-intents"])

# Engine messages name arguments in snake_case; clients know the wire names.
_WIRE_NAMES = {
    "src_chain": "srcChain",
    "dst_chain": "dstChain",
    "src_token": "srcToken",
    "kind": "type",
    "order_id": "orderId",
    "quote_id": "quoteId",
}


def engine_error(exc: EngineError, field: str) -> ApiError:
    """The HTTP answer to an engine error: the argument it names (by its wire name) and the
    rule, or ``field`` and the message when it names none.

    >>> from toolkit.engine import CapacityExhausted, InvalidArgument
    >>> engine_error(CapacityExhausted("no pool can serve it"), "amount").error
    'amount: no pool can serve it'
    >>> engine_error(InvalidArgument("quote_id", "no live quote reservation 'q1'"), "x").error
    "quoteId: no live quote reservation 'q1'"
    """
    if exc.field is not None and exc.rule is not None:
        message = f"{_WIRE_NAMES.get(exc.field, exc.field)}: {exc.rule}"
    else:
        message = f"{field}: {exc}"
    status = exc.status if exc.status in (400, 404, 409, 410) else 500
    return ApiError(status, message)


@lru_cache(maxsize=4096)
def interop(chain_id: int, address: str) -> str:
    """The ERC-7930 form of an address on an eip155 chain (cached: the same few recur).

    >>> interop(8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")[:16]
    '0x00010000022105'
    """
    return erc7930.encode(chain_id, address)


def quote_wire(quote: ReservedQuote, user: str, receiver: str, filler: str) -> dict[str, Any]:
    """The wire form of an engine quote as the single element of an RFQ answer."""
    src, dst = quote.src_chain, quote.dst_chain
    return {
        "preview": {
            "inputs": [
                {
                    "user": interop(src, user),
                    "asset": interop(src, quote.src_token),
                    "amount": str(quote.input_amount),
                }
            ],
            "outputs": [
                {
                    "receiver": interop(dst, receiver),
                    "asset": interop(dst, quote.dst_token),
                    "amount": str(quote.output_amount),
                }
            ],
        },
        "quoteId": quote.quote_id,
        "validUntil": quote.valid_until,
        "eta": quote.eta,
        "provider": PROVIDER,
        "failureHandling": FAILURE_HANDLING,
        "partialFill": False,
        "metadata": {"exclusiveFor": filler},
    }


@router.get(
    "/partner-intents/rfq",
    summary="Request a firm quote for one cross-chain order",
    description=(
        "Prices the order against the service's liquidity and reserves the output for the "
        "quote's validity window (15 s). Exactly one quote, or an error: 400 no route or bad "
        "parameter, 401 missing or unknown X-Auth-Token, 404 no capacity now (retry later)."
    ),
    response_model=RfqResponse,
    responses=ERROR_RESPONSES,
    openapi_extra=operation(query=RfqQuery, key=True),
)
async def rfq(request: Request) -> Response:
    service = service_of(request)
    require_key(request, service)
    query = read_query(request, RfqQuery)
    src, dst = query.src_chain_id, query.dst_chain_id
    # From here to the response, no await: the engine step is atomic.
    now = service.now()
    try:
        quote = service.engine.quote(
            src,
            dst,
            query.token,
            query.amount_int,
            now,
            kind=query.type,
            src_token=query.src_token,
        )
    except EngineError as exc:
        raise engine_error(exc, "srcChain") from None
    service.notify()
    body = quote_wire(quote, query.user, query.receiver_or_user, service.scenario.filler)
    return json_response({"quotes": [body]})


@router.post(
    "/partner-intents/transaction",
    summary="Build the escrow open() transaction for a quote",
    description=(
        "Takes a quote (the element of the RFQ answer, passed through) and returns it with an "
        "unsigned open() call on the input settler escrow in transactionRequest. A quote with "
        "a live quoteId moves its reservation to the order for 60 s from this call; without "
        "one (or once it lapsed) the calldata is valid and nothing is reserved. No API key."
    ),
    response_model=Quote,
    responses=ERROR_RESPONSES,
    openapi_extra=operation(body=Quote),
)
async def transaction(request: Request) -> Response:
    service = service_of(request)
    quote = await read_body(request, Quote)
    # No await below: nonce, build and re-key happen as one step.
    now = service.now()
    nonce = service.next_nonce()
    built = build_open(
        quote,
        now=math.floor(now),
        nonce=nonce,
        registry=service.registry,
        filler=service.scenario.filler,
        windows=service.scenario.windows,
    )
    if quote.quote_id is not None:
        try:
            converted = service.engine.convert(quote.quote_id, built.order_id, now)
        except EngineError as exc:
            if exc.field == "order_id":
                # Our own nonces never repeat, so the same orderId twice means the caller
                # overrode order.nonce with one already used for the same order terms.
                raise ApiError(
                    400,
                    f"order.nonce: an order with these terms and this nonce already exists "
                    f"({built.order_id}); use a new nonce",
                ) from None
            raise engine_error(exc, "quoteId") from None
        if converted:
            service.notify()
    answer = quote.model_copy(update={"transaction_request": built.transaction})
    return json_response(answer.to_wire())
