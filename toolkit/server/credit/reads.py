"""The reads: protocol configuration, account info, collateral details, operator status."""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import Response

from toolkit.codecs import caip2
from toolkit.resources import (
    CollateralDetailsResponse,
    CreditInfoResponse,
    OperatorStatus,
    ProtocolConfig,
)
from toolkit.scenario.credit import CreditCollateral, CreditSettings
from toolkit.server.credit.book import ERRORS, CreditContracts, account_of, book_of, find_collateral
from toolkit.server.credit.strategies import STRATEGIES
from toolkit.server.credit.wire import checksum, info_wire
from toolkit.server.docs import operation
from toolkit.server.errors import ApiError
from toolkit.server.params import json_response, path_chain, service_of
from toolkit.server.routing import surface_router
from toolkit.server.service import Service
from toolkit.world.evm import CreditHub

router = surface_router(tags=["credit"])

ZERO: Final = "0x" + "00" * 20


@router.get(
    "/credit/protocol",
    summary="Credit protocol configuration",
    response_model=ProtocolConfig,
    responses=ERRORS,
    openapi_extra=operation(),
)
async def protocol(request: Request) -> Response:
    service = service_of(request)
    book = book_of(service)
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
    response_model=CreditInfoResponse,
    responses=ERRORS,
    openapi_extra=operation(path=["account"]),
)
async def info(request: Request) -> Response:
    account = account_of(request)
    service = service_of(request)
    book = book_of(service)
    data = {book.settings.asset.upper(): _info(book, account)}
    ledger = service.chains.ledger(book.settings.chain)
    for other in book.settings.others:
        hub = ledger.contract(other.hub.lower())
        assert isinstance(hub, CreditHub)
        data[other.asset.upper()] = info_wire(hub.figures(account, book.now), other.asset_decimals)
    return json_response({"data": data})


def _info(book: CreditContracts, account: str) -> dict[str, Any]:
    return info_wire(book.hub.figures(account, book.now), book.settings.asset_decimals)


def _collateral_details(request: Request, book: CreditContracts) -> Response:
    chain = path_chain(request.path_params["chain"], "chain")
    if chain != book.settings.chain and chain not in book.settings.remote_chains:
        raise ApiError(404, f"chain: no credit collateral on {caip2.format(chain)}")
    c = find_collateral(book, request.path_params["collateral"], "collateral", chain)
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
    response_model=CollateralDetailsResponse,
    responses=ERRORS,
    openapi_extra=operation(path=["chain", "collateral"]),
)
async def collateral_v1(request: Request) -> Response:
    return _collateral_details(request, book_of(service_of(request)))


@router.get(
    "/credit/v2/assets/{asset}/collateral/{chain}/{collateral}",
    summary="Collateral details",
    response_model=CollateralDetailsResponse,
    responses=ERRORS,
    openapi_extra=operation(path=["asset", "chain", "collateral"]),
)
async def collateral_v2(request: Request) -> Response:
    book = book_of(service_of(request), request)
    return _collateral_details(request, book)


def _operator_status(request: Request, book: CreditContracts) -> Response:
    account = account_of(request)
    operator = book.hub.operators.get(account, ZERO)
    receivers = book.operator.receivers(account) if operator == book.operator.address else []
    return json_response(
        {"data": {"operator": checksum(operator), "receivers": [checksum(r) for r in receivers]}}
    )


@router.get(
    "/credit/accounts/{account}/operator",
    summary="Operator status (v1)",
    response_model=OperatorStatus,
    responses=ERRORS,
    openapi_extra=operation(path=["account"]),
)
async def operator_v1(request: Request) -> Response:
    return _operator_status(request, book_of(service_of(request)))


@router.get(
    "/credit/v2/accounts/{account}/assets/{asset}/operator",
    summary="Operator status",
    response_model=OperatorStatus,
    responses=ERRORS,
    openapi_extra=operation(path=["account", "asset"]),
)
async def operator_v2(request: Request) -> Response:
    book = book_of(service_of(request), request)
    return _operator_status(request, book)
