"""The health watch against a served instance and a local webhook receiver: a simulated price
drop (the feeds' path, reached by moving the chain's clock over JSON-RPC) makes the accounts
whose health factor falls below 1.0 cross it; which accounts is computed here, from the book
read on chain and at the service and the feeds' prices, not read back from the watch. The
alert rows and the webhook bodies match, each exactly once, across polls and a restart."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import httpx
import pytest
from eth_abi import decode

from toolkit.client import RetryPolicy, ServiceClient, Webhook, chain_web3
from toolkit.clock import DEFAULT_START, VirtualClock
from toolkit.codecs.functions import encode_call
from toolkit.collect import HealthWatch
from toolkit.collect.accounts import discover_accounts
from toolkit.scenario import Scenario, drawdown, load_scenario, with_collateral_prices
from toolkit.server import create_app, serve_in_thread
from toolkit.store import Store
from toolkit.testing import WebhookReceiver

KEY = "demo-key"
DROP_AT = int(DEFAULT_START) + 600


def dropping() -> Scenario:
    """400 accounts; yoBTC falls 45 % over ten minutes, ten minutes after the start."""
    base = load_scenario("default")
    assert base.credit is not None
    small = replace(base, credit=replace(base.credit, book_accounts=400))
    return with_collateral_prices(small, "yoBTC", drawdown(60_000, at_s=DROP_AT, share=0.45,
                                                           over_s=600))  # fmt: skip


@dataclass
class Served:
    url: str
    scenario: Scenario
    http: httpx.Client

    def rpc(self, method: str, *params: Any) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
        answer = self.http.post(f"{self.url}/rpc/8453", json=body).json()
        assert "error" not in answer, answer
        return answer["result"]

    def watch(self, store: Store, hook: Webhook | None) -> HealthWatch:
        client = ServiceClient(self.url, api_key=KEY, env={})
        return HealthWatch(client, chain_web3(8453, url=f"{self.url}/rpc/8453"), store,
                           webhook=hook, cadence_s=2.0)  # fmt: skip


def close(watch: HealthWatch) -> None:
    """Close what the test opened for a watch (the watch owns none of it)."""
    watch.client.close()
    watch.w3.provider.close()
    if watch.webhook is not None:
        watch.webhook.close()


@pytest.fixture
def served() -> Iterator[Served]:
    scenario = dropping()
    with serve_in_thread(create_app(scenario, clock=VirtualClock())) as url, httpx.Client() as h:
        yield Served(url, scenario, h)


def health_factors(served: Served, accounts: list[str]) -> dict[str, Fraction]:
    """Each indebted account's health factor now, by hand: collateralOf on the hub for each
    collateral token, the feed's latestRoundData for its price, the scenario's maintenance LTV,
    and the debt /info reports."""
    credit = served.scenario.credit
    assert credit is not None
    usd: dict[str, Fraction] = {}
    for c in credit.collateral:
        feed = next(f for f in _feeds(served) if f[0] == c.address.lower())[1]
        call = {"to": feed, "data": encode_call("priceFeed.latestRoundData")}
        data = bytes.fromhex(served.rpc("eth_call", call, "latest")[2:])
        answer = decode(["uint80", "int256", "uint256", "uint256", "uint80"], data)[1]
        usd[c.address.lower()] = Fraction(answer, 10**8) / 10**c.decimals
    factors = {}
    for account in accounts:
        info = served.http.get(f"{served.url}/credit/accounts/{account}/info").json()
        debt = Fraction(info["data"]["USDC"]["debt"])
        if debt == 0:
            continue
        calls = [
            encode_call("creditHub.collateralOf", account, c.address) for c in credit.collateral
        ]
        batch = [
            {"jsonrpc": "2.0", "id": k, "method": "eth_call",
             "params": [{"to": credit.hub, "data": data}, "latest"]}
            for k, data in enumerate(calls)
        ]  # fmt: skip
        answers = sorted(served.http.post(f"{served.url}/rpc/8453", json=batch).json(),
                         key=lambda a: a["id"])  # fmt: skip
        weighted = sum(
            int(a["result"], 16)
            * usd[c.address.lower()]
            * Fraction(c.rule.maintenance_ltv_bps, 10_000)
            for a, c in zip(answers, credit.collateral, strict=True)
        )
        factors[account] = Fraction(weighted) / debt
    return factors


def _feeds(served: Served) -> list[tuple[str, str]]:
    from toolkit.chain import default_registry

    return [(f.token.lower(), f.address) for f in default_registry().price_feeds(8453)]


def liquidatable(factors: dict[str, Fraction]) -> set[str]:
    near = [a for a, hf in factors.items() if abs(hf - 1) < Fraction(1, 10**6)]
    assert not near, f"accounts too close to 1.0 to call: {near}"
    return {a for a, hf in factors.items() if hf < 1}


def test_a_price_drop_makes_the_expected_accounts_cross_one_each_alerted_once(
    served: Served,
) -> None:
    credit = served.scenario.credit
    assert credit is not None
    w3 = chain_web3(8453, url=f"{served.url}/rpc/8453")
    accounts = discover_accounts(w3, [credit.hub], [credit.escrow]).accounts
    w3.provider.close()  # type: ignore[attr-defined]
    before = liquidatable(health_factors(served, accounts))

    store = Store(":memory:")
    with WebhookReceiver() as receiver:
        hook = Webhook(receiver.url)
        watch = served.watch(store, hook)
        first = watch.poll(0.0)
        assert first.last_error is None and first.accounts == len(accounts)
        # The drop: the chain's clock moves past the drawdown (anvil's evm_increaseTime), a block
        served.rpc("evm_increaseTime", 1_300)
        served.rpc("evm_mine")
        second = watch.poll(1.0)
        assert second.last_error is None and second.block is not None
        assert first.block is not None and second.block > first.block
        after = liquidatable(health_factors(served, accounts))
        expected = after - before
        assert len(expected) >= 3, expected  # the drop does something worth testing

        rows = store.query(
            "SELECT * FROM alerts WHERE rule = 'hf_below_1.0' AND state = 'breached' "
            "AND block_number = $b ORDER BY subject",
            {"b": second.block},
        )
        assert set(rows["subject"]) == expected
        # the watch's health factors are the ones computed here (feeds' and /info's figures)
        by_hand = health_factors(served, sorted(expected))
        for subject, value in rows.select("subject", "value").iter_rows():
            assert abs(Fraction(value) - by_hand[subject]) < Fraction(1, 10**9)

        watch.poll(2.0)  # nothing new: no block
        served.rpc("evm_mine")
        watch.poll(3.0)  # a block, prices as they were: no crossing
        close(watch)
        restarted = served.watch(store, Webhook(receiver.url))
        assert restarted.poll(4.0).last_error is None
        close(restarted)
        alerts = store.query("SELECT * FROM alerts ORDER BY block_number, state, rule, subject")
        bodies = list(receiver.bodies)

    # Every alert row posted exactly once, and every post an alert row.
    ids = [b["alert_id"] for b in bodies]
    assert sorted(ids) == sorted(alerts["alert_id"].to_list()) and len(set(ids)) == len(ids)
    one = next(b for b in bodies if b["rule"] == "hf_below_1.0")
    row = alerts.filter(alert_id=one["alert_id"]).row(0, named=True)
    assert one["subject"] == row["subject"] and one["state"] == "breached"
    assert Fraction(one["value"]) == Fraction(row["value"]) < 1
    assert one["block_number"] == second.block and one["asset"] == "USDC"
    posted = " ".join(str(b) for b in bodies)
    assert "://" not in posted and KEY not in posted
    delivered = store.query("SELECT count(*) AS n FROM alert_deliveries WHERE delivered")
    assert delivered["n"][0] == alerts.height


def test_an_alert_the_webhook_did_not_take_is_posted_again_at_the_next_poll() -> None:
    base = load_scenario("default")
    assert base.credit is not None
    scenario = replace(base, credit=replace(base.credit, book_accounts=40))
    store = Store(":memory:")
    with (
        serve_in_thread(create_app(scenario, clock=VirtualClock())) as url,
        httpx.Client() as http,
        WebhookReceiver(statuses=[503, 503]) as receiver,
    ):
        served = Served(url, scenario, http)
        hook = Webhook(receiver.url, retry=RetryPolicy(error_retries=1, error_base=0.0))
        watch = served.watch(store, hook)
        first = watch.poll(0.0)
        # The book's collateral is all on Base and mostly stablecoins: the chain and stablecoin
        # caps are breached from the start; the receiver refused the first alert twice.
        assert first.alerts_written >= 2 and first.undelivered == first.alerts_written
        assert receiver.bodies == []
        served.rpc("evm_mine")
        second = watch.poll(1.0)
        close(watch)
    assert second.undelivered == 0 and second.alerts_written == first.alerts_written
    tries = store.query(
        "SELECT attempt, delivered, status FROM alert_deliveries ORDER BY sent_at, attempt"
    ).rows()
    assert tries[0] == (1, False, 503)  # one send: an attempt and its retry, both refused
    assert (2, True, 204) in tries and len(receiver.bodies) == first.alerts_written
    assert [b["rule"] for b in receiver.bodies][:2] == ["cap_chain", "cap_stablecoin"]
