"""What stays under /sim (GET /sim/orders), and what JSON-RPC says instead of the old
/sim/broadcast, /sim/advance, /sim/fill, /sim/settle and /sim/pools: the escrow's open() sent on
chain, its refusals as reverts, the pools' figures from the pool contracts."""

from __future__ import annotations

from typing import Any

import pytest
from eth_utils import keccak, to_checksum_address

from toolkit.codecs.functions import encode_call
from toolkit.scenario import Scenario

from .conftest import AUTH, USDC, Client, FakeClock, open_on_chain, pools, rfq_params, rpc


def built(client: Client, **extra: Any) -> dict[str, Any]:
    quote = client.get("/partner-intents/rfq", params=rfq_params(**extra), headers=AUTH).json()
    answer = client.post("/partner-intents/transaction", json=quote["quotes"][0])
    tx: dict[str, Any] = answer.json()["transactionRequest"]
    return tx


def _error(signature: str) -> str:
    return "0x" + keccak(text=signature)[:4].hex()


def test_open_on_chain_escrows_the_order(client: Client, scenario: Scenario) -> None:
    tx = built(client)
    sent = open_on_chain(client, tx, scenario)
    receipt = rpc(client, 1, "eth_getTransactionReceipt", sent["result"])["result"]
    assert receipt["status"] == "0x1"
    key = receipt["logs"][-1]["topics"][1]  # Open(orderId indexed, order)
    order = client.get(f"/sim/orders/{key}").json()
    assert order["status"] == "Deposited"
    assert order["input"] == {"chain": "eip155:1", "token": USDC[1], "amount": "1000000000"}
    assert order["reservation"]["kind"] == "order"
    again = open_on_chain(client, tx, scenario)["error"]
    assert again["code"] == 3 and again["data"] == _error("InvalidOrderStatus()")


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        ({"chainId": 10}, "WrongChain(uint256,uint256)"),  # another chain's escrow
        ({"data": "0x12345678"}, None),  # no such function: a revert without data
    ],
)
def test_the_escrow_refuses_what_it_would_not_take(
    client: Client, scenario: Scenario, edit: dict[str, Any], error: str | None
) -> None:
    tx = built(client)
    if "data" in edit:
        tx["data"] = edit["data"] + tx["data"][10:]
        edit = {}
    tx.update(edit)
    if "chainId" in edit:
        tx["to"] = scenario.chain(edit["chainId"]).escrow
    answer = open_on_chain(client, tx, scenario)["error"]
    assert answer["code"] == 3 and answer["message"] == "execution reverted"
    assert answer["data"].startswith(_error(error) if error else "0x")
    if error is None:
        assert answer["data"] == "0x"


def test_open_after_the_fill_deadline_reverts(
    client: Client, clock: FakeClock, scenario: Scenario
) -> None:
    tx = built(client)
    clock.advance(361)
    answer = open_on_chain(client, tx, scenario)["error"]
    assert answer["code"] == 3 and answer["data"] == _error("TimestampPassed()")


def test_unknown_and_malformed_order_ids(client: Client) -> None:
    unknown = "0x" + "ab" * 32
    answer = client.get(f"/sim/orders/{unknown}")
    assert answer.status_code == 404
    assert answer.json()["error"].startswith("orderId: ")
    bad = client.get("/sim/orders/0x12")
    assert bad.status_code == 400
    assert bad.json() == {"error": "orderId: must be 0x followed by 64 hex digits"}


def test_the_pools_are_read_on_chain(client: Client, scenario: Scenario) -> None:
    figures = pools(client)  # eth_call of each pool contract's views
    assert list(figures) == [p.id for p in scenario.pools]
    for config in scenario.pools:
        entry = figures[config.id]
        assert entry["balance"] == entry["available"] == config.balance
        assert entry["reserved"] == entry["outstanding"] == 0
    quote = client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH).json()
    amount = int(quote["quotes"][0]["preview"]["outputs"][0]["amount"])
    assert sum(p["reserved"] for p in pools(client).values()) == amount


def test_loans_not_repaid_are_listed_until_their_repayment(
    client: Client, scenario: Scenario, clock: FakeClock
) -> None:
    query = {"dstChain": "eip155:8453", "amount": "100000000", "token": USDC[8453]}
    path = "/liquidity/v2/chain/eip155:1/protocol/partner-escrow"
    quote = client.get(f"{path}/type/ExactInput/quote", params=query, headers=AUTH).json()["data"]
    borrower = rpc(client, 1, "eth_accounts")["result"][1]
    body = {"caller": borrower, "input": "0x", "quoteId": quote["id"], "txHash": "0x" + "ab" * 32}
    sign = path.replace("eip155:1", "eip155:8453") + "/signature"
    assert client.post(sign, json=body, headers=AUTH).status_code == 200
    (loan,) = client.get("/sim/loans").json()["loans"]
    assert loan == {
        "quoteId": quote["id"],
        "borrower": to_checksum_address(borrower),  # checksummed on output
        "chain": "eip155:8453",
        "token": "USDC",
        "amount": quote["requiredOutput"],
        "repaymentChain": 1,
        "owed": quote["requiredInput"],
        "transfer": "pending",
        "paid": "0",
    }
    clock.advance(2)  # Base's next block: the borrower holds the loan
    assert client.get("/sim/loans").json()["loans"][0]["transfer"] == "mined"
    paid = encode_call("erc20.transfer", quote["repaymentRecipient"], int(quote["requiredInput"]))
    repay = {"from": borrower, "to": USDC[1], "data": paid}
    assert "result" in rpc(client, 1, "eth_sendTransaction", repay)
    clock.advance(12)  # Ethereum's next block: the repayment is read
    assert client.get("/sim/loans").json()["loans"] == []
    assert client.get("/sim/reconciliation").json()["mismatches"] == []


def test_what_json_rpc_says_is_not_under_sim(client: Client) -> None:
    key = "0x" + "ab" * 32
    for path in ("/sim/broadcast", "/sim/advance", f"/sim/fill/{key}", f"/sim/settle/{key}"):
        assert client.post(path, json={}).status_code == 404, path
    assert client.get("/sim/pools").status_code == 404


def test_simulation_endpoints_are_tagged(client: Client) -> None:
    document = client.get("/openapi.json").json()
    sim = {
        (path, method): tuple(operation["tags"])
        for path, item in document["paths"].items()
        if path.startswith(("/sim/", "/rpc/"))
        for method, operation in item.items()
    }
    assert sim == {
        ("/sim/orders/{orderId}", "get"): ("simulation",),
        ("/sim/loans", "get"): ("simulation",),
        ("/sim/reconciliation", "get"): ("simulation",),
        ("/rpc/{chainId}", "post"): ("simulation",),
    }
    assert document["components"]["securitySchemes"]["ApiKeyAuth"]["name"] == "X-Auth-Token"
    rfq = document["paths"]["/partner-intents/rfq"]["get"]
    assert rfq["security"] == [{"ApiKeyAuth": []}]
    assert {p["name"] for p in rfq["parameters"]} >= {"srcChain", "dstChain", "amount", "token"}
