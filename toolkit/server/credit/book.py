"""The credit contracts a request addresses, and the parsing of the path parameters that name
them (account, credit asset, collateral); the error responses the operations document."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Final

from starlette.requests import Request

from toolkit.resources import HexAddress, parse_value
from toolkit.scenario.credit import CreditCollateral, CreditSettings
from toolkit.server.docs import ERROR_RESPONSES
from toolkit.server.errors import ApiError
from toolkit.server.service import Service
from toolkit.world.evm import CollateralEscrow, CreditHub, CreditOperator, EarnVault

ERRORS: Final[dict[int | str, dict[str, Any]]] = {
    code: ERROR_RESPONSES[code] for code in (400, 404)
}
ERRORS_409: Final[dict[int | str, dict[str, Any]]] = {
    **ERRORS,
    409: {**ERROR_RESPONSES[400], "description": "Account has a different operator"},
}
#: Credit assets the interface names (``{asset}`` of v2 paths).
CREDIT_ASSETS: Final = ("usdc", "eure")


@dataclass(frozen=True)
class CreditContracts:
    """The credit contracts of a service at one moment (the hub, escrow and operator a request
    addresses; not a book of accounts, which is :class:`toolkit.models.health.CreditBook`)."""

    settings: CreditSettings
    hub: CreditHub
    escrow: CollateralEscrow
    operator: CreditOperator
    now: int


def book_of(service: Service, request: Request | None = None) -> CreditContracts:
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
    return CreditContracts(settings, hub, escrow, operator, int(now))


def vault_of(service: Service, book: CreditContracts, c: CreditCollateral) -> EarnVault:
    contract = service.chains.ledger(book.settings.chain).contract(c.address.lower())
    assert isinstance(contract, EarnVault)
    return contract


def account_of(request: Request) -> str:
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


def find_collateral(
    book: CreditContracts, text: str, field: str, chain: int | None = None
) -> CreditCollateral:
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
