"""The credit API (no key): protocol configuration, account info, collateral details, operator
status, and the endpoints that build unsigned calls (lock, unlock, draw, repay, auto top-up,
earn wrap/unwrap/claim), all answered from the credit ledger of the simulated chains
(:mod:`toolkit.world.chain.credit`).

Every figure comes from :mod:`toolkit.credit` through the hub's state at the service's clock.
Choices where the interface is silent, stated in the operation descriptions too:

- ``/info`` reports amounts in human units with the credit asset's decimals (``"995.000000"``)
  and health factors rounded down to 4 decimals (``"Infinity"`` with no debt); ``dueDate`` is
  ISO 8601 UTC, null with no debt.
- A draw beyond the remaining credit capacity, an unlock that leaves the position liquidatable
  or more than is locked, and a repay with no debt are 400s saying so; an unsupported
  collateral is 404, and so is a credit asset the scenario has no hub for.
- ``{asset}`` = ``eure`` is the EURe hub: the same rules and collateral, figures in EURe (18
  decimals; collateral valued at its USD price over the scenario's euro price), its own hub,
  escrow and operator; ``/info`` lists it under ``EURE`` beside ``USDC``. ``/credit/protocol``
  lists both hubs under ``creditHubs``; its collateral entries name the USDC hub's escrow (the
  document has one escrow per collateral), the EURe hub's lock calls name its own.
- Auto top-up settings are the service's own records (not on chain): enable (v2, or v1 with
  ``threshold`` and ``targetBalance``) and update store them, disable drops them, config reads
  them (404 when none). Update returns the calls still missing for the operator setup (usually
  none). The service executes them (:mod:`toolkit.world.topup`: the operator's caller draws
  for a card below its threshold, up to its target, keeping the health factor at or above the
  record's), and ``evm_revert`` rolls them back with the relay.
- Collateral on another chain (USDC on Ethereum by default) is named by its address there:
  lock and unlock then build calls on that chain's escrow (the interface has no chain
  parameter; the address says it). The hub counts a lock, and books off an unlock, once the
  source chain's confirmations have passed (:mod:`toolkit.world.collateral`); ``/info`` shows
  it from then on, and an unlock checks what the hub has booked.
- Lock with ``earn`` wraps the underlying into the strategy's ERC-4626 vault and locks the
  shares that deposit mints if it is mined within an hour (the share price grows every second,
  so a later deposit mints fewer); what it mints beyond that stays in the wallet.
- Unwrapping an ERC-7540 vault position (``/credit/earn/unwrap``, or unlock with ``unwrap``)
  requests the redemption (``requestRedeem``); ``/credit/earn/claim`` builds the claim of request
  ``claimRequestId`` (the ``requestId`` of the vault's ``RedeemRequest`` event) once it is
  claimable, a 400 saying when before that. A claim on a synchronous vault is a 400.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

import eth_abi
from eth_utils import to_checksum_address
from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from toolkit.chain import calls as build
from toolkit.codecs import caip2
from toolkit.codecs.functions import FUNCTIONS
from toolkit.credit import BPS, AccountFigures
from toolkit.resources import (
    ClaimQuery,
    ContractCall,
    HexAddress,
    UnwrapQuery,
    WrapQuery,
    parse_value,
)
from toolkit.resources.credit_queries import (
    AutoTopUpQuery,
    DrawQuery,
    EnableQuery,
    LockQuery,
    LockQueryV1,
    ReceiverQuery,
    RepayQuery,
    UnlockQuery,
    UnlockQueryV1,
)
from toolkit.scenario.credit import CreditCollateral, CreditSettings
from toolkit.server.docs import ERROR_RESPONSES, operation
from toolkit.server.errors import ApiError
from toolkit.server.params import json_response, path_chain, read_query, service_of
from toolkit.server.service import Service
from toolkit.world.chain import AsyncVault, CollateralEscrow, CreditHub, CreditOperator, EarnVault
from toolkit.world.topup import TopUp

__all__ = ["STRATEGIES", "TopUp", "router"]

router = APIRouter(tags=["credit"])

_ERRORS: Final[dict[int | str, dict[str, Any]]] = {
    code: ERROR_RESPONSES[code] for code in (400, 404)
}
_ERRORS_409: Final[dict[int | str, dict[str, Any]]] = {
    **_ERRORS,
    409: {**ERROR_RESPONSES[400], "description": "Account has a different operator"},
}

ZERO: Final = "0x" + "00" * 20
#: Credit assets the interface names (``{asset}`` of v2 paths).
CREDIT_ASSETS: Final = ("usdc", "eure")
#: How far ahead a lock with ``earn`` previews the vault's share price (seconds).
WRAP_HORIZON: Final = 3600


@dataclass(frozen=True)
class Strategy:
    """An earn strategy as ``/credit/protocol`` lists it (the vendor's enum values)."""

    id: str
    name: str
    curator: str
    protocol: str
    vault_type: str
    risk_score: str


#: Earn strategies by vault symbol (lower case) of the scenario's vaults (research §4.4: the
#: Gauntlet vault is ERC-4626; Yo's and Superform's are ERC-7540).
STRATEGIES: Final = {
    "gtusdcp": Strategy(
        "gauntlet-usdc-prime", "Gauntlet USDC Prime", "Gauntlet", "morpho-v1", "erc4626", "5"
    ),
    "yousd": Strategy("yo-usdc", "Yo USDC", "Yo", "yo-protocol", "erc7540", "5"),
    "superusdc": Strategy(
        "superform-usdc", "Superform USDC", "Superform", "superform", "erc7540", "7"
    ),
    "yobtc": Strategy("yo-btc", "Yo BTC", "Yo", "yo-protocol", "erc7540", "5"),
}


def topups(service: Service) -> dict[tuple[str, str, str], TopUp]:
    """The service's auto top-up records by (credit asset, account, receiver), lowercase
    (``("usdc", account, receiver)``), kept and executed by the relay
    (:mod:`toolkit.world.topup`); the seeded book's cards start with one each."""
    return service.relay.topups.records


@dataclass(frozen=True)
class _Book:
    """The credit contracts of a service at one moment."""

    settings: CreditSettings
    hub: CreditHub
    escrow: CollateralEscrow
    operator: CreditOperator
    now: int


def _book(service: Service, request: Request | None = None) -> _Book:
    """The credit contracts of the hub of the ``{asset}`` path parameter of ``request`` (the
    first hub, USDC's, without one): 400 for a name the interface does not know, 404 for a
    credit asset the scenario has no hub for."""
    first = service.scenario.credit
    if first is None:
        raise ApiError(404, "credit: the scenario has no credit product")
    settings = first
    if request is not None:
        settings = _credit_asset(request, first)
    now = service.now()
    service.sync(now)  # remote collateral whose confirmations have passed reaches the hub
    ledger = service.chains.ledger(settings.chain)
    ledger.mine_due(now)
    hub = ledger.contract(settings.hub.lower())
    escrow = ledger.contract(settings.escrow.lower())
    operator = ledger.contract(settings.operator.lower())
    assert isinstance(hub, CreditHub)
    assert isinstance(escrow, CollateralEscrow)
    assert isinstance(operator, CreditOperator)
    return _Book(settings, hub, escrow, operator, int(now))


def _vault(service: Service, book: _Book, c: CreditCollateral) -> EarnVault:
    contract = service.chains.ledger(book.settings.chain).contract(c.address.lower())
    assert isinstance(contract, EarnVault)
    return contract


def _account(request: Request) -> str:
    return _lower_address(request.path_params["account"], "account")


@functools.lru_cache(maxsize=65_536)
def _lower_address(text: str, field: str) -> str:
    """A checked address in lower case (cached: card programs ask about the same accounts)."""
    address: str = parse_value(HexAddress, text, field)
    return address.lower()


def _credit_asset(request: Request, first: CreditSettings) -> CreditSettings:
    text = request.path_params["asset"]
    if text not in CREDIT_ASSETS:
        raise ApiError.bad("asset", f"must be one of {', '.join(CREDIT_ASSETS)}")
    found = first.hub_for(text)
    if found is None:
        raise ApiError(404, f"asset: the scenario has no credit hub for {text}")
    return found


def _collateral(book: _Book, text: str, field: str, chain: int | None = None) -> CreditCollateral:
    """A collateral named by address (on any escrow's chain, or on ``chain``) or by symbol (on
    ``chain``, default the hub's); 404 when not supported."""
    s = book.settings
    if text.startswith("0x"):
        address: str = parse_value(HexAddress, text, field)
        found = s.collateral_at(address, chain)
    else:
        found = next((c for c in s.collateral_on(chain or s.chain) if c.key == text.lower()), None)
    if found is None:
        raise ApiError(404, f"{field}: {text} is not a supported collateral")
    return found


def _human(units: int, decimals: int) -> str:
    """Smallest units as an exact decimal string (``995000000`` → ``995.000000``)."""
    return f"{Decimal(units).scaleb(-decimals):f}"


def _ratio(value: Fraction | None) -> str:
    """A health factor rounded down to 4 decimals; ``Infinity`` for None (no debt)."""
    if value is None:
        return "Infinity"
    return f"{Decimal(value.numerator * 10**4 // value.denominator).scaleb(-4):f}"


def _iso(seconds: int | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def info_wire(f: AccountFigures, decimals: int) -> dict[str, Any]:
    """``UserCreditInfoFMT`` of an account's figures.

    >>> from toolkit.credit import figures
    >>> info_wire(figures({"usdc": 10**9}, principal=5 * 10**8, due_date=0), 6)["healthFactor"]
    '1.8500'
    """
    return {
        "debt": _human(f.debt, decimals),
        "principal": _human(f.principal, decimals),
        "interest": _human(f.interest, decimals),
        "healthFactor": _ratio(f.health_factor),
        "mHealthFactor": _ratio(f.m_health_factor),
        "liquidationLimit": _human(f.liquidation_limit, decimals),
        "totalCollateralValue": _human(f.total_collateral_value, decimals),
        "totalCreditCapacity": _human(f.total_credit_capacity, decimals),
        "remainingCreditCapacity": _human(f.remaining_credit_capacity, decimals),
        "dueDate": _iso(f.due_date),
    }


def _calls(calls: list[ContractCall]) -> Response:
    return json_response({"calls": [c.to_wire() for c in calls]})


# -- reads -------------------------------------------------------------------------------------


@router.get(
    "/credit/protocol",
    summary="Credit protocol configuration",
    responses=_ERRORS,
    openapi_extra=operation(),
)
async def protocol(request: Request) -> Response:
    service = service_of(request)
    book = _book(service)
    s = book.settings
    weth = _weth(service, s.chain)
    collateral: dict[str, Any] = {}
    strategies: dict[str, Any] = {}
    for c in s.collateral:
        strategy = STRATEGIES.get(c.key) if c.vault is not None else None
        collateral[f"erc20:{c.address.lower()}"] = _collateral_entry(
            s, c, strategy.id if strategy else ""
        )
        if strategy is not None:
            strategies[strategy.id] = {
                "name": strategy.name,
                "curator": strategy.curator,
                "protocol": strategy.protocol,
                "vaultAddress": c.address,
                "underlyingAddress": s.underlying_of(c)[0],
                "vaultType": strategy.vault_type,
                "type": "Lending",
                "riskScore": strategy.risk_score,
            }
    chain = {
        "creditHubs": {
            h.asset.lower(): {
                "creditHubAddress": h.hub,
                "creditHubControllerAddress": h.controller,
                "assetAddress": h.asset_address,
            }
            for h in s.hubs
        },
        "collateral": collateral,
        "strategies": strategies,
        "escrowsMetadata": {"controller": s.escrow_controller, "helper": s.escrow_helper},
        "wrappedNativeAddress": weth,
    }
    chains = {caip2.format(s.chain): chain}
    for remote in s.remote_chains:
        chains[caip2.format(remote)] = {
            "creditHubs": {},
            "collateral": {
                f"erc20:{c.address.lower()}": _collateral_entry(s, c, "")
                for c in s.collateral_on(remote)
            },
            "strategies": {},
            "escrowsMetadata": {"controller": s.escrow_controller, "helper": s.escrow_helper},
            "wrappedNativeAddress": _weth(service, remote),
        }
    return json_response({"chains": chains})


def _weth(service: Service, chain: int) -> str:
    return next(
        (t.address for t in service.scenario.tokens if t.chain == chain and t.symbol == "WETH"),
        ZERO,
    )


def _collateral_entry(s: CreditSettings, c: CreditCollateral, strategy: str) -> dict[str, str]:
    return {
        "escrowAddress": s.escrow,
        "symbol": c.key,
        "ltv": str(c.rule.ltv_bps),
        "maintenanceLtv": str(c.rule.maintenance_ltv_bps),
        "liquidationBonus": str(c.rule.liquidation_bonus_bps),
        "strategy": strategy,
    }


@router.get(
    "/credit/accounts/{account}/info",
    summary="Credit account info (v1)",
    responses=_ERRORS,
    openapi_extra=operation(path=["account"]),
)
async def info(request: Request) -> Response:
    account = _account(request)
    service = service_of(request)
    book = _book(service)
    data = {book.settings.asset.upper(): _info(book, account)}
    ledger = service.chains.ledger(book.settings.chain)
    for other in book.settings.others:
        hub = ledger.contract(other.hub.lower())
        assert isinstance(hub, CreditHub)
        data[other.asset.upper()] = info_wire(hub.figures(account, book.now), other.asset_decimals)
    return json_response({"data": data})


def _info(book: _Book, account: str) -> dict[str, Any]:
    return info_wire(book.hub.figures(account, book.now), book.settings.asset_decimals)


def _collateral_details(request: Request, book: _Book) -> Response:
    chain = path_chain(request.path_params["chain"], "chain")
    if chain != book.settings.chain and chain not in book.settings.remote_chains:
        raise ApiError(404, f"chain: no credit collateral on {caip2.format(chain)}")
    c = _collateral(book, request.path_params["collateral"], "collateral", chain)
    usd = float(book.settings.usd_per_unit(c, book.now) * 10**c.decimals)
    data: dict[str, Any] = {
        "collateralAddress": c.address,
        "collateralPriceUsd": usd,
        "earnServiceName": "",
        "isEarnVault": c.vault is not None,
    }
    strategy = STRATEGIES.get(c.key)
    if c.vault is not None:
        data["earnServiceName"] = strategy.curator if strategy else c.symbol
        data["apy"] = c.vault.apy_bps / 100
        data["underlyingAsset"] = book.settings.underlying_of(c)[0]
        own = c.vault.underlying is not None
        data["underlyingPriceUsd"] = float(c.price_usd(book.now)) if own else 1.0
    return json_response({"data": data})


@router.get(
    "/credit/collateral/{chain}/{collateral}",
    summary="Collateral details (v1)",
    responses=_ERRORS,
    openapi_extra=operation(path=["chain", "collateral"]),
)
async def collateral_v1(request: Request) -> Response:
    return _collateral_details(request, _book(service_of(request)))


@router.get(
    "/credit/v2/assets/{asset}/collateral/{chain}/{collateral}",
    summary="Collateral details",
    responses=_ERRORS,
    openapi_extra=operation(path=["asset", "chain", "collateral"]),
)
async def collateral_v2(request: Request) -> Response:
    book = _book(service_of(request), request)
    return _collateral_details(request, book)


def _operator_status(request: Request, book: _Book) -> Response:
    account = _account(request)
    operator = book.hub.operators.get(account, ZERO)
    receivers = book.operator.receivers(account) if operator == book.operator.address else []
    checksum = _checksum
    return json_response(
        {"data": {"operator": checksum(operator), "receivers": [checksum(r) for r in receivers]}}
    )


def _checksum(address: str) -> str:
    out: str = parse_value(HexAddress, address, "address")
    return out


@router.get(
    "/credit/accounts/{account}/operator",
    summary="Operator status (v1)",
    responses=_ERRORS,
    openapi_extra=operation(path=["account"]),
)
async def operator_v1(request: Request) -> Response:
    return _operator_status(request, _book(service_of(request)))


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/operator",
    summary="Operator status",
    responses=_ERRORS,
    openapi_extra=operation(path=["account", "asset"]),
)
async def operator_v2(request: Request) -> Response:
    book = _book(service_of(request), request)
    return _operator_status(request, book)


# -- lock and unlock ---------------------------------------------------------------------------


def _lock_asset(book: _Book, text: str, field: str, earn: str | None) -> CreditCollateral | str:
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
    return _collateral(book, text, field)


def _lock(
    service: Service,
    book: _Book,
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
    vault = _vault(service, book, target)
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
    responses=_ERRORS,
    openapi_extra=operation(path=["account"], query=LockQueryV1),
)
async def lock_v1(request: Request) -> Response:
    service = service_of(request)
    account = _account(request)
    q = read_query(request, LockQueryV1)
    book = _book(service)
    c = _lock_asset(book, q.asset, "asset", q.earn)
    return _calls(_lock(service, book, account, int(q.amount), c, q.earn))


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/lock",
    summary="Lock collateral",
    responses=_ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=LockQuery),
)
async def lock_v2(request: Request) -> Response:
    service = service_of(request)
    account = _account(request)
    q = read_query(request, LockQuery)
    book = _book(service, request)
    c = _lock_asset(book, q.earn_asset, "earnAsset", q.earn)
    return _calls(_lock(service, book, account, int(q.amount), c, q.earn))


