"""Every credit endpoint's answers (200 and errors) validate against the vendor's credit
operations, in the corrected copy kept beside this file (``credit-openapi.json``).

The vendor document contradicts itself or the spec in these places, corrected in the copy:

1. ``evm.ContractCall``: ``to`` and ``data`` are typed as byte arrays and ``value`` as a
   ``types.BigInt`` object; the spec and the docs' examples have hex strings and a decimal string.
2. ``credit.UserCreditInfoFMT.dueDate`` is typed as a string yet documented as null with no
   active credit: it is nullable.
3. ``credit.callsResponse`` (the answer of auto-top-up ``update``) is referenced but never
   defined: defined as ``{calls: [ContractCall]}``.
4. ``entity.TokenSymbol`` (a collateral's ``symbol``) lists only raw stablecoins although vault
   shares are collateral: the scenario's vault and token symbols are added.
5. ``config.CollateralDetails`` gains ``maintenanceLtv`` and ``liquidationBonus`` (bps strings),
   which the toolkit adds beside ``ltv``.
6. v2 auto-top-up ``enable`` declares only ``receiver`` while the spec gives it ``threshold``,
   ``targetBalance`` and ``healthFactor``; ``update`` and ``config`` declare no error answers
   although ``targetBalance < threshold`` is a 400 and an unknown receiver a 404.

The copy is compared with the vendor's document below, so it cannot drift beyond these.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from openapi_core import OpenAPI
from openapi_core.testing import MockRequest, MockResponse

from tests.credit_surface.book import Book, account, credit_book, small_book
from tests.reference import reference_document

COPY = Path(__file__).with_name("credit-openapi.json")
HOST = "https://api.example.com"
USDC = 10**6


@pytest.fixture(scope="module")
def spec() -> OpenAPI:
    return OpenAPI.from_dict(json.loads(COPY.read_text(encoding="utf-8")))


def test_the_copy_differs_from_the_vendor_only_where_listed() -> None:
    vendor = reference_document("service-openapi.json")
    copy = json.loads(COPY.read_text(encoding="utf-8"))
    vendor_paths = {p: v for p, v in vendor["paths"].items() if p.startswith("/credit")}
    assert sorted(copy["paths"]) == sorted(vendor_paths)
    changed = {
        name
        for name, schema in copy["components"]["schemas"].items()
        if vendor["components"]["schemas"].get(name) != schema
    }
    assert changed == {
        "evm.ContractCall",
        "credit.UserCreditInfoFMT",
        "credit.callsResponse",
        "entity.TokenSymbol",
        "config.CollateralDetails",
    }
    different = {p for p in copy["paths"] if copy["paths"][p] != vendor_paths[p]}
    assert different == {
        "/credit/v2/accounts/{account}/assets/{asset}/operator/auto-topup/enable",
        "/credit/v2/accounts/{account}/assets/{asset}/operator/auto-topup/update",
        "/credit/v2/accounts/{account}/assets/{asset}/operator/auto-topup/config",
    }


def _validate(spec: OpenAPI, answer: httpx.Response, path: str) -> None:
    request = MockRequest(HOST, "get", path, args=dict(answer.request.url.params))
    response = MockResponse(answer.content, status_code=answer.status_code)
    spec.validate_response(request, response)


def _get(book: Book, spec: OpenAPI, template: str, status: int, **params: Any) -> Any:
    path = template.format(**params.pop("path", {}))
    answer = book.svc.http.get(path, params=params)
    assert answer.status_code == status, (path, answer.text)
    _validate(spec, answer, path)
    return answer.json()


def test_every_credit_answer_validates(spec: OpenAPI) -> None:
    with credit_book(small_book(0)) as book:
        user, card = account(50), account(51)
        usdc = book.settings.asset_address
        book.deal(user, usdc, 3_000 * USDC)
        v1 = "/credit/accounts/{account}"
        v2 = "/credit/v2/accounts/{account}/assets/{asset}"
        p1, p2 = {"account": user}, {"account": user, "asset": "usdc"}
        vault = book.settings.collateral_by_symbol("gtUSDCp")
        assert vault is not None

        protocol = _get(book, spec, "/credit/protocol", 200)
        assert protocol["chains"]["eip155:8453"]["strategies"]["gauntlet-usdc-prime"]
        _get(book, spec, v1 + "/info", 200, path=p1)
        for template, path in (
            ("/credit/collateral/{chain}/{collateral}", {}),
            ("/credit/v2/assets/{asset}/collateral/{chain}/{collateral}", {"asset": "usdc"}),
        ):
            for address in (usdc, vault.address):
                _get(
                    book,
                    spec,
                    template,
                    200,
                    path={**path, "chain": "eip155:8453", "collateral": address},
                )
            _get(
                book, spec, template, 404, path={**path, "chain": "eip155:8453", "collateral": card}
            )
        lock = _get(
            book, spec, v2 + "/lock", 200, path=p2, amount=str(2_000 * USDC), earnAsset=usdc
        )
        book.run(user, lock["calls"])
        _get(
            book,
            spec,
            v1 + "/lock",
            200,
            path=p1,
            amount="5",
            asset="usdc",
            earn="gauntlet-usdc-prime",
        )
        _get(book, spec, v1 + "/lock", 400, path=p1, amount="５", asset="usdc")
        draw = _get(book, spec, v2 + "/draw", 200, path=p2, amount=str(500 * USDC), receiver=card)
        book.run(user, draw["calls"])
        _get(book, spec, v1 + "/draw", 400, path=p1, amount=str(10**12), receiver=card)
        info = _get(book, spec, v1 + "/info", 200, path=p1)
        assert info["data"]["USDC"]["dueDate"] is not None
        _get(book, spec, v1 + "/repay", 200, path=p1, amount="1")
        _get(book, spec, v2 + "/repay", 200, path=p2, amount="1")
        _get(book, spec, v1 + "/unlock", 200, path=p1, amount="1", asset=usdc)
        _get(book, spec, v2 + "/unlock", 400, path=p2, amount=str(2_000 * USDC), collateral=usdc)
        _get(book, spec, v1 + "/operator", 200, path=p1)
        _get(book, spec, v2 + "/operator", 200, path=p2)
        topup = {"receiver": card, "threshold": "5", "targetBalance": "10"}
        _get(book, spec, v2 + "/operator/auto-topup/enable", 200, path=p2, **topup)
        _get(book, spec, v2 + "/operator/auto-topup/update", 200, path=p2, **topup)
        _get(
            book,
            spec,
            v2 + "/operator/auto-topup/update",
            400,
            path=p2,
            **{**topup, "threshold": "11"},
        )
        _get(book, spec, v2 + "/operator/auto-topup/config", 200, path=p2, receiver=card)
        _get(book, spec, v2 + "/operator/auto-topup/config", 404, path=p2, receiver=user)
        _get(book, spec, v1 + "/operator/auto-topup/enable", 200, path=p1, receiver=card)
        _get(book, spec, v2 + "/operator/auto-topup/disable", 200, path=p2, receiver=card)
        _get(book, spec, v1 + "/operator/auto-topup/disable", 200, path=p1, receiver=card)
        earn = {"chain": "eip155:8453"}
        _get(
            book, spec, "/credit/earn/wrap", 200, account=user, amount="1000000", token=usdc, **earn
        )
        _get(
            book,
            spec,
            "/credit/earn/unwrap",
            200,
            owner=user,
            receiver=user,
            amount=str(10**18),
            asset=vault.address,
            **earn,
        )
        _get(
            book,
            spec,
            "/credit/earn/claim",
            400,
            owner=user,
            receiver=user,
            asset=vault.address,
            claimRequestId="1",
            **earn,
        )
