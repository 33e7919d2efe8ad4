"""The borrow signing authorization: one SSE event named data carrying a real EIP-712 signature."""

from __future__ import annotations

import json
from typing import Any

import pytest
from eth_account import Account

from toolkit.chain.borrow import Borrow, recover_borrow_signer
from toolkit.resources import SignatureResponse, parse
from toolkit.scenario import Scenario

from .conftest import AUTH, T0, USDC, Client, FakeClock, pool

QUOTE = "/liquidity/v2/chain/eip155:1/protocol/partner-escrow/type/ExactInput/quote"
SIGN = "/liquidity/v2/chain/eip155:8453/protocol/partner-escrow/signature"
CALLER = "0x2222222222222222222222222222222222222222"
FILL_CALL = "0x7e7fc653" + "00" * 64


def borrow_quote(client: Client) -> dict[str, Any]:
    params = {"dstChain": "eip155:8453", "amount": "100000000", "token": USDC[8453]}
    answer = client.get(QUOTE, params=params, headers=AUTH)
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()["data"]
    return data


def sign_body(quote_id: str, **extra: Any) -> dict[str, Any]:
    body = {
        "caller": CALLER,
        "input": FILL_CALL,
        "quoteId": quote_id,
        "txHash": "0x" + "ab" * 32,
        "metadata": {"srcChain": "eip155:1"},
    }
    body.update(extra)
    return body


def events(text: str) -> list[dict[str, str]]:
    """Parse an event-stream body into its events (field -> value)."""
    parsed = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if line and not line.startswith(":"):
                name, _, value = line.partition(": ")
                fields[name] = value
        if fields:
            parsed.append(fields)
    return parsed


def test_signature_streams_one_data_event(client: Client, scenario: Scenario) -> None:
    quote = borrow_quote(client)
    answer = client.post(SIGN, json=sign_body(quote["id"]), headers=AUTH)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    (event,) = events(answer.text)
    assert event["event"] == "data"
    payload = json.loads(event["data"])
    authorization = parse(SignatureResponse, payload).data
    assert authorization.borrow_amount == quote["requiredOutput"]
    assert authorization.borrow_cost == quote["borrowCost"]
    assert authorization.borrow_token == USDC[8453]
    assert authorization.liquidity_pool == quote["liquidityPool"]
    assert authorization.deadline == str(int(T0) + scenario.windows.order_s)
    borrow = Borrow(
        chain_id=8453,
        pool=authorization.liquidity_pool,
        caller=CALLER,
        borrow_token=authorization.borrow_token,
        amount=int(authorization.borrow_amount),
        target=scenario.chain(8453).output_settler,
        target_call_data=bytes.fromhex(FILL_CALL[2:]),
        nonce=int(authorization.nonce),
        deadline=int(authorization.deadline or 0),
    )
    signer = Account.from_key(scenario.auth.signer_key.reveal()).address
    assert recover_borrow_signer(authorization.signature, borrow) == signer


def test_authorization_lends_the_reservation(client: Client, scenario: Scenario) -> None:
    quote = borrow_quote(client)
    pool_id = next(
        p.id for p in scenario.pools_for(8453, "USDC") if p.address == quote["liquidityPool"]
    )
    amount = int(quote["requiredOutput"])
    assert pool(client, pool_id)["reserved"] == amount
    client.post(SIGN, json=sign_body(quote["id"]), headers=AUTH)
    assert pool(client, pool_id)["reserved"] == 0
    assert pool(client, pool_id)["outstanding"] == amount
    again = client.post(SIGN, json=sign_body(quote["id"]), headers=AUTH)
    assert again.status_code == 400
    assert again.json()["error"].startswith(f"quoteId: {quote['id']} is not a live borrow quote")


def test_lapsed_quote_is_400_json(client: Client, clock: FakeClock) -> None:
    quote = borrow_quote(client)
    clock.advance(60)
    answer = client.post(SIGN, json=sign_body(quote["id"]), headers=AUTH)
    assert answer.status_code == 400
    assert answer.headers["content-type"] == "application/json"
    assert "is not a live borrow quote" in answer.json()["error"]


def test_rfq_quote_ids_are_not_borrow_quotes(client: Client) -> None:
    params = {
        "srcChain": "eip155:1",
        "dstChain": "eip155:8453",
        "amount": "100000000",
        "token": USDC[8453],
        "user": CALLER,
    }
    rfq = client.get("/partner-intents/rfq", params=params, headers=AUTH).json()
    answer = client.post(SIGN, json=sign_body(rfq["quotes"][0]["quoteId"]), headers=AUTH)
    assert answer.status_code == 400


@pytest.mark.parametrize(
    ("path", "change", "message"),
    [
        (SIGN.replace("8453", "10"), {}, "dstChain: must be the quote's destination chain"),
        (SIGN.replace("eip155:8453", "base"), {}, "dstChain: must have the form"),
        (SIGN.replace("partner-escrow", "x"), {}, "protocol: must be partner-escrow"),
        (SIGN, {"caller": "0x12"}, "caller: must be a 0x-prefixed 20-byte hex address"),
        (SIGN, {"caller": "0x" + "00" * 20}, "caller: must not be the zero address"),
        (SIGN, {"input": "0xabc"}, "input: must be 0x-prefixed hex with an even number"),
        (SIGN, {"txHash": "0x12"}, "txHash: must be 0x followed by 64 hex digits"),
        (SIGN, {"quoteId": ""}, "quoteId: must not be empty"),
        (SIGN, {"metadata": {"srcChain": "eip155:10"}}, "metadata.srcChain: must be the quote's"),
        (SIGN, {"metadata": {"srcChain": "one"}}, "metadata.srcChain: must have the form"),
    ],
)
def test_signature_errors_are_plain_400(
    client: Client, path: str, change: dict[str, Any], message: str
) -> None:
    quote = borrow_quote(client)
    answer = client.post(path, json=sign_body(quote["id"], **change), headers=AUTH)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith(message)
    # Nothing was consumed: the quote still signs.
    assert client.post(SIGN, json=sign_body(quote["id"]), headers=AUTH).status_code == 200


def test_the_filler_cannot_borrow(client: Client, scenario: Scenario) -> None:
    # the loan is the filler's transfer to the caller: to itself it would move nothing
    quote = borrow_quote(client)
    body = sign_body(quote["id"], caller=scenario.filler.lower())
    answer = client.post(SIGN, json=body, headers=AUTH)
    assert answer.status_code == 400
    assert answer.json()["error"] == "caller: must not be the service's own filler address"
    assert client.post(SIGN, json=sign_body(quote["id"]), headers=AUTH).status_code == 200


def test_missing_body_fields(client: Client) -> None:
    answer = client.post(SIGN, json={"caller": CALLER}, headers=AUTH)
    assert answer.status_code == 400
    assert answer.json() == {"error": "input: is required"}


def test_signer_key_never_leaks(client: Client, scenario: Scenario) -> None:
    quote = borrow_quote(client)
    answer = client.post(SIGN, json=sign_body(quote["id"]), headers=AUTH)
    secret = scenario.auth.signer_key.reveal()
    assert secret[2:] not in answer.text
    assert secret[2:] not in client.get("/openapi.json").text
