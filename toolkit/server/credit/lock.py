"""Lock and unlock collateral (v1 and v2): the calls, with an earn wrap or unwrap."""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import Response

from toolkit.chain import calls as build
from toolkit.resources import Calls, ContractCall, HexAddress, parse_value
from toolkit.resources.credit_queries import LockQuery, LockQueryV1, UnlockQuery, UnlockQueryV1
from toolkit.scenario.credit import CreditCollateral
from toolkit.server.credit.book import (
    ERRORS,
    CreditContracts,
    account_of,
    book_of,
    find_collateral,
    vault_of,
)
from toolkit.server.credit.strategies import STRATEGIES, redeem_call
from toolkit.server.credit.wire import calls_response
from toolkit.server.docs import operation
from toolkit.server.errors import ApiError
from toolkit.server.params import read_query, service_of
from toolkit.server.routing import surface_router
from toolkit.server.service import Service

router = surface_router(tags=["credit"])

#: How far ahead a lock with ``earn`` previews the vault's share price (seconds).
WRAP_HORIZON: Final = 3600


def _lock_asset(
    book: CreditContracts, text: str, field: str, earn: str | None
) -> CreditCollateral | str:
    """The collateral named by ``text``, or (with ``earn``) the address of a token that is no
    collateral itself but an earn vault's own underlying (cbBTC for ``yo-btc``)."""
    if earn is not None and text.startswith("0x"):
        address: str = parse_value(HexAddress, text, field)
        s = book.settings
        if s.collateral_at(address) is None:
            for c in s.collateral:
                own = None if c.vault is None else c.vault.underlying
                if own is not None and own[1].lower() == address.lower():
                    return address
    return find_collateral(book, text, field)


def _lock(
    service: Service,
    book: CreditContracts,
    account: str,
    amount: int,
    c: CreditCollateral | str,
    earn: str | None,
) -> list[ContractCall]:
    """The calls that lock ``amount`` of collateral ``c`` (or, with ``earn``, wrap the token
    at address ``c`` and lock the shares)."""
    s = book.settings
    address = c if isinstance(c, str) else c.address
    if isinstance(c, CreditCollateral) and c.chain is not None:  # on a remote escrow's chain
        if earn is not None:
            raise ApiError.bad("earn", f"earn strategies wrap on chain {s.chain} only")
        return [
            build.erc20_approve(c.chain, c.address, s.escrow, amount),
            build.collateral_deposit(c.chain, s.escrow, c.address, amount),
        ]
    if isinstance(c, CreditCollateral) and (earn is None or c.vault is not None):
        if earn is not None:
            strategy = STRATEGIES.get(c.key)
            if strategy is None or strategy.id != earn:
                raise ApiError.bad("earn", f"{c.symbol} is not a position of strategy {earn}")
        return [
            build.erc20_approve(s.chain, c.address, s.escrow, amount),
            build.collateral_deposit(s.chain, s.escrow, c.address, amount),
        ]
    assert earn is not None  # a token that is no collateral comes only with earn
    vaults = {st.id: key for key, st in STRATEGIES.items()}
    key = vaults.get(earn)
    target = None if key is None else s.collateral_by_symbol(key)
    if target is None or target.vault is None:
        known = ", ".join(sorted(vaults))
        raise ApiError.bad("earn", f"must be an earn strategy of this scenario ({known})")
    underlying = s.underlying_of(target)[0]
    if address.lower() != underlying.lower():
        name = address if isinstance(c, str) else c.symbol
        raise ApiError.bad("earn", f"{earn} wraps {underlying}, not {name}")
    vault = vault_of(service, book, target)
    shares = vault.preview_deposit(amount, book.now + WRAP_HORIZON)
    if shares == 0:
        raise ApiError.bad("amount", f"too small to mint a share of {target.symbol}")
    return [
        build.erc20_approve(s.chain, underlying, target.address, amount),
        build.vault_deposit(s.chain, target.address, amount, account),
        build.erc20_approve(s.chain, target.address, s.escrow, shares),
        build.collateral_deposit(s.chain, s.escrow, target.address, shares),
    ]


@router.get(
    "/credit/accounts/{account}/lock",
    summary="Lock collateral (v1)",
    response_model=Calls,
    responses=ERRORS,
    openapi_extra=operation(path=["account"], query=LockQueryV1),
)
async def lock_v1(request: Request) -> Response:
    service = service_of(request)
    account = account_of(request)
    q = read_query(request, LockQueryV1)
    book = book_of(service)
    c = _lock_asset(book, q.asset, "asset", q.earn)
    return calls_response(_lock(service, book, account, int(q.amount), c, q.earn))


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/lock",
    summary="Lock collateral",
    response_model=Calls,
    responses=ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=LockQuery),
)
async def lock_v2(request: Request) -> Response:
    service = service_of(request)
    account = account_of(request)
    q = read_query(request, LockQuery)
    book = book_of(service, request)
    c = _lock_asset(book, q.earn_asset, "earnAsset", q.earn)
    return calls_response(_lock(service, book, account, int(q.amount), c, q.earn))


def _unlock(
    book: CreditContracts, account: str, amount: int, c: CreditCollateral, unwrap: bool | None
) -> list[ContractCall]:
    s = book.settings
    token = c.address.lower()
    held = book.hub.collateral.get((account, token), 0)
    if amount > held:
        raise ApiError.bad("amount", f"exceeds the {c.symbol} locked ({held})")
    if unwrap and c.vault is None:
        raise ApiError.bad("unwrap", f"{c.symbol} is not an earn position")
    after = book.hub.holdings(account)
    after[token] = held - amount
    if book.hub.figures(account, book.now, after).liquidatable:
        raise ApiError.bad(
            "amount", "unlocking it would make the position liquidatable (health factor below 1)"
        )
    calls = [build.collateral_withdraw(s.chain_of(c), s.escrow, c.address, amount)]
    if unwrap:
        calls.append(redeem_call(s, c, amount, account, account))
    return calls


@router.get(
    "/credit/accounts/{account}/unlock",
    summary="Unlock collateral (v1)",
    response_model=Calls,
    responses=ERRORS,
    openapi_extra=operation(path=["account"], query=UnlockQueryV1),
)
async def unlock_v1(request: Request) -> Response:
    account = account_of(request)
    q = read_query(request, UnlockQueryV1)
    book = book_of(service_of(request))
    c = find_collateral(book, q.asset, "asset")
    return calls_response(_unlock(book, account, int(q.amount), c, q.unwrap))


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/unlock",
    summary="Unlock collateral",
    response_model=Calls,
    responses=ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=UnlockQuery),
)
async def unlock_v2(request: Request) -> Response:
    account = account_of(request)
    q = read_query(request, UnlockQuery)
    book = book_of(service_of(request), request)
    c = find_collateral(book, q.collateral, "collateral")
    return calls_response(_unlock(book, account, int(q.amount), c, q.unwrap))
