"""Error answers: the spec's `{error, debug?}` body everywhere, 401 for keys, no 422, no 500."""

from __future__ import annotations

import pytest
from fastapi import FastAPI

from toolkit.server import ApiError
from toolkit.server.errors import error_response

from .conftest import AUTH, Client, rfq_params

KEYED_GETS = [
    "/partner-intents/rfq",
    "/liquidity/chain/eip155:8453/tokens",
    "/liquidity/pools/usdc?chain=eip155:8453&tokenSymbol=USDC",
    "/liquidity/protocol/partner-escrow/fees",
    "/liquidity/v2/chain/eip155:1/protocol/partner-escrow/type/ExactInput/quote",
    "/liquidity/protocol/partner-escrow/events",
]


@pytest.mark.parametrize("path", KEYED_GETS)
def test_missing_key_is_401(client: Client, path: str) -> None:
    answer = client.get(path)
    assert answer.status_code == 401
    assert answer.json() == {"error": "X-Auth-Token: is required"}


@pytest.mark.parametrize("path", KEYED_GETS)
def test_unknown_key_is_401_and_not_echoed(client: Client, path: str) -> None:
    answer = client.get(path, headers={"X-Auth-Token": "guess-123"})
    assert answer.status_code == 401
    assert answer.json() == {"error": "X-Auth-Token: is not a recognized API key"}
    assert "guess-123" not in answer.text


def test_signature_needs_a_key(client: Client) -> None:
    answer = client.post("/liquidity/v2/chain/eip155:8453/protocol/partner-escrow/signature")
    assert answer.status_code == 401


def test_auth_is_checked_before_parameters(client: Client) -> None:
    answer = client.get("/partner-intents/rfq", params={"amount": "x"})
    assert answer.status_code == 401


def test_unknown_path_is_404_error_body(client: Client) -> None:
    answer = client.get("/partner-intents/nothing")
    assert answer.status_code == 404
    assert answer.json() == {"error": "/partner-intents/nothing: no such endpoint"}


def test_wrong_method_is_405_error_body(client: Client) -> None:
    answer = client.post("/partner-intents/rfq", headers=AUTH)
    assert answer.status_code == 405
    assert answer.json()["error"] == "POST: method not allowed on this endpoint"
    assert "GET" in answer.headers["allow"]


def test_repeated_parameter_is_400(client: Client) -> None:
    query = [*rfq_params().items(), ("amount", "5")]
    answer = client.get("/partner-intents/rfq", params=query, headers=AUTH)
    assert answer.status_code == 400
    assert answer.json() == {"error": "amount: must be given once"}


def test_unknown_parameter_is_400(client: Client) -> None:
    answer = client.get("/partner-intents/rfq", params=rfq_params(colour="red"), headers=AUTH)
    assert answer.status_code == 400
    assert answer.json() == {"error": "colour: is not a known parameter"}


def test_body_must_be_json(client: Client) -> None:
    answer = client.post(
        "/partner-intents/transaction",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 400
    assert answer.json() == {"error": "body: must be valid JSON"}


def test_body_must_be_an_object(client: Client) -> None:
    answer = client.post("/partner-intents/transaction", json=[1, 2])
    assert answer.status_code == 400
    assert answer.json() == {"error": "body: must be an object"}


def test_empty_body_is_400(client: Client) -> None:
    answer = client.post("/partner-intents/transaction")
    assert answer.status_code == 400
    assert answer.json() == {"error": "body: is required (a JSON object)"}


def test_body_content_type_must_be_json(client: Client) -> None:
    answer = client.post(
        "/partner-intents/transaction", content=b"{}", headers={"content-type": "text/plain"}
    )
    assert answer.status_code == 400
    assert answer.json() == {"error": "Content-Type: must be application/json, not text/plain"}


def test_huge_body_is_refused(client: Client) -> None:
    answer = client.post(
        "/partner-intents/transaction",
        content=b"[" + b"1," * 200_000 + b"1]",
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("body: must be at most")


def test_api_error_and_body_helpers() -> None:
    assert ApiError.bad("amount", "must be a string of digits").status == 400
    answer = error_response(404, "no capacity", debug="pool 8453:USDC:usdc")
    assert answer.body == b'{"error":"no capacity","debug":"pool 8453:USDC:usdc"}'


def test_fastapi_validation_errors_become_400(app: FastAPI, client: Client) -> None:
    # Routes validate with toolkit.resources; a route that lets FastAPI validate still answers
    # in the spec's shape, naming the parameter, instead of FastAPI's 422.
    @app.get("/typed")
    async def typed(n: int) -> dict[str, int]:
        return {"n": n}

    missing = client.get("/typed")
    assert missing.status_code == 400
    assert missing.json() == {"error": "n: is required"}
    wrong = client.get("/typed", params={"n": "seven"})
    assert wrong.status_code == 400
    assert wrong.json()["error"].startswith("n: ")
