"""Liquidity responses validate against the vendor's OpenAPI document (one test per endpoint)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from openapi_core import OpenAPI
from openapi_core.testing import MockRequest, MockResponse
from openapi_schema_validator import OAS30Validator

from tests.reference import reference_document

from .conftest import AUTH, USDC, Client

DOCUMENT = reference_document("service-openapi.json")
HOST = "https://api.example.com"


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return DOCUMENT


@pytest.fixture(scope="module")
def spec(document: dict[str, Any]) -> OpenAPI:
    # The credit operations are not served here, and one of them refers to a schema the
    # document does not define (credit.callsResponse), which openapi-core rejects as a whole.
    served = {path: item for path, item in document["paths"].items() if "/credit" not in path}
    return OpenAPI.from_dict({**document, "paths": served})


def validate(
    spec: OpenAPI, answer: httpx.Response, path: str, params: dict[str, str] | None = None
) -> None:
    """Validate one response of ours against the operation it answers in the reference."""
    request = MockRequest(
        HOST,
        answer.request.method,
        path,
        args=params or {},
        headers=dict(AUTH),
        data=answer.request.content or None,
    )
    media = answer.headers["content-type"].split(";")[0]
    # openapi-core has no deserializer for event streams; it compares them as text.
    body: Any = answer.text if media == "text/event-stream" else answer.content
    response = MockResponse(
        body,
        status_code=answer.status_code,
        content_type=media,
    )
    spec.validate_response(request, response)


def test_tokens(client: Client, spec: OpenAPI) -> None:
    path = "/liquidity/chain/eip155:8453/tokens"
    answer = client.get(path, headers=AUTH)
    assert answer.status_code == 200
    validate(spec, answer, path)
    bad = client.get("/liquidity/chain/nowhere/tokens", headers=AUTH)
    validate(spec, bad, "/liquidity/chain/nowhere/tokens")


def test_pools(client: Client, spec: OpenAPI) -> None:
    path = "/liquidity/pools/aave"
    params = {"chain": "eip155:42161", "tokenSymbol": "USDC"}
    answer = client.get(path, params=params, headers=AUTH)
    assert answer.status_code == 200
    validate(spec, answer, path, params)
    bad = client.get(path, params={"chain": "x"}, headers=AUTH)
    assert bad.status_code == 400
    validate(spec, bad, path, {"chain": "x"})


def test_fees(client: Client, spec: OpenAPI) -> None:
    path = "/liquidity/protocol/partner-escrow/fees"
    params = {
        "srcChain": "eip155:10",
        "dstChain": "eip155:1",
        "srcToken": "WETH",
        "dstToken": "WETH",
    }
    answer = client.get(path, params=params, headers=AUTH)
    assert answer.status_code == 200
    validate(spec, answer, path, params)
    missing = {**params, "dstChain": "eip155:10"}
    not_found = client.get(path, params=missing, headers=AUTH)
    assert not_found.status_code == 404
    validate(spec, not_found, path, missing)


def test_solver(client: Client, spec: OpenAPI) -> None:
    path = "/protocol/partner-escrow/solver"
    params = {
        "amount": "250",
        "sourceChainId": "eip155:42161",
        "destinationChainId": "eip155:10",
        "sourceToken": "USDC",
        "destinationToken": "USDC",
    }
    answer = client.get(path, params=params)
    assert answer.status_code == 200
    validate(spec, answer, path, params)


def test_health(client: Client, spec: OpenAPI) -> None:
    answer = client.get("/health")
    validate(spec, answer, "/health")


@pytest.mark.parametrize(("src", "kind"), [(1, "ExactInput"), (42161, "ExactOutput")])
def test_borrow_quote(client: Client, spec: OpenAPI, src: int, kind: str) -> None:
    path = f"/liquidity/v2/chain/eip155:{src}/protocol/partner-escrow/type/{kind}/quote"
    params = {"dstChain": "eip155:8453", "amount": "250000000", "token": USDC[8453]}
    answer = client.get(path, params=params, headers=AUTH)
    assert answer.status_code == 200
    validate(spec, answer, path, params)
    bad = client.get(path, params={**params, "amount": "-1"}, headers=AUTH)
    validate(spec, bad, path, {**params, "amount": "-1"})


def test_borrow_quote_from_a_non_hub_chain_is_valid(client: Client, spec: OpenAPI) -> None:
    # The vendor schema only allows repaymentChain 1 or 42161, even for quotes from Base.
    path = "/liquidity/v2/chain/eip155:8453/protocol/partner-escrow/type/ExactInput/quote"
    params = {"dstChain": "eip155:10", "amount": "250000000", "token": USDC[10]}
    answer = client.get(path, params=params, headers=AUTH)
    validate(spec, answer, path, params)


def test_signature(client: Client, document: dict[str, Any]) -> None:
    # The reference declares the event-stream body with the JSON schema of its event's data.
    path = "/liquidity/v2/chain/eip155:8453/protocol/partner-escrow/signature"
    quote_path = "/liquidity/v2/chain/eip155:1/protocol/partner-escrow/type/ExactInput/quote"
    quote = client.get(
        quote_path,
        params={"dstChain": "eip155:8453", "amount": "250000000", "token": USDC[8453]},
        headers=AUTH,
    ).json()["data"]
    body = {
        "caller": "0x" + "22" * 20,
        "input": "0x",
        "quoteId": quote["id"],
        "txHash": "0x" + "1" * 64,
    }
    operation = document["paths"][
        path.replace("eip155:8453", "{dstChain}").replace("partner-escrow", "{protocol}")
    ]["post"]
    OAS30Validator(
        _resolved(document, operation["requestBody"]["content"]["application/json"]["schema"])
    ).validate(body)
    answer = client.post(path, json=body, headers=AUTH)
    assert answer.status_code == 200
    data_lines = [
        line.removeprefix("data: ")
        for line in answer.text.splitlines()
        if line.startswith("data: ")
    ]
    assert len(data_lines) == 1
    schema = operation["responses"]["200"]["content"]["text/event-stream"]["schema"]
    OAS30Validator(_resolved(document, schema)).validate(json.loads(data_lines[0]))


def test_events(client: Client, spec: OpenAPI) -> None:
    # In-process the stream's body arrives once the stream ends: end it from the loop.
    path = "/liquidity/protocol/partner-escrow/events"
    service = client.app.state.service
    client.call_later(0.3, service.close_streams)
    answer = client.get(path, headers=AUTH)
    assert answer.status_code == 200
    assert "event: liquidity" in answer.text
    validate(spec, answer, path)


def _resolved(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``$ref`` members replaced by the referenced components."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return _resolved(document, document["components"]["schemas"][name])
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if isinstance(value, dict):
            out[key] = _resolved(document, value)
        elif isinstance(value, list):
            out[key] = [_resolved(document, v) if isinstance(v, dict) else v for v in value]
        else:
            out[key] = value
    return out


def test_every_operation_missing_on_either_side_is_listed_with_its_reason() -> None:
    from toolkit.scenario import load_scenario
    from toolkit.server import create_app

    listed = (Path(__file__).with_name("vendor-differences.md")).read_text(encoding="utf-8")
    ours = create_app(load_scenario("default")).openapi()["paths"]
    swap = reference_document("swap-openapi.yaml")["paths"]
    vendor = {**DOCUMENT["paths"], **{"/swap" + path: item for path, item in swap.items()}}
    for path in sorted(set(ours) ^ set(vendor)):
        assert f"`{path}`" in listed or any(
            f"{method.upper()} {path}`" in listed for method in ("get", "post")
        ), path
