"""The liquidity API: discovery (tokens, pools, fees, solver, health) and the borrow quote.

Shapes follow the vendor's OpenAPI document (``{data: ...}`` wrappers). Choices where it is
silent, all documented in the operation descriptions:

- A chain the scenario does not serve, a pool type without a pool for the token, and an unknown
  route of the solver endpoint are 400 (the only error those operations list). A borrow quote
  that no pool can serve now is a 404, as for the RFQ: a capacity answer, not a validity one.
- ``balance`` of a pool is what is available now: balance - reserved - outstanding.
- A borrow quote reserves its output for ``quoteDuration`` seconds under ``id``. The service is
  repaid on a hub chain; the vendor schema only allows Ethereum (1) and Arbitrum (42161), so a
  quote from Ethereum repays there and every other source repays on Arbitrum. The engine
  decides it (:meth:`toolkit.scenario.Scenario.repayment_chain`) and books the repayment there.
  ``repaymentRecipient`` is the filler: on the simulated chains a borrower repays by
  transferring ``requiredInput`` to it on ``repaymentChain`` (:mod:`toolkit.world.lending`).
- ``exclusive`` is accepted and validated; every fill of the embedded service is exclusive.
"""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import Response

from toolkit.codecs import caip2
from toolkit.engine import EngineError, NoRoute
from toolkit.resources import (
    BorrowQuoteQuery,
    BorrowQuoteResponse,
    FeesQuery,
    FeesResponse,
    Health,
    HexAddress,
    PoolLiquidityResponse,
    PoolsQuery,
    PoolType,
    QuoteType,
    SolverQuery,
    SolverResponse,
    TokensResponse,
    parse_value,
)
from toolkit.scenario import Token
from toolkit.server.docs import ERROR_RESPONSES, operation
from toolkit.server.errors import ApiError
from toolkit.server.intents import engine_error
from toolkit.server.params import (
    check_protocol,
    json_response,
    path_chain,
    read_query,
    require_key,
    service_of,
)
from toolkit.server.routing import surface_router, unlocked
from toolkit.server.service import Service

__all__ = ["router"]

router = surface_router(tags=["liquidity"])

_HEALTH: Final = b'{"status":"ok"}'


def _served_chain(service: Service, chain_id: int, field: str) -> None:
    try:
        service.scenario.chain(chain_id)
    except KeyError:
        raise ApiError.bad(
            field, f"{caip2.format(chain_id)} is not a chain this service serves"
        ) from None


def _token(service: Service, chain_id: int, text: str, field: str) -> Token | None:
    """The token named by symbol (any case) or address on a chain; None when unknown."""
    if text.startswith("0x"):
        address = parse_value(HexAddress, text, field)
        return service.scenario.token_by_address(chain_id, address)
    for token in service.scenario.tokens:
        if token.chain == chain_id and token.symbol.lower() == text.lower():
            return token
    return None


@router.get(
    "/health",
    summary="Service health check",
    response_model=Health,
)
@unlocked
async def health(request: Request) -> Response:
    return Response(_HEALTH, media_type="application/json")


@router.get(
    "/liquidity/chain/{chainId}/tokens",
    summary="Supported tokens of a chain",
    description="A map of token symbols to address and decimals. Unknown chain: 400.",
    response_model=TokensResponse,
    responses=ERROR_RESPONSES,
    openapi_extra=operation(path=["chainId"], key=True),
)
async def tokens(request: Request) -> Response:
    service = service_of(request)
    require_key(request, service)
    chain_id = path_chain(request.path_params["chainId"], "chainId")
    _served_chain(service, chain_id, "chainId")
    data = {
        t.symbol: {"address": t.address, "decimals": t.decimals}
        for t in service.scenario.tokens
        if t.chain == chain_id
    }
    return json_response({"data": data})


@router.get(
    "/liquidity/pools/{poolType}",
    summary="Available liquidity of a pool type on a chain",
    description=(
        "The pool's address and its balance available now (balance - reserved - outstanding). "
        "No pool of this type for the token on the chain: 400."
    ),
    response_model=PoolLiquidityResponse,
    responses=ERROR_RESPONSES,
    openapi_extra=operation(path=["poolType"], query=PoolsQuery, key=True),
)
async def pools(request: Request) -> Response:
    service = service_of(request)
    require_key(request, service)
    pool_type = parse_value(PoolType, request.path_params["poolType"], "poolType")
    query = read_query(request, PoolsQuery)
    chain_id = query.chain_id
    _served_chain(service, chain_id, "chain")
    symbol = query.token_symbol.lower()
    for pool in service.scenario.pools:
        if pool.chain == chain_id and pool.type == pool_type and pool.token.lower() == symbol:
            state = service.engine.pool(pool.id, service.now())
            service.notify()  # reading moved the clock: lapsed reservations were released
            return json_response(
                {"data": {"address": state.address, "balance": str(state.available)}}
            )
    raise ApiError.bad(
        "tokenSymbol", f"no {pool_type} pool holds {query.token_symbol} on {query.chain}"
    )