def _unlock(
    book: _Book, account: str, amount: int, c: CreditCollateral, unwrap: bool | None
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
        calls.append(_redeem_call(s, c, amount, account, account))
    return calls


def _redeem_call(
    s: CreditSettings, c: CreditCollateral, shares: int, receiver: str, owner: str
) -> ContractCall:
    """Redeem (ERC-4626) or request the redemption (ERC-7540) of ``shares``."""
    if c.vault is not None and c.vault.asynchronous:
        return build.vault_request_redeem(s.chain, c.address, shares, owner, owner)
    return build.vault_redeem(s.chain, c.address, shares, receiver, owner)


@router.get(
    "/credit/accounts/{account}/unlock",
    summary="Unlock collateral (v1)",
    responses=_ERRORS,
    openapi_extra=operation(path=["account"], query=UnlockQueryV1),
)
async def unlock_v1(request: Request) -> Response:
    account = _account(request)
    q = read_query(request, UnlockQueryV1)
    book = _book(service_of(request))
    c = _collateral(book, q.asset, "asset")
    return _calls(_unlock(book, account, int(q.amount), c, q.unwrap))


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/unlock",
    summary="Unlock collateral",
    responses=_ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=UnlockQuery),
)
async def unlock_v2(request: Request) -> Response:
    account = _account(request)
    q = read_query(request, UnlockQuery)
    book = _book(service_of(request), request)
    c = _collateral(book, q.collateral, "collateral")
    return _calls(_unlock(book, account, int(q.amount), c, q.unwrap))


