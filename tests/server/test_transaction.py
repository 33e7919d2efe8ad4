"""POST /partner-intents/transaction: the quote back with a valid escrow open() transaction."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit.clock import VirtualClock
from toolkit.codecs import erc7930
from toolkit.codecs.escrow import decode_open, order_id, parse_context, token_address
from toolkit.resources import Quote, parse
from toolkit.scenario import Scenario

from .conftest import AUTH, T0, USDC, USER, Client, FakeClock, pool, pools, rfq_params

ESCROW = "0x000025c3226C00B2Cdc200005a1600509f4e00C0"


def rfq(client: Client, **extra: Any) -> dict[str, Any]:
    answer = client.get("/partner-intents/rfq", params=rfq_params(**extra), headers=AUTH)
    assert answer.status_code == 200, answer.text
    quote: dict[str, Any] = answer.json()["quotes"][0]
    return quote


def test_transaction_returns_the_quote_with_open_calldata(
    client: Client, scenario: Scenario
) -> None:
    quote = rfq(client)
    answer = client.post("/partner-intents/transaction", json=quote)
    assert answer.status_code == 200
    body = answer.json()
    tx = body.pop("transactionRequest")
    assert body == quote
    assert tx["from"] == USER
    assert tx["to"] == ESCROW
    assert tx["chainId"] == 1
    assert tx["value"] == "0x0"
    order = decode_open(tx["data"])
    assert order.user == USER
    assert order.origin_chain_id == 1
    assert order.fill_deadline == int(T0) + 60 + 300
    assert order.expires == order.fill_deadline + 43_200
    assert order.inputs == ((int(USDC[1], 16), 1_000_000_000),)
    (output,) = order.outputs
    assert output.chain_id == 8453
    assert output.amount == int(quote["preview"]["outputs"][0]["amount"])
    exclusive = parse_context(output.context)
    assert exclusive is not None
    assert exclusive.filler == scenario.filler
    assert exclusive.start_time == int(T0) + 60
    assert token_address(order.inputs[0][0]) == USDC[1]
    # The response parses as a quote of the resources package.
    assert parse(Quote, answer.json()).transaction_request is not None


def test_transaction_moves_the_reservation_to_the_order(client: Client, clock: FakeClock) -> None:
    quote = rfq(client)
    clock.advance(10)
    tx = client.post("/partner-intents/transaction", json=quote).json()["transactionRequest"]
    key = order_id(decode_open(tx["data"]), ESCROW)
    held = client.get(f"/sim/orders/{key}").json()
    assert held["status"] == "Built"
    assert held["reservation"]["kind"] == "order"
    assert held["reservation"]["expiresAt"] == T0 + 10 + 60


def test_nonces_differ_and_are_deterministic(scenario: Scenario, make_client: Any) -> None:
    from toolkit.server import create_app

    def two_orders() -> list[int]:
        client = make_client(create_app(scenario, clock=VirtualClock(T0)))
        quote = rfq(client)
        return [
            decode_open(
                client.post("/partner-intents/transaction", json=quote).json()[
                    "transactionRequest"
                ]["data"]
            ).nonce
            for _ in range(2)
        ]

    first = two_orders()
    assert first[0] != first[1]
    assert two_orders() == first


def test_overrides_win(client: Client) -> None:
    quote = rfq(client)
    other = "0x" + "ab" * 20
    quote["order"] = {"nonce": "77", "fillDeadline": int(T0) + 100, "expires": int(T0) + 200}
    quote["metadata"] = {"exclusiveFor": other}
    tx = client.post("/partner-intents/transaction", json=quote).json()["transactionRequest"]
    order = decode_open(tx["data"])
    assert (order.nonce, order.fill_deadline, order.expires) == (77, int(T0) + 100, int(T0) + 200)
    exclusive = parse_context(order.outputs[0].context)
    assert exclusive is not None
    assert exclusive.filler.lower() == other


def test_mixed_origin_inputs_are_400(client: Client) -> None:
    quote = rfq(client)
    second = dict(quote["preview"]["inputs"][0])
    second["asset"] = erc7930.encode(10, USDC[10])
    second["user"] = erc7930.encode(10, USER)
    quote["preview"]["inputs"].append(second)
    before = pool(client, "8453:USDC:usdc")
    answer = client.post("/partner-intents/transaction", json=quote)
    assert answer.status_code == 400
    assert answer.json() == {"error": "preview.inputs: all inputs must be on one origin chain"}
    assert pool(client, "8453:USDC:usdc") == before


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda q: q.pop("preview"), "preview: is required"),
        (lambda q: q["preview"].update(outputs=[]), "preview.outputs: must hold at least one item"),
        (
            lambda q: q["preview"]["inputs"][0].update(amount="-5"),
            "preview.inputs[0].amount: must be a string of digits",
        ),
        (
            lambda q: q["preview"]["outputs"][0].update(asset="0x1234"),
            "preview.outputs[0].asset: must be an ERC-7930 interoperable address",
        ),
        (
            lambda q: q.update(order={"fillDeadline": 10, "expires": 5}),
            "order.fillDeadline: must not be after expires",
        ),
        (
            lambda q: q.update(metadata={"exclusiveFor": "nobody"}),
            "metadata.exclusiveFor: must be a 0x-prefixed 20-byte hex address",
        ),
    ],
)
def test_bad_quote_is_400_naming_the_field(client: Client, edit: Any, message: str) -> None:
    quote = rfq(client)
    edit(quote)
    answer = client.post("/partner-intents/transaction", json=quote)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith(message)


def test_unknown_chain_in_the_quote_is_400(client: Client) -> None:
    quote = rfq(client)
    quote["preview"]["outputs"][0]["asset"] = erc7930.encode(130, "0x" + "12" * 20)
    quote["preview"]["outputs"][0]["receiver"] = erc7930.encode(130, USER)
    answer = client.post("/partner-intents/transaction", json=quote)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("preview.outputs[0].asset: ")


def test_transaction_needs_no_key(client: Client) -> None:
    quote = rfq(client)
    answer = client.post(
        "/partner-intents/transaction", json=quote, headers={"X-Auth-Token": "wrong"}
    )
    assert answer.status_code == 200


def test_reusing_an_order_nonce_for_the_same_order_is_refused_and_changes_nothing(
    client: Client,
) -> None:
    first = rfq(client)
    first["order"] = {"nonce": "7"}
    assert client.post("/partner-intents/transaction", json=first).status_code == 200
    # A second quote for the same order terms, opened with the same nonce: same orderId.
    second = rfq(client)
    second["order"] = {"nonce": "7"}
    held = pools(client)
    answer = client.post("/partner-intents/transaction", json=second)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("order.nonce: an order with these terms")
    assert pools(client) == held
