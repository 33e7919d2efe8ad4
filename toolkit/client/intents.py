"""Partner-intents requests: the RFQ (its 404 is capacity) and the escrow transaction."""

from __future__ import annotations

from typing import Any

import httpx

from toolkit.client.errors import InvalidResponse, NoCapacity
from toolkit.client.operations import Operation, amount_text, chain_text, read_model
from toolkit.resources import InvalidInput, Quote, RfqQuery, RfqResponse, parse
from toolkit.resources.types import QuoteType

__all__ = ["rfq", "transaction"]


def rfq(
    *,
    src_chain: int | str,
    dst_chain: int | str,
    amount: int | str,
    token: str,
    user: str,
    src_token: str | None = None,
    receiver: str | None = None,
    type: QuoteType = "ExactInput",
) -> Operation[Quote]:
    """``GET /partner-intents/rfq``: one quote, its 404 a capacity answer.

    >>> op = rfq(src_chain=8453, dst_chain=42161, amount=10**6, token="0x" + "aa" * 20,
    ...          user="0x" + "bb" * 20)
    >>> op.params["srcChain"], op.params["amount"], op.retry
    ('eip155:8453', '1000000', 'rfq')
    """
    wire: dict[str, Any] = {
        "srcChain": chain_text(src_chain, "srcChain"),
        "dstChain": chain_text(dst_chain, "dstChain"),
        "amount": amount_text(amount, "amount"),
        "token": token,
        "user": user,
        "type": type,
    }
    if src_token is not None:
        wire["srcToken"] = src_token
    if receiver is not None:
        wire["receiver"] = receiver
    query = parse(RfqQuery, wire, root="query")

    def read(response: httpx.Response) -> Quote:
        return read_model(RfqResponse, response, "rfq").quote

    return Operation(
        "rfq",
        "GET",
        "/partner-intents/rfq",
        params=query.to_wire(),
        retry="rfq",
        parse=read,
        not_found=NoCapacity,
    )


def transaction(quote: Quote) -> Operation[Quote]:
    """``POST /partner-intents/transaction``: the quote with its unsigned ``open()`` call.

    Never retried: with a quoteId the call re-keys the reservation to the order for 60 s.

    >>> transaction("not a quote")
    Traceback (most recent call last):
    ...
    toolkit.resources.errors.InvalidInput: quote: must be a Quote
    """
    if not isinstance(quote, Quote):
        raise InvalidInput("quote", "must be a Quote")

    def read(response: httpx.Response) -> Quote:
        result = read_model(Quote, response, "transaction")
        if result.transaction_request is None:
            raise InvalidResponse(
                "transaction", response.status_code, detail="the quote has no transactionRequest"
            )
        return result

    return Operation(
        "transaction",
        "POST",
        "/partner-intents/transaction",
        json=quote.to_wire(),
        auth=False,
        retry="never",
        parse=read,
    )
