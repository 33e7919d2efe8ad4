"""GET /partner-intents/rfq: one firm quote that reserves liquidity, or the spec's errors."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI

from toolkit.clock import VirtualClock
from toolkit.codecs import erc7930
from toolkit.resources import RfqResponse, parse
from toolkit.scenario import Scenario
from toolkit.server import create_app

from .conftest import (
    AUTH,
    T0,
    USDC,
    USER,
    WETH_BASE,
    Client,
    FakeClock,
    MakeClient,
    pool,
    pools,
    rfq_params,
)


def test_rfq_returns_exactly_one_quote(client: Client, scenario: Scenario) -> None:
    answer = client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert len(body["quotes"]) == 1
    quote = parse(RfqResponse, body).quote
    assert quote.provider == "service"
    assert quote.failure_handling == "refund-automatic"
    assert quote.partial_fill is False
    assert quote.metadata is not None
    assert quote.metadata.exclusive_for == scenario.filler
    assert quote.valid_until == int(T0) + 15
    assert quote.eta == scenario.eta(1, 8453)
    assert quote.quote_id
    (item,) = quote.preview.inputs
    (out,) = quote.preview.outputs
    assert item.user == erc7930.encode(1, USER)
    assert item.asset == erc7930.encode(1, USDC[1])
    assert item.amount == "1000000000"
    assert out.receiver == erc7930.encode(8453, USER)
    assert out.asset == erc7930.encode(8453, USDC[8453])
    # 5 bps fee and the Base fill cost (0.05 USD) come off the input.
    assert out.amount_int == 1_000_000_000 - 500_000 - 50_000


def test_rfq_reserves_the_output(client: Client) -> None:
    before = pool(client, "8453:USDC:usdc")
    body = client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH).json()
    output = int(body["quotes"][0]["preview"]["outputs"][0]["amount"])
    after = pool(client, "8453:USDC:usdc")
    assert after["reserved"] == before["reserved"] + output
    assert after["available"] == before["available"] - output


def test_receiver_and_exact_output(client: Client) -> None:
    receiver = "0x" + "33" * 20
    params = rfq_params(amount=2_000_000_000, receiver=receiver, type="ExactOutput")
    quote = client.get("/partner-intents/rfq", params=params, headers=AUTH).json()["quotes"][0]
    out = quote["preview"]["outputs"][0]
    assert out["amount"] == "2000000000"
    assert out["receiver"] == erc7930.encode(8453, receiver)
    assert int(quote["preview"]["inputs"][0]["amount"]) > 2_000_000_000


def test_src_token_of_the_same_symbol_is_accepted(client: Client) -> None:
    answer = client.get("/partner-intents/rfq", params=rfq_params(srcToken=USDC[1]), headers=AUTH)
    assert answer.status_code == 200


def test_src_token_of_another_symbol_is_400(client: Client) -> None:
    before = pool(client, "8453:USDC:usdc")
    params = rfq_params(srcToken="0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2")
    answer = client.get("/partner-intents/rfq", params=params, headers=AUTH)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("srcToken: ")
    assert pool(client, "8453:USDC:usdc") == before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"amount": "1e6"}, "amount: must be a string of digits"),
        ({"amount": "0"}, "amount: must be greater than 0"),
        ({"amount": "9" * 100}, "amount: must be less than 2**256"),
        ({"srcChain": "8453"}, "srcChain: must have the form <namespace>:<reference>"),
        ({"dstChain": "eip155:0"}, "dstChain: chain id must not be 0"),
        ({"token": "0x1234"}, "token: must be a 0x-prefixed 20-byte hex address"),
        ({"user": "alice"}, "user: must be a 0x-prefixed 20-byte hex address"),
        ({"type": "Exact"}, "type: must be 'ExactInput' or 'ExactOutput'"),
    ],
)
def test_bad_parameter_is_400_naming_it(
    client: Client, change: dict[str, Any], message: str
) -> None:
    answer = client.get("/partner-intents/rfq", params=rfq_params(**change), headers=AUTH)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith(message)
    assert all(p["reserved"] == 0 for p in pools(client).values())


@pytest.mark.parametrize("missing", ["srcChain", "dstChain", "amount", "token", "user"])
def test_missing_parameter_is_400(client: Client, missing: str) -> None:
    params = rfq_params()
    del params[missing]
    answer = client.get("/partner-intents/rfq", params=params, headers=AUTH)
    assert answer.status_code == 400
    assert answer.json() == {"error": f"{missing}: is required"}


def test_no_route_is_400(client: Client) -> None:
    # Base -> Base is not onboarded; Unichain is not a chain of the scenario at all.
    same = client.get("/partner-intents/rfq", params=rfq_params(src=8453), headers=AUTH)
    assert same.status_code == 400
    assert "no route" in same.json()["error"]
    unknown = rfq_params(dstChain="eip155:130")
    answer = client.get("/partner-intents/rfq", params=unknown, headers=AUTH)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("token: ")


def test_amount_outside_the_route_limits_is_400(client: Client) -> None:
    answer = client.get("/partner-intents/rfq", params=rfq_params(amount=1000), headers=AUTH)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("amount: ")


def test_no_capacity_is_404(
    single_pool: Scenario, clock: FakeClock, make_client: MakeClient
) -> None:
    client = make_client(create_app(single_pool, clock=clock))
    params = rfq_params(dst=8453, amount=1_000_000_000, type="ExactOutput")
    for _ in range(15):
        assert client.get("/partner-intents/rfq", params=params, headers=AUTH).status_code == 200
    full = client.get("/partner-intents/rfq", params=params, headers=AUTH)
    assert full.status_code == 404
    assert full.json()["error"].startswith("srcChain: no pool can serve")
    clock.advance(15)
    assert client.get("/partner-intents/rfq", params=params, headers=AUTH).status_code == 200


def test_weth_route(client: Client) -> None:
    params = {
        "srcChain": "eip155:10",
        "dstChain": "eip155:8453",
        "amount": str(10**18),
        "token": WETH_BASE,
        "user": USER,
    }
    answer = client.get("/partner-intents/rfq", params=params, headers=AUTH)
    assert answer.status_code == 200
    assert answer.json()["quotes"][0]["preview"]["inputs"][0]["amount"] == str(10**18)


def test_quote_ids_are_unique(client: Client) -> None:
    ids = {
        client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH).json()["quotes"][0][
            "quoteId"
        ]
        for _ in range(5)
    }
    assert len(ids) == 5


def test_app_from_a_scenario_name(monkeypatch: pytest.MonkeyPatch, make_client: MakeClient) -> None:
    monkeypatch.setenv("TOOLKIT_API_KEY", "env-key-1")
    app: FastAPI = create_app("default", clock=VirtualClock(T0))
    client = make_client(app)
    params = rfq_params()
    assert client.get("/partner-intents/rfq", params=params, headers=AUTH).status_code == 401
    keyed = client.get("/partner-intents/rfq", params=params, headers={"X-Auth-Token": "env-key-1"})
    assert keyed.status_code == 200