# -- draw and repay ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=65_536)
def _checksummed(address: str) -> str:
    return to_checksum_address(address)


def hot_call(chain: int, to: str, function: str, *args: Any) -> dict[str, str]:
    """The wire form of a call on the card program's hot path (draw, repay), encoded straight
    from the function table; arguments are already checked (addresses: any case).

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


def _draw(book: _Book, account: str, q: DrawQuery) -> list[dict[str, str]]:
    s = book.settings
    f = book.hub.figures(account, book.now)
    amount = q.amount_int
    if f.debt + amount > f.total_credit_capacity:
        remaining = _human(f.remaining_credit_capacity, s.asset_decimals)
        raise ApiError.bad(
            "amount",
            f"exceeds the remaining credit capacity ({remaining} {s.asset}): the maintenance "
            "health factor would fall below 1",
        )
    return [hot_call(s.chain, s.hub, "creditHub.drawCredit", account, q.receiver, amount)]


@router.get(
    "/credit/accounts/{account}/draw",
    summary="Draw credit (v1)",
    responses=_ERRORS,
    openapi_extra=operation(path=["account"], query=DrawQuery),
)
async def draw_v1(request: Request) -> Response:
    account = _account(request)
    q = read_query(request, DrawQuery)
    return _hot(_draw(_book(service_of(request)), account, q))


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/draw",
    summary="Draw credit",
    responses=_ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=DrawQuery),
)
async def draw_v2(request: Request) -> Response:
    account = _account(request)
    q = read_query(request, DrawQuery)
    book = _book(service_of(request), request)
    return _hot(_draw(book, account, q))


def _repay(book: _Book, account: str, q: RepayQuery) -> list[dict[str, str]]:
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
    responses=_ERRORS,
    openapi_extra=operation(path=["account"], query=RepayQuery),
)
async def repay_v1(request: Request) -> Response:
    account = _account(request)
    q = read_query(request, RepayQuery)
    return _hot(_repay(_book(service_of(request)), account, q))


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/repay",
    summary="Repay credit",
    responses=_ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=RepayQuery),
)
async def repay_v2(request: Request) -> Response:
    account = _account(request)
    q = read_query(request, RepayQuery)
    book = _book(service_of(request), request)
    return _hot(_repay(book, account, q))


# -- auto top-up -------------------------------------------------------------------------------


def _setup_calls(book: _Book, account: str, receiver: str) -> list[ContractCall]:
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


def _key(book: _Book, account: str, receiver: str) -> tuple[str, str, str]:
    return (book.settings.asset.lower(), account, receiver.lower())


def _record(service: Service, book: _Book, account: str, receiver: str, q: Any) -> None:
    if q.threshold is None:
        return
    topups(service)[_key(book, account, receiver)] = TopUp(
        q.threshold, q.target_balance, q.health_factor or str(BPS)
    )


@router.get(
    "/credit/accounts/{account}/operator/auto-topup/enable",
    summary="Enable auto top-up (v1)",
    responses=_ERRORS_409,
    openapi_extra=operation(path=["account"], query=EnableQuery),
)
async def enable_v1(request: Request) -> Response:
    service = service_of(request)
    account = _account(request)
    q = read_query(request, EnableQuery)
    book = _book(service)
    calls = _setup_calls(book, account, q.receiver)
    _record(service, book, account, q.receiver, q)
    return _calls(calls)


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/operator/auto-topup/enable",
    summary="Enable auto top-up",
    responses=_ERRORS_409,
    openapi_extra=operation(path=["account", "asset"], query=AutoTopUpQuery),
)
async def enable_v2(request: Request) -> Response:
    service = service_of(request)
    account = _account(request)
    q = read_query(request, AutoTopUpQuery)
    book = _book(service, request)
    calls = _setup_calls(book, account, q.receiver)
    _record(service, book, account, q.receiver, q)
    return _calls(calls)


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/operator/auto-topup/update",
    summary="Update auto top-up",
    responses=_ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=AutoTopUpQuery),
)
async def update_v2(request: Request) -> Response:
    service = service_of(request)
    account = _account(request)
    q = read_query(request, AutoTopUpQuery)
    book = _book(service, request)
    if _key(book, account, q.receiver) not in topups(service):
        raise ApiError(404, f"receiver: no auto top-up is configured for {q.receiver}")
    calls = _setup_calls(book, account, q.receiver)
    _record(service, book, account, q.receiver, q)
    return _calls(calls)


def _disable(service: Service, book: _Book, account: str, receiver: str) -> Response:
    s = book.settings
    topups(service).pop(_key(book, account, receiver), None)
    if book.operator.whitelist.get((account, receiver.lower())):
        return _calls([build.remove_credit_receiver(s.chain, s.operator, receiver)])
    return _calls([])


@router.get(
    "/credit/accounts/{account}/operator/auto-topup/disable",
    summary="Disable auto top-up (v1)",
    responses=_ERRORS,
    openapi_extra=operation(path=["account"], query=ReceiverQuery),
)
async def disable_v1(request: Request) -> Response:
    service = service_of(request)
    account = _account(request)
    q = read_query(request, ReceiverQuery)
    return _disable(service, _book(service), account, q.receiver)


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/operator/auto-topup/disable",
    summary="Disable auto top-up",
    responses=_ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=ReceiverQuery),
)
async def disable_v2(request: Request) -> Response:
    service = service_of(request)
    account = _account(request)
    q = read_query(request, ReceiverQuery)
    book = _book(service, request)
    return _disable(service, book, account, q.receiver)


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/operator/auto-topup/config",
    summary="Auto top-up config",
    responses=_ERRORS,
    openapi_extra=operation(path=["account", "asset"], query=ReceiverQuery),
)
async def config_v2(request: Request) -> Response:
    service = service_of(request)
    account = _account(request)
    q = read_query(request, ReceiverQuery)
    book = _book(service, request)
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


# -- earn --------------------------------------------------------------------------------------


def _earn_vault(service: Service, book: _Book, address: str, field: str) -> EarnVault:
    c = book.settings.collateral_at(address)
    if c is None or c.vault is None:
        raise ApiError(404, f"{field}: {address} is not an earn vault of this scenario")
    return _vault(service, book, c)


def _earn_chain(book: _Book, text: str) -> None:
    chain = path_chain(text, "chain")
    if chain != book.settings.chain:
        raise ApiError.bad("chain", f"no earn vaults on {text}")


@router.get(
    "/credit/earn/wrap",
    summary="Wrap into an earn vault",
    responses=_ERRORS,
    openapi_extra=operation(query=WrapQuery),
)
async def wrap(request: Request) -> Response:
    service = service_of(request)
    q = read_query(request, WrapQuery)
    book = _book(service)
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
    vault = _vault(service, book, target)
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
    responses=_ERRORS,
    openapi_extra=operation(query=UnwrapQuery),
)
async def unwrap(request: Request) -> Response:
    service = service_of(request)
    q = read_query(request, UnwrapQuery)
    book = _book(service)
    _earn_chain(book, q.chain)
    vault = _earn_vault(service, book, q.asset, "asset")
    shares = int(q.amount)
    out = vault.preview_redeem(shares, book.now)
    keep = Fraction(1) - Fraction(Decimal(str(q.slippage))) / 100
    minimum = int(out * keep)
    c = book.settings.collateral_at(vault.address)
    assert c is not None
    call = _redeem_call(book.settings, c, shares, q.receiver, q.owner)
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
    responses=_ERRORS,
    openapi_extra=operation(query=ClaimQuery),
)
async def claim(request: Request) -> Response:
    service = service_of(request)
    q = read_query(request, ClaimQuery)
    book = _book(service)
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
        raise ApiError.bad("owner", f"request {number} belongs to {_checksum(controller)}")
    if vault.claimed.get(number):
        raise ApiError.bad("claimRequestId", f"request {number} is already claimed")
    if book.now < claimable_at:
        raise ApiError.bad(
            "claimRequestId", f"request {number} is claimable from {_iso(claimable_at)}"
        )
    call = build.vault_claim_redeem(book.settings.chain, vault.address, shares, q.receiver, q.owner)
    return _calls([call])
