"""Auto top-up (v1 and v2): enable, update, disable and config of the service's records, and
the operator setup calls they need."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from toolkit.chain import calls as build
from toolkit.credit import BPS
from toolkit.resources import AutoTopUpConfig, Calls, ContractCall
from toolkit.resources.credit_queries import AutoTopUpQuery, EnableQuery, ReceiverQuery
from toolkit.server.credit.book import ERRORS, ERRORS_409, CreditContracts, account_of, book_of
from toolkit.server.credit.wire import calls_response
from toolkit.server.docs import operation
from toolkit.server.errors import ApiError
from toolkit.server.params import json_response, read_query, service_of
from toolkit.server.routing import surface_router
from toolkit.server.service import Service
from toolkit.world.topup import TopUp

router = surface_router(tags=["credit"])


def topups(service: Service) -> dict[tuple[str, str, str], TopUp]:
    """The service's auto top-up records by (credit asset, account, receiver), lowercase
    (``("usdc", account, receiver)``), kept and executed by the relay
    (:mod:`toolkit.world.topup`); the seeded book's cards start with one each."""
    return service.relay.topups.records


def _setup_calls(book: CreditContracts, account: str, receiver: str) -> list[ContractCall]:
    """setOperator unless set, addCreditReceiver unless whitelisted; 409 for another operator."""
    s = book.settings
    current = book.hub.operators.get(account)
    if current is not None and current != book.operator.address:
        raise ApiError(409, "Account has a different operator")
    calls = []
    if current is None:
        calls.append(build.set_operator(s.chain, s.hub, s.operator))
    if not book.operator.whitelist.get((account, receiver.lower())):
        calls.append(build.add_credit_receiver(s.chain, s.operator, receiver))
    return calls


def _key(book: CreditContracts, account: str, receiver: str) -> tuple[str, str, str]:
    return (book.settings.asset.lower(), account, receiver.lower())


def _record(service: Service, book: CreditContracts, account: str, receiver: str, q: Any) -> None:
    if q.threshold is None:
        return
    topups(service)[_key(book, account, receiver)] = TopUp(
        q.threshold, q.target_balance, q.health_factor or str(BPS)
    )


@router.get(
    "/credit/accounts/{account}/operator/auto-topup/enable",
    summary="Enable auto top-up (v1)",
    response_model=Calls,
    responses=ERRORS_409,
    openapi_extra=operation(path=["account"], query=EnableQuery),
)
async def enable_v1(request: Request) -> Response:
    service = service_of(request)
    account = account_of(request)
    q = read_query(request, EnableQuery)
    book = book_of(service)
    calls = _setup_calls(book, account, q.receiver)
    _record(service, book, account, q.receiver, q)
    return calls_response(calls)


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/operator/auto-topup/enable",
    summary="Enable auto top-up",
    response_model=Calls,
    responses=ERRORS_409,
    openapi_extra=operation(path=["account", "asset"], query=AutoTopUpQuery),
)
async def enable_v2(request: Request) -> Response:
    service = service_of(request)
    account = account_of(request)
    q = read_query(request, AutoTopUpQuery)
    book = book_of(service, request)
    calls = _setup_calls(book, account, q.receiver)
    _record(service, book, account, q.receiver, q)
    return calls_response(calls)


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/operator/auto-topup/update",
    summary="Update auto top-up",
    response_model=Calls,
    responses=ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=AutoTopUpQuery),
)
async def update_v2(request: Request) -> Response:
    service = service_of(request)
    account = account_of(request)
    q = read_query(request, AutoTopUpQuery)
    book = book_of(service, request)
    if _key(book, account, q.receiver) not in topups(service):
        raise ApiError(404, f"receiver: no auto top-up is configured for {q.receiver}")
    calls = _setup_calls(book, account, q.receiver)
    _record(service, book, account, q.receiver, q)
    return calls_response(calls)


def _disable(service: Service, book: CreditContracts, account: str, receiver: str) -> Response:
    s = book.settings
    topups(service).pop(_key(book, account, receiver), None)
    if book.operator.whitelist.get((account, receiver.lower())):
        return calls_response([build.remove_credit_receiver(s.chain, s.operator, receiver)])
    return calls_response([])


@router.get(
    "/credit/accounts/{account}/operator/auto-topup/disable",
    summary="Disable auto top-up (v1)",
    response_model=Calls,
    responses=ERRORS,
    openapi_extra=operation(path=["account"], query=ReceiverQuery),
)
async def disable_v1(request: Request) -> Response:
    service = service_of(request)
    account = account_of(request)
    q = read_query(request, ReceiverQuery)
    return _disable(service, book_of(service), account, q.receiver)


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/operator/auto-topup/disable",
    summary="Disable auto top-up",
    response_model=Calls,
    responses=ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=ReceiverQuery),
)
async def disable_v2(request: Request) -> Response:
    service = service_of(request)
    account = account_of(request)
    q = read_query(request, ReceiverQuery)
    book = book_of(service, request)
    return _disable(service, book, account, q.receiver)


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/operator/auto-topup/config",
    summary="Auto top-up config",
    response_model=AutoTopUpConfig,
    responses=ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=ReceiverQuery),
)
async def config_v2(request: Request) -> Response:
    service = service_of(request)
    account = account_of(request)
    q = read_query(request, ReceiverQuery)
    book = book_of(service, request)
    record = topups(service).get(_key(book, account, q.receiver))
    if record is None:
        raise ApiError(404, f"receiver: no auto top-up is configured for {q.receiver}")
    return json_response(
        {
            "config": {
                "threshold": record.threshold,
                "targetBalance": record.target_balance,
                "healthFactor": record.health_factor,
            }
        }
    )
