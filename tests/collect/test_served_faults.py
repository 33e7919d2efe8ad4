"""The service collectors over loopback behind the fault proxy: an RFQ sweep and a credit
snapshot (its /info reads and its JSON-RPC holdings batches alike) under a fifth of requests
failing store what a clean run stores; a 429 with ``Retry-After: 2`` is waited for (the
client's recorded wait, not wall time); ``max_rps`` holds what the proxy counts."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from toolkit.client import Attempt, RetryPolicy, ServiceClient, chain_web3
from toolkit.clock import VirtualClock
from toolkit.collect import CreditCollector, GridPoint, RfqSweep, discover_routes, grid_for
from toolkit.collect.accounts import discover_accounts
from toolkit.scenario import load_scenario
from toolkit.server import create_app, serve_in_thread
from toolkit.store import Store
from toolkit.testing import FaultMix, FaultProxy

from .conftest import FakeClock

# Held requests, Retry-After waits and paced rates: seconds of waiting, little CPU.
pytestmark = pytest.mark.wallclock

KEY = "demo-key"
DEFAULT = load_scenario("default")
assert DEFAULT.credit is not None
CREDIT = DEFAULT.credit
#: What an RFQ answer says, without what a retry may change (its id, its time, the attempt).
QUOTE = ("src_chain", "dst_chain", "token", "quote_type", "amount", "status", "valid_until",
         "eta", "input_amount", "output_amount", "fee_bps")  # fmt: skip


@contextmanager
def served() -> Iterator[str]:
    """A fresh served instance of the default scenario whose clock stands still (so two runs
    see the same market whatever their retries waited)."""
    with serve_in_thread(create_app(DEFAULT, clock=VirtualClock())) as url:
        yield url


def policy(seed: int, **options: Any) -> RetryPolicy:
    return RetryPolicy(error_retries=10, error_base=0.01, error_cap=0.05, max_delay=5.0,
                       rng=random.Random(seed), **options)  # fmt: skip


def client_on(url: str, clock: FakeClock, retry: RetryPolicy, **options: Any) -> ServiceClient:
    return ServiceClient(url, api_key=KEY, retry=retry, clock=clock, env={}, timeout=1.0, **options)


@pytest.fixture(scope="module")
def grid() -> list[GridPoint]:
    """Base <-> Arbitrum USDC, the two smallest amounts of each route (far below the pools'
    utilization kink, so a reservation left behind by a cut answer does not move a fee)."""
    with served() as url:
        client = ServiceClient(url, api_key=KEY, env={})
        routes = discover_routes(client, chains=(8453, 42161), symbols=("USDC",))
        client.close()
    points = grid_for(routes)
    smallest = sorted({p.amount for p in points})[:2]
    return [p for p in points if p.amount in smallest]


def final_quotes(store: Store) -> list[tuple[Any, ...]]:
    """Per grid point and round, the last attempt's answer."""
    columns = ", ".join(QUOTE)
    return store.query(
        f"SELECT {columns} FROM (SELECT *, split_part(attempt_id, ':', 2) AS point, "
        "row_number() OVER (PARTITION BY round, split_part(attempt_id, ':', 2) "
        "ORDER BY retry DESC) AS k FROM rfq_observations) WHERE k = 1 ORDER BY round, point"
    ).rows()


def run_sweep(url: str, grid: list[GridPoint], retry: RetryPolicy) -> tuple[Store, FakeClock]:
    store, clock = Store(":memory:"), FakeClock()
    with client_on(url, clock, retry) as client:
        RfqSweep(client, store, grid=grid, rounds=2, interval_s=15, progress=False).run()
    return store, clock


def test_an_rfq_sweep_under_a_fifth_of_requests_failing_stores_the_clean_runs_quotes(
    grid: list[GridPoint],
) -> None:
    with served() as url:
        clean, _ = run_sweep(url, grid, policy(1))
    with served() as url, FaultProxy(url, mix=FaultMix(share=0.2, seed=12, hold_s=1.5)) as proxy:
        faulted, _ = run_sweep(proxy.url, grid, policy(1))
    assert final_quotes(faulted) == final_quotes(clean)
    assert {row[QUOTE.index("status")] for row in final_quotes(clean)} == {200}
    # every attempt is a row: the proxy's count of RFQs, the failed ones among them
    rfqs = [r for r in proxy.records if r.path == "/partner-intents/rfq"]
    stored = faulted.query("SELECT status FROM rfq_observations")["status"].to_list()
    assert len(stored) == len(rfqs) > len(grid) * 2
    assert sum(1 for r in rfqs if r.fault) == sum(1 for s in stored if s != 200) > 0


