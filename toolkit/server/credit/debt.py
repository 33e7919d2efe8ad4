"""Draw and repay (v1 and v2), the card program's hot path: calls encoded straight from the
function table."""

from __future__ import annotations

import functools
from typing import Any

import eth_abi
from eth_utils import to_checksum_address
from starlette.requests import Request
from starlette.responses import Response

from toolkit.codecs.function_table import FUNCTIONS
from toolkit.resources import Calls
from toolkit.resources.credit_queries import DrawQuery, RepayQuery
from toolkit.server.credit.book import ERRORS, CreditContracts, account_of, book_of
from toolkit.server.credit.wire import human
from toolkit.server.docs import operation
from toolkit.server.errors import ApiError
from toolkit.server.params import json_response, read_query, service_of
from toolkit.server.routing import surface_router

router = surface_router(tags=["credit"])


@functools.lru_cache(maxsize=65_536)
def _checksummed(address: str) -> str:
    return to_checksum_address(address)


def hot_call(chain: int, to: str, function: str, *args: Any) -> dict[str, str]:
    """The wire form of a call on the card program's hot path (draw, repay), encoded straight
    from the function table; arguments are already checked (addresses: any case).

    >>> from toolkit.chain import calls as build
    >>> a, b = "0x" + "ab" * 20, "0x" + "cd" * 20
    >>> hot_call(8453, a, "creditHub.drawCredit", b, b, 5) == build.draw_credit(
    ...     8453, a, b, b, 5).to_wire()
    True
    """
    fn = FUNCTIONS[function]
    data = fn.selector + eth_abi.encode(fn.types, list(args)).hex()
    return {"chain": str(chain), "to": _checksummed(to), "data": data, "value": "0"}


def _hot(calls: list[dict[str, str]]) -> Response:
    return json_response({"calls": calls})


def _draw(book: CreditContracts, account: str, q: DrawQuery) -> list[dict[str, str]]:
    s = book.settings
    f = book.hub.figures(account, book.now)
    amount = q.amount_int
    if f.debt + amount > f.total_credit_capacity:
        remaining = human(f.remaining_credit_capacity, s.asset_decimals)
        raise ApiError.bad(
            "amount",
            f"exceeds the remaining credit capacity ({remaining} {s.asset}): the maintenance "
            "health factor would fall below 1",
        )
    return [hot_call(s.chain, s.hub, "creditHub.drawCredit", account, q.receiver, amount)]


@router.get(
    "/credit/accounts/{account}/draw",
    summary="Draw credit (v1)",
    response_model=Calls,
    responses=ERRORS,
    openapi_extra=operation(path=["account"], query=DrawQuery),
)
async def draw_v1(request: Request) -> Response:
    account = account_of(request)
    q = read_query(request, DrawQuery)
    return _hot(_draw(book_of(service_of(request)), account, q))


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/draw",
    summary="Draw credit",
    response_model=Calls,
    responses=ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=DrawQuery),
)
async def draw_v2(request: Request) -> Response:
    account = account_of(request)
    q = read_query(request, DrawQuery)
    book = book_of(service_of(request), request)
    return _hot(_draw(book, account, q))


def _repay(book: CreditContracts, account: str, q: RepayQuery) -> list[dict[str, str]]:
    s = book.settings
    if book.hub.figures(account, book.now).debt == 0:
        raise ApiError.bad("amount", "the account has no debt to repay")
    return [
        hot_call(s.chain, s.asset_address, "erc20.approve", s.hub, q.amount_int),
        hot_call(s.chain, s.hub, "creditHub.repay", account, q.amount_int),
    ]


@router.get(
    "/credit/accounts/{account}/repay",
    summary="Repay credit (v1)",
    response_model=Calls,
    responses=ERRORS,
    openapi_extra=operation(path=["account"], query=RepayQuery),
)
async def repay_v1(request: Request) -> Response:
    account = account_of(request)
    q = read_query(request, RepayQuery)
    return _hot(_repay(book_of(service_of(request)), account, q))


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/repay",
    summary="Repay credit",
    response_model=Calls,
    responses=ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=RepayQuery),
)
async def repay_v2(request: Request) -> Response:
    account = account_of(request)
    q = read_query(request, RepayQuery)
    book = book_of(service_of(request), request)
    return _hot(_repay(book, account, q))