@router.get(
    "/liquidity/protocol/{protocol}/fees",
    summary="Fee tiers and limits of a route",
    description=(
        "Tokens by symbol or address. Unknown protocol or malformed parameter: 400; route not "
        "configured (including tokens the chains do not list): 404."
    ),
    response_model=FeesResponse,
    responses=ERROR_RESPONSES,
    openapi_extra=operation(path=["protocol"], query=FeesQuery, key=True),
)
async def fees(request: Request) -> Response:
    service = service_of(request)
    require_key(request, service)
    check_protocol(request.path_params["protocol"])
    query = read_query(request, FeesQuery)
    src = path_chain(query.src_chain, "srcChain")
    dst = path_chain(query.dst_chain, "dstChain")
    src_token = _token(service, src, query.src_token, "srcToken")
    dst_token = _token(service, dst, query.dst_token, "dstToken")
    route = (
        f"route: none is configured from {query.src_chain} {query.src_token} "
        f"to {query.dst_chain} {query.dst_token}"
    )
    if src_token is None or dst_token is None or src_token.symbol != dst_token.symbol:
        raise ApiError(404, route)
    try:
        tiers = service.engine.fee_tiers(src, dst, dst_token.symbol)
    except NoRoute:
        raise ApiError(404, route) from None
    data = [
        {"feeBps": t.fee_bps, "minAmount": t.min_amount, "maxAmount": t.max_amount} for t in tiers
    ]
    return json_response({"data": data})


@router.get(
    "/protocol/{protocol}/solver",
    summary="The solver (filler) address of a protocol and its fill time",
    description=(
        "No API key. ``duration`` is the estimated fill time in seconds (source confirmations "
        "plus the destination fill). Unknown protocol, malformed parameter or route: 400."
    ),
    response_model=SolverResponse,
    responses={400: ERROR_RESPONSES[400]},
    openapi_extra=operation(path=["protocol"], query=SolverQuery),
)
async def solver(request: Request) -> Response:
    service = service_of(request)
    check_protocol(request.path_params["protocol"])
    query = read_query(request, SolverQuery)
    src = path_chain(query.source_chain_id, "sourceChainId")
    dst = path_chain(query.destination_chain_id, "destinationChainId")
    src_token = _token(service, src, query.source_token, "sourceToken")
    dst_token = _token(service, dst, query.destination_token, "destinationToken")
    if (
        src_token is None
        or dst_token is None
        or src_token.symbol != dst_token.symbol
        or service.scenario.route(src, dst, dst_token.symbol) is None
    ):
        raise ApiError.bad(
            "destinationToken",
            f"no route from {query.source_chain_id} {query.source_token} to "
            f"{query.destination_chain_id} {query.destination_token}",
        )
    return json_response(
        {"solver": service.scenario.filler, "duration": service.scenario.eta(src, dst)}
    )


@router.get(
    "/liquidity/v2/chain/{srcChain}/protocol/{protocol}/type/{type}/quote",
    summary="Borrow quote (reserves liquidity for quoteDuration)",
    description=(
        "Prices a borrow of ``amount`` of ``token`` on ``dstChain`` and reserves it for "
        "``quoteDuration`` seconds under ``id``; ask the signature endpoint with that id. "
        "No route or bad parameter: 400; no capacity now: 404, as for the RFQ (the vendor "
        "document lists no 404; a 400 would tell the client to fix a valid request). "
        "``repaymentChain`` is 1 for quotes from Ethereum and 42161 (the hub) otherwise."
    ),
    response_model=BorrowQuoteResponse,
    responses=ERROR_RESPONSES,
    openapi_extra=operation(
        path=["srcChain", "protocol", "type"], query=BorrowQuoteQuery, key=True
    ),
)
async def borrow_quote(request: Request) -> Response:
    service = service_of(request)
    require_key(request, service)
    path = request.path_params
    src = path_chain(path["srcChain"], "srcChain")
    check_protocol(path["protocol"])
    kind = parse_value(QuoteType, path["type"], "type")
    query = read_query(request, BorrowQuoteQuery)
    dst = path_chain(query.dst_chain, "dstChain")
    now = service.now()
    try:
        quote = service.engine.borrow_quote(
            src, dst, query.token, query.amount_int, now, kind=kind, pool=query.pool
        )
    except EngineError as exc:
        raise engine_error(exc, "srcChain") from None
    service.notify()
    data = {
        "borrowCost": str(quote.borrow_cost),
        "duration": quote.eta,
        "estimatedFillDuration": quote.eta,
        "feeBps": quote.fee_bps,
        "id": quote.quote_id,
        "liquidityPool": quote.pool_address,
        "quoteDuration": quote.quote_duration,
        "repaymentChain": quote.repayment_chain,
        "repaymentRecipient": service.scenario.filler,
        "requiredInput": str(quote.input_amount),
        "requiredOutput": str(quote.output_amount),
    }
    return json_response({"data": data})