CREDIT_TABLES = {
    "credit_protocol": "*",
    "credit_accounts": "*",
    "credit_operators": "*",
    "credit_topup_configs": "*",
    "credit_collateral": "*",
}


def snapshot(url: str, accounts: list[str], retry: RetryPolicy) -> Store:
    store, clock = Store(":memory:"), FakeClock()
    with client_on(url, clock, retry) as client:
        w3 = chain_web3(8453, url=f"{url}/rpc/8453", retry=retry, clock=clock, timeout=1.0)
        CreditCollector(client, store, accounts=accounts, web3s={8453: w3}, progress=False).run()
        w3.provider.close()  # type: ignore[attr-defined]
    return store


def credit_rows(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    return {
        table: store.query(
            f"SELECT * EXCLUDE (run_id, observed_at) FROM {table} ORDER BY ALL"
        ).rows()
        for table in CREDIT_TABLES
    }


def test_a_credit_snapshot_under_a_fifth_of_requests_failing_stores_the_clean_runs_rows() -> None:
    with served() as url:
        w3 = chain_web3(8453, url=f"{url}/rpc/8453")
        accounts = discover_accounts(w3, [CREDIT.hub], [CREDIT.escrow]).accounts[:12]
        w3.provider.close()  # type: ignore[attr-defined]
        clean = snapshot(url, accounts, policy(3))
    with served() as url, FaultProxy(url, mix=FaultMix(share=0.2, seed=45, hold_s=1.5)) as proxy:
        faulted = snapshot(proxy.url, accounts, policy(3))
    expected = credit_rows(clean)
    assert credit_rows(faulted) == expected
    assert len(expected["credit_accounts"]) >= 12 and expected["credit_collateral"]
    served_faults = proxy.faults()
    assert sum(served_faults.values()) >= 5
    assert any(r.rpc is not None and r.fault for r in proxy.records)  # chain reads were hit too


@pytest.mark.parametrize("form", ["rate_limit", "rate_limit_date"])
def test_a_429_with_retry_after_2_is_waited_for(form: str) -> None:
    first_only = FaultMix(share=1.0, kinds={form: 1.0}, retry_after_s=2)
    seen: list[Attempt] = []
    with served() as url, FaultProxy(url, mix=first_only) as proxy:
        clock = FakeClock()
        with client_on(proxy.url, clock, policy(4), on_attempt=seen.append) as client:
            original = clock.sleep

            def sleep_then_heal(seconds: float) -> None:
                original(seconds)
                proxy.set_mix(FaultMix(share=0.0))

            clock.sleep = sleep_then_heal  # type: ignore[method-assign]
            assert client.health().status == "ok"
    assert [(a.status, a.retry_in) for a in seen] == [(429, 2.0), (200, None)]
    assert clock.sleeps == [2.0]


def test_max_rps_holds_the_rate_of_every_surface_of_a_collector() -> None:
    """A credit snapshot reads /info over HTTP and holdings over JSON-RPC: one policy paces
    both (on the wall clock), so the proxy never sees more than the rate plus the burst."""

    def busiest(retry: RetryPolicy) -> tuple[int, int]:
        with served() as url, FaultProxy(url, mix=FaultMix(share=0.0)) as proxy:
            w3 = chain_web3(8453, url=f"{proxy.url}/rpc/8453", retry=retry)
            accounts = discover_accounts(w3, [CREDIT.hub], [CREDIT.escrow]).accounts[:10]
            with ServiceClient(proxy.url, api_key=KEY, retry=retry, env={}) as client:
                store = Store(":memory:")
                CreditCollector(client, store, accounts=accounts, web3s={8453: w3},
                                progress=False).run()  # fmt: skip
            w3.provider.close()  # type: ignore[attr-defined]
            surfaces = {r.rpc is None for r in proxy.records}
            assert surfaces == {True, False}  # HTTP and JSON-RPC requests both
            return proxy.busiest(1.0), len(proxy.records)

    unpaced, requests = busiest(RetryPolicy())
    paced, same = busiest(RetryPolicy(max_rps=10, burst=2))
    assert same == requests > 30
    assert unpaced > 12
    assert paced <= 10 + 2
