"""Earn vaults: wrap, unwrap, and the claim of an asynchronous (ERC-7540) withdrawal."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from starlette.requests import Request
from starlette.responses import Response

from toolkit.chain import calls as build
from toolkit.resources import Calls, ClaimQuery, UnwrapQuery, UnwrapResult, WrapQuery, WrapResult
from toolkit.server.credit.book import ERRORS, CreditContracts, book_of, vault_of
from toolkit.server.credit.strategies import STRATEGIES, redeem_call
from toolkit.server.credit.wire import calls_response, checksum, iso
from toolkit.server.docs import operation
from toolkit.server.errors import ApiError
from toolkit.server.params import json_response, path_chain, read_query, service_of
from toolkit.server.routing import surface_router
from toolkit.server.service import Service
from toolkit.world.evm import AsyncVault, EarnVault

router = surface_router(tags=["credit"])


def _earn_vault(service: Service, book: CreditContracts, address: str, field: str) -> EarnVault:
    c = book.settings.collateral_at(address)
    if c is None or c.vault is None:
        raise ApiError(404, f"{field}: {address} is not an earn vault of this scenario")
    return vault_of(service, book, c)


def _earn_chain(book: CreditContracts, text: str) -> None:
    chain = path_chain(text, "chain")
    if chain != book.settings.chain:
        raise ApiError.bad("chain", f"no earn vaults on {text}")


@router.get(
    "/credit/earn/wrap",
    summary="Wrap into an earn vault",
    response_model=WrapResult,
    responses=ERRORS,
    openapi_extra=operation(query=WrapQuery),
)
async def wrap(request: Request) -> Response:
    service = service_of(request)
    q = read_query(request, WrapQuery)
    book = book_of(service)
    _earn_chain(book, q.chain)
    s = book.settings
    by_id = {st.id: key for key, st in STRATEGIES.items()}
    key = by_id.get(q.earn or "gauntlet-usdc-prime")
    target = None if key is None else s.collateral_by_symbol(key)
    if target is None or target.vault is None:
        raise ApiError.bad(
            "earn", f"must be an earn strategy of this scenario ({', '.join(by_id)})"
        )
    underlying = s.underlying_of(target)[0]
    if q.token.lower() != underlying.lower():
        raise ApiError.bad("token", f"must be {underlying}, the asset of {target.symbol}")
    vault = vault_of(service, book, target)
    amount = int(q.amount)
    shares = vault.preview_deposit(amount, book.now)
    calls = [
        build.erc20_approve(s.chain, underlying, target.address, amount),
        build.vault_deposit(s.chain, target.address, amount, q.account),
    ]
    return json_response(
        {
            "amountOut": str(shares),
            "calls": [c.to_wire() for c in calls],
            "tokenOut": target.address,
        }
    )


@router.get(
    "/credit/earn/unwrap",
    summary="Unwrap from an earn vault",
    response_model=UnwrapResult,
    responses=ERRORS,
    openapi_extra=operation(query=UnwrapQuery),
)
async def unwrap(request: Request) -> Response:
    service = service_of(request)
    q = read_query(request, UnwrapQuery)
    book = book_of(service)
    _earn_chain(book, q.chain)
    vault = _earn_vault(service, book, q.asset, "asset")
    shares = int(q.amount)
    out = vault.preview_redeem(shares, book.now)
    keep = Fraction(1) - Fraction(Decimal(str(q.slippage))) / 100
    minimum = int(out * keep)
    c = book.settings.collateral_at(vault.address)
    assert c is not None
    call = redeem_call(book.settings, c, shares, q.receiver, q.owner)
    return json_response(
        {
            "amountOut": str(out),
            "minAmountOut": str(minimum),
            "tokenOut": book.settings.underlying_of(c)[0],
            "calls": [call.to_wire()],
        }
    )


@router.get(
    "/credit/earn/claim",
    summary="Claim an asynchronous withdrawal",
    response_model=Calls,
    responses=ERRORS,
    openapi_extra=operation(query=ClaimQuery),
)
async def claim(request: Request) -> Response:
    service = service_of(request)
    q = read_query(request, ClaimQuery)
    book = book_of(service)
    _earn_chain(book, q.chain)
    vault = _earn_vault(service, book, q.asset, "asset")
    if not isinstance(vault, AsyncVault):
        raise ApiError.bad(
            "asset", f"{q.asset} is a synchronous ERC-4626 vault: it has no redeem requests"
        )
    text = q.claim_request_id
    if not (text.isascii() and text.isdigit() and len(text) < 78):
        raise ApiError.bad("claimRequestId", "must be a string of digits (a requestId)")
    number = int(text)
    entry = vault.requests.get(number)
    if entry is None:
        raise ApiError(404, f"claimRequestId: no redeem request {number} in {vault.symbol}")
    controller, shares, _, claimable_at = entry
    if controller != q.owner.lower():
        raise ApiError.bad("owner", f"request {number} belongs to {checksum(controller)}")
    if vault.claimed.get(number):
        raise ApiError.bad("claimRequestId", f"request {number} is already claimed")
    if book.now < claimable_at:
        raise ApiError.bad(
            "claimRequestId", f"request {number} is claimable from {iso(claimable_at)}"
        )
    call = build.vault_claim_redeem(book.settings.chain, vault.address, shares, q.receiver, q.owner)
    return calls_response([call])
