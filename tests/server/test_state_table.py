"""The spec's state table over time, on a fake clock, and the whole flow over HTTP (the
service's endpoints, the chains' JSON-RPC)."""

from __future__ import annotations

from typing import Any

from toolkit.codecs.escrow import decode_open, order_id
from toolkit.scenario import Scenario
from toolkit.server import create_app

from .conftest import AUTH, Client, FakeClock, MakeClient, open_on_chain, pool, rfq_params, rpc

ESCROW = "0x000025c3226C00B2Cdc200005a1600509f4e00C0"
POOL = "8453:USDC:usdc"
UNIT = 1_000_000_000  # one ExactOutput quote of 1,000 USDC in the single-pool scenario


def full_quote(client: Client) -> dict[str, Any]:
    params = rfq_params(src=1, dst=8453, amount=UNIT, type="ExactOutput")
    answer = client.get("/partner-intents/rfq", params=params, headers=AUTH)
    assert answer.status_code == 200, answer.text
    quote: dict[str, Any] = answer.json()["quotes"][0]
    return quote


def quote_status(client: Client) -> int:
    params = rfq_params(src=1, dst=8453, amount=UNIT, type="ExactOutput")
    return client.get("/partner-intents/rfq", params=params, headers=AUTH).status_code


def single(scenario: Scenario, clock: FakeClock, make_client: MakeClient) -> Client:
    return make_client(create_app(scenario, clock=clock))


def test_rfq_reservation_lapses_after_15_s(
    single_pool: Scenario, clock: FakeClock, make_client: MakeClient
) -> None:
    client = single(single_pool, clock, make_client)
    for _ in range(15):
        full_quote(client)
    assert pool(client, POOL)["available"] == 0
    assert quote_status(client) == 404
    clock.advance(14.9)
    assert quote_status(client) == 404
    clock.advance(0.1)  # validUntil = t0 + 15: capacity returns
    assert pool(client, POOL)["available"] == 15 * UNIT
    assert quote_status(client) == 200


def test_transaction_with_quote_id_holds_until_60_s_after_the_call(
    single_pool: Scenario, clock: FakeClock, make_client: MakeClient
) -> None:
    client = single(single_pool, clock, make_client)
    quotes = [full_quote(client) for _ in range(15)]
    clock.advance(10)
    assert client.post("/partner-intents/transaction", json=quotes[0]).status_code == 200
    clock.advance(5)  # t0 + 15: the other 14 quotes lapse, the converted one holds on
    assert pool(client, POOL)["reserved"] == UNIT
    assert quote_status(client) == 200  # capacity came back for everyone else
    clock.advance(54.9)  # t0 + 69.9: the new RFQ lapsed at t0 + 30, the order still holds
    assert pool(client, POOL)["reserved"] == UNIT
    clock.advance(0.1)  # t0 + 70 = call + 60 s: released
    assert pool(client, POOL)["reserved"] == 0


def test_transaction_without_quote_id_reserves_nothing(
    single_pool: Scenario, clock: FakeClock, make_client: MakeClient
) -> None:
    client = single(single_pool, clock, make_client)
    quote = full_quote(client)
    quote_id = quote.pop("quoteId")
    answer = client.post("/partner-intents/transaction", json=quote)
    assert answer.status_code == 200
    assert answer.json()["transactionRequest"]["data"].startswith("0x7515fd56")
    # Only the RFQ's own reservation exists, and it is not refreshed by the call.
    assert pool(client, POOL)["reserved"] == UNIT
    clock.advance(15)
    assert pool(client, POOL)["reserved"] == 0
    # Posting the lapsed quote id later is not an error either, and reserves nothing.
    quote["quoteId"] = quote_id
    assert client.post("/partner-intents/transaction", json=quote).status_code == 200
    assert pool(client, POOL)["reserved"] == 0


def test_lapsed_quote_id_is_not_refreshed(
    single_pool: Scenario, clock: FakeClock, make_client: MakeClient
) -> None:
    client = single(single_pool, clock, make_client)
    quote = full_quote(client)
    clock.advance(16)
    tx = client.post("/partner-intents/transaction", json=quote).json()["transactionRequest"]
    key = order_id(decode_open(tx["data"]), ESCROW)
    assert client.get(f"/sim/orders/{key}").status_code == 404
    assert pool(client, POOL)["reserved"] == 0


def test_whole_flow_pays_the_receivable_on_the_origin_chain(
    scenario: Scenario, clock: FakeClock, make_client: MakeClient
) -> None:
    # The Base pool delivers the output; the escrow releases the input on Ethereum, so the
    # settlement books it to Ethereum's USDC pool (the default scenario's policy, threshold).
    client = make_client(create_app(scenario, clock=clock))
    start = pool(client, POOL)
    origin = pool(client, "1:USDC:usdc")
    answer = client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH)
    quote = answer.json()["quotes"][0]
    output = int(quote["preview"]["outputs"][0]["amount"])
    paid = int(quote["preview"]["inputs"][0]["amount"])
    assert pool(client, POOL)["reserved"] == output

    clock.advance(3)
    tx = client.post("/partner-intents/transaction", json=quote).json()["transactionRequest"]
    key = order_id(decode_open(tx["data"]), tx["to"])
    assert "result" in open_on_chain(client, tx, scenario)  # approve, open(): mined on chain 1
    order = client.get(f"/sim/orders/{key}").json()
    assert order["status"] == "Deposited"
    assert order["reservation"]["kind"] == "order"

    # the quote's eta (confirmations, then the fill) passes over JSON-RPC: the filler fills
    service = client.app.state.service
    rpc(client, 8453, "evm_increaseTime", scenario.eta(1, 8453))
    assert service.world.order(key).status.value == "Filled"  # before any other request
    assert client.get(f"/sim/orders/{key}").json()["status"] == "Filled"
    filled = pool(client, POOL)
    assert (filled["reserved"], filled["outstanding"]) == (0, output)

    rpc(client, 8453, "evm_increaseTime", scenario.windows.settlement_delay_s)
    assert service.world.order(key).status.value == "Settled"
    assert client.get(f"/sim/orders/{key}").json()["status"] == "Settled"
    end = pool(client, POOL)
    fee = paid - output - scenario.fill_cost(8453, "USDC")
    assert fee == 500_000  # 5 bps of 1,000 USDC
    assert end == {
        "balance": start["balance"] - output,
        "reserved": 0,
        "outstanding": 0,
        "available": start["available"] - output,
    }
    credited = pool(client, "1:USDC:usdc")
    assert credited["balance"] == origin["balance"] + paid
    state = client.get(f"/sim/orders/{key}").json()
    assert state["status"] == "Settled"
    assert state["fill"]["earned"] == str(fee)
