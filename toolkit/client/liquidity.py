"""Liquidity API requests: discovery, the borrow quote, the signed authorization and the event
stream."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from httpx_sse import ServerSentEvent

from toolkit.client.errors import InvalidResponse, ServiceError
from toolkit.client.operations import (
    DEFAULT_PROTOCOL,
    Operation,
    amount_text,
    chain_text,
    error_body,
    path_segment,
    protocol_segment,
    read_model,
)
from toolkit.resources import (
    BorrowAuthorization,
    BorrowQuote,
    BorrowQuoteQuery,
    BorrowQuoteResponse,
    FeesQuery,
    FeesResponse,
    FeeTier,
    Health,
    InvalidInput,
    PoolLiquidity,
    PoolLiquidityResponse,
    PoolsQuery,
    SignatureBody,
    SignatureResponse,
    SolverQuery,
    SolverResponse,
    SupportedToken,
    TokensResponse,
    parse,
    parse_value,
)
from toolkit.resources.types import PoolType, QuoteType

__all__ = ["authorize", "borrow_quote", "events", "fees", "health", "pool", "solver", "tokens"]

_SNIPPET = 200


def tokens(chain: int | str) -> Operation[dict[str, SupportedToken]]:
    """``GET /liquidity/chain/{chainId}/tokens``: the supported tokens by symbol.

    >>> tokens(8453).path
    '/liquidity/chain/eip155:8453/tokens'
    """
    path = f"/liquidity/chain/{path_segment(chain_text(chain, 'chainId'))}/tokens"
    return Operation(
        "tokens",
        "GET",
        path,
        parse=lambda response: dict(read_model(TokensResponse, response, "tokens").data),
    )


def pool(pool_type: PoolType, chain: int | str, token_symbol: str) -> Operation[PoolLiquidity]:
    """``GET /liquidity/pools/{poolType}``: a pool's address and the balance available now.

    >>> pool("usdc", 8453, "USDC").params
    {'chain': 'eip155:8453', 'tokenSymbol': 'USDC'}
    """
    checked = parse_value(PoolType, pool_type, "poolType")
    query = parse(
        PoolsQuery,
        {"chain": chain_text(chain, "chain"), "tokenSymbol": token_symbol},
        root="query",
    )
    return Operation(
        "pool",
        "GET",
        f"/liquidity/pools/{path_segment(checked)}",
        params=query.to_wire(),
        parse=lambda response: read_model(PoolLiquidityResponse, response, "pool").data,
    )


def fees(
    src_chain: int | str,
    dst_chain: int | str,
    src_token: str,
    dst_token: str,
    *,
    protocol: str = DEFAULT_PROTOCOL,
) -> Operation[list[FeeTier]]:
    """``GET /liquidity/protocol/{protocol}/fees``: a route's fee tiers (404: no such route).

    >>> fees(1, 8453, "USDC", "USDC").params["srcChain"]
    'eip155:1'
    """
    query = parse(
        FeesQuery,
        {
            "srcChain": chain_text(src_chain, "srcChain"),
            "dstChain": chain_text(dst_chain, "dstChain"),
            "srcToken": src_token,
            "dstToken": dst_token,
        },
        root="query",
    )
    return Operation(
        "fees",
        "GET",
        f"/liquidity/protocol/{path_segment(protocol_segment(protocol))}/fees",
        params=query.to_wire(),
        parse=lambda response: list(read_model(FeesResponse, response, "fees").data),
    )


def solver(
    amount: int,
    source_chain: int | str,
    destination_chain: int | str,
    source_token: str,
    destination_token: str,
    *,
    protocol: str = DEFAULT_PROTOCOL,
) -> Operation[SolverResponse]:
    """``GET /protocol/{protocol}/solver``: the solver address and its fill time (no key).

    >>> solver(1000, 1, 8453, "USDC", "USDC").params["amount"]
    '1000'
    """
    query = parse(
        SolverQuery,
        {
            "amount": amount_text(amount, "amount"),
            "sourceChainId": chain_text(source_chain, "sourceChainId"),
            "destinationChainId": chain_text(destination_chain, "destinationChainId"),
            "sourceToken": source_token,
            "destinationToken": destination_token,
        },
        root="query",
    )
    return Operation(
        "solver",
        "GET",
        f"/protocol/{path_segment(protocol_segment(protocol))}/solver",
        params={k: str(v) for k, v in query.to_wire().items()},
        auth=False,
        parse=lambda response: read_model(SolverResponse, response, "solver"),
    )


def health() -> Operation[Health]:
    """``GET /health``.

    >>> health().auth
    False
    """
    return Operation(
        "health", "GET", "/health", auth=False, parse=lambda r: read_model(Health, r, "health")
    )


def borrow_quote(
    *,
    src_chain: int | str,
    dst_chain: int | str,
    amount: int | str,
    token: str,
    type: QuoteType = "ExactInput",
    exclusive: bool | None = None,
    pool: str | None = None,
    protocol: str = DEFAULT_PROTOCOL,
) -> Operation[BorrowQuote]:
    """``GET /liquidity/v2/chain/{srcChain}/protocol/{protocol}/type/{type}/quote``.

    >>> op = borrow_quote(src_chain=1, dst_chain=8453, amount=5, token="0x" + "11" * 20,
    ...                   exclusive=True)
    >>> op.path, op.params["exclusive"]
    ('/liquidity/v2/chain/eip155:1/protocol/partner-escrow/type/ExactInput/quote', 'true')
    """
    checked_type = parse_value(QuoteType, type, "type")
    wire: dict[str, Any] = {
        "dstChain": chain_text(dst_chain, "dstChain"),
        "amount": amount_text(amount, "amount"),
        "token": token,
    }
    if exclusive is not None:
        if not isinstance(exclusive, bool):
            raise InvalidInput("exclusive", "must be true or false")
        wire["exclusive"] = "true" if exclusive else "false"
    if pool is not None:
        wire["pool"] = pool
    query = parse(BorrowQuoteQuery, wire, root="query")
    src = path_segment(chain_text(src_chain, "srcChain"))
    path = (
        f"/liquidity/v2/chain/{src}/protocol/{path_segment(protocol_segment(protocol))}"
        f"/type/{checked_type}/quote"
    )
    return Operation(
        "borrow_quote",
        "GET",
        path,
        params=query.to_wire(),
        parse=lambda response: read_model(BorrowQuoteResponse, response, "borrow_quote").data,
    )


def authorize(
    *,
    dst_chain: int | str,
    caller: str,
    input: str,
    quote_id: str,
    tx_hash: str,
    metadata: Mapping[str, Any] | None = None,
    protocol: str = DEFAULT_PROTOCOL,
) -> Operation[BorrowAuthorization]:
    """``POST /liquidity/v2/chain/{dstChain}/protocol/{protocol}/signature``.

    The answer is an event stream: the event named ``data`` carries stringified JSON
    ``{"data": BorrowAuthorization}``. Never retried: it consumes the quote and a nonce.

    >>> op = authorize(dst_chain=8453, caller="0x" + "11" * 20, input="0x", quote_id="q1",
    ...                tx_hash="0x" + "ab" * 32, metadata={"srcChain": "eip155:1"})
    >>> op.json["quoteId"], op.retry
    ('q1', 'never')
    """
    wire: dict[str, Any] = {
        "caller": caller,
        "input": input,
        "quoteId": quote_id,
        "txHash": tx_hash,
    }
    if metadata is not None:
        wire["metadata"] = dict(metadata)
    body = parse(SignatureBody, wire, root="body")
    dst = path_segment(chain_text(dst_chain, "dstChain"))
    name = path_segment(protocol_segment(protocol))

    def read_event(event: ServerSentEvent) -> BorrowAuthorization | None:
        if event.event == "error":
            error = error_body(event.data.encode())
            raise ServiceError(
                "authorize", 200, error, detail=None if error else event.data[:_SNIPPET]
            )
        if event.event != "data":
            return None
        try:
            return parse(SignatureResponse, event.data, root="data").data
        except InvalidInput as exc:
            raise InvalidResponse(
                "authorize", 200, detail=f"unexpected event data ({exc})"
            ) from None

    return Operation(
        "authorize",
        "POST",
        f"/liquidity/v2/chain/{dst}/protocol/{name}/signature",
        json=body.to_wire(),
        retry="never",
        parse_event=read_event,
    )


def events(protocol: str = DEFAULT_PROTOCOL) -> Operation[None]:
    """``GET /liquidity/protocol/{protocol}/events``: the stream the clients' ``liquidity_events``
    follow (their :class:`~toolkit.client.session.StreamSession` reads it, not ``parse``).

    >>> events().path
    '/liquidity/protocol/partner-escrow/events'
    """
    return Operation(
        "liquidity_events", "GET", f"/liquidity/protocol/{protocol_segment(protocol)}/events"
    )
