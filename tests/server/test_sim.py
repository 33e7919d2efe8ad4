"""The /sim control surface: broadcast, fill, settle, advance, pools and orders."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit.scenario import Scenario

from .conftest import AUTH, USDC, Client, FakeClock, rfq_params


def built(client: Client, **extra: Any) -> dict[str, Any]:
    quote = client.get("/partner-intents/rfq", params=rfq_params(**extra), headers=AUTH).json()
    answer = client.post("/partner-intents/transaction", json=quote["quotes"][0])
    tx: dict[str, Any] = answer.json()["transactionRequest"]
    return tx


def test_broadcast_escrows_the_order(client: Client) -> None:
    tx = built(client)
    order = client.post("/sim/broadcast", json=tx).json()
    assert order["status"] == "Deposited"
    assert order["input"] == {"chain": "eip155:1", "token": USDC[1], "amount": "1000000000"}
    assert order["txHash"].startswith("0x") and len(order["txHash"]) == 66
    again = client.post("/sim/broadcast", json=tx)
    assert again.status_code == 400
    assert again.json()["error"].startswith("data: the escrow reverts: InvalidOrderStatus")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"to": "0x" + "00" * 20}, "to: 0x0000000000000000000000000000000000000000 is not"),
        ({"chainId": 130}, "chainId: chain 130 is not in the scenario"),
        ({"chainId": 10}, "data: the escrow reverts: WrongChain"),
        ({"data": "0x12345678"}, "data: "),
        ({"data": "0x123"}, "data: must be 0x-prefixed hex with an even number of digits"),
        ({"from": "me"}, "from: must be a 0x-prefixed 20-byte hex address"),
    ],
)
def test_broadcast_rejections(client: Client, edit: dict[str, Any], message: str) -> None:
    tx = built(client)
    tx.update(edit)
    answer = client.post("/sim/broadcast", json=tx)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith(message)


def test_broadcast_after_the_fill_deadline_reverts(client: Client, clock: FakeClock) -> None:
    tx = built(client)
    clock.advance(361)
    answer = client.post("/sim/broadcast", json=tx)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("data: the escrow reverts: TimestampPassed")


def test_fill_and_settle_one_order(client: Client, clock: FakeClock, scenario: Scenario) -> None:
    order = client.post("/sim/broadcast", json=built(client)).json()
    key = order["orderId"]
    early = client.post(f"/sim/settle/{key}")
    assert early.status_code == 409
    filled = client.post(f"/sim/fill/{key}").json()
    assert filled["status"] == "Filled"
    assert filled["fill"]["reserved"] is True
    assert client.post(f"/sim/fill/{key}").status_code == 409
    too_soon = client.post(f"/sim/settle/{key}")
    assert too_soon.status_code == 409
    assert "settles at" in too_soon.json()["error"]
    clock.advance(scenario.windows.settlement_delay_seconds)
    settled = client.post(f"/sim/settle/{key}").json()
    assert settled["status"] == "Settled"
    assert settled["settlement"]["earned"] == "500000"


def test_unknown_and_malformed_order_ids(client: Client) -> None:
    unknown = "0x" + "ab" * 32
    for method, path in (
        ("POST", f"/sim/fill/{unknown}"),
        ("POST", f"/sim/settle/{unknown}"),
        ("GET", f"/sim/orders/{unknown}"),
    ):
        answer = client.request(method, path)
        assert answer.status_code == 404
        assert answer.json()["error"].startswith("orderId: ")
    bad = client.get("/sim/orders/0x12")
    assert bad.status_code == 400
    assert bad.json() == {"error": "orderId: must be 0x followed by 64 hex digits"}


def test_unfilled_order_is_missed_after_its_deadline(client: Client, clock: FakeClock) -> None:
    tx = built(client)
    order = client.post("/sim/broadcast", json=tx).json()
    clock.advance(400)
    progress = client.post("/sim/advance").json()
    assert progress["missed"] == [order["orderId"]]
    late = client.post(f"/sim/fill/{order['orderId']}")
    assert late.status_code == 409
    assert "fillDeadline" in late.json()["error"]


def test_pools_lists_every_pool(client: Client, scenario: Scenario) -> None:
    data = client.get("/sim/pools").json()["data"]
    assert [p["id"] for p in data] == [p.id for p in scenario.pools]
    for entry, config in zip(data, scenario.pools, strict=True):
        assert entry["balance"] == entry["available"] == str(config.balance)
        assert entry["reserved"] == entry["outstanding"] == "0"


def test_simulation_endpoints_are_tagged(client: Client) -> None:
    document = client.get("/openapi.json").json()
    sim_tags = {
        tuple(operation["tags"])
        for path, item in document["paths"].items()
        if path.startswith("/sim/")
        for operation in item.values()
    }
    assert sim_tags == {("simulation",)}
    assert document["components"]["securitySchemes"]["ApiKeyAuth"]["name"] == "X-Auth-Token"
    rfq = document["paths"]["/partner-intents/rfq"]["get"]
    assert rfq["security"] == [{"ApiKeyAuth": []}]
    assert {p["name"] for p in rfq["parameters"]} >= {"srcChain", "dstChain", "amount", "token"}
