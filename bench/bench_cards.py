"""Card authorizations: simulated swipes per second through the just-in-time path.

Each swipe goes through the authorizer of ``toolkit.models.cards`` against the simulated
backend: the idempotency store, the per-account queue, ``/info``, the health rule by
``toolkit.credit``'s exact figures (twice a swipe: the position and the position after the
draw), ``draw`` and the block schedule, on a virtual clock. Printed: swipes per second of the
whole run (best of three) at several book sizes, the authorizer alone (swipes already in a
list), and the pre-funded comparison (both approaches), with the run's approval rate and
latency figures so a change that speeds it up by doing less shows.

The loopback run (``--loopback-swipes``, 0 to skip): the same authorizer on
``toolkit.client.cards.ServiceCardBackend`` against the default scenario's embedded service in
its own process (uvicorn on 127.0.0.1, the wall clock, so its Base chain makes a block every
2 s of real time). Set-up: ``--accounts`` card accounts of ``card_accounts`` (one or two
collateral tokens dealt with ``anvil_dealERC20`` and locked through the lock endpoint's calls,
then drawn to their starting debt through the draw endpoint's), mined at once with ``evm_mine``.
Then swipes of ``card_swipes`` arriving over ``--loopback-seconds`` are answered at their
arrival times in wall time by ``run_cards`` (each account's swipes in its own thread, so
different accounts' swipes are in flight together): ``/info`` and the collateral prices, the
health rule, ``draw``, the draw sent as the account and its receipt polled every 20 ms until the
next block includes it. Nothing moves the chain's clock during the run. Printed: approval rate,
answer latency p50/p99/max against the 2 s budget, the reasons, each step's p50/p99, and a check
on chain that the receivers got exactly what the approved (and late) swipes delivered.

Usage: ``python bench/bench_cards.py [--loopback-swipes 60] [--loopback-seconds 120]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import polars as pl
from web3 import Web3

from toolkit.client import RetryPolicy, ServiceClient, chain_web3
from toolkit.client.cards import ServiceCardBackend, run_cards
from toolkit.client.credit import CreditClient, execute_calls
from toolkit.codecs import functions
from toolkit.models.cards import (
    Authorizer,
    Latencies,
    SimulatedBackend,
    card_accounts,
    card_swipes,
    compare_prefunded,
    simulate_cards,
)
from toolkit.scenario import load_scenario

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loopback import start_loopback


def timed(run: Callable[[], object], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def simulated() -> None:
    print(f"{'what':<44} {'swipes':>8} {'seconds':>8} {'swipes/s':>10}  run")
    for n_accounts, hours in ((100, 24.0), (1_000, 24.0), (1_000, 96.0)):
        accounts = card_accounts(n_accounts, seed=0)
        swipes = card_swipes(accounts, span_h=hours, seed=0)
        took = timed(lambda accounts=accounts, swipes=swipes: simulate_cards(swipes, accounts))
        s = simulate_cards(swipes, accounts).summary
        label = f"simulate_cards, {n_accounts:,} accounts, {hours:.0f} h"
        print(f"{label:<44} {swipes.height:>8,} {took:>8.3f} {swipes.height / took:>10,.0f}  "
              f"approved {s.approval_share:.1%}, p50 {s.p50_ms:,.0f} ms, "
              f"p99 {s.p99_ms:,.0f} ms, path p99 {s.path_p99_ms:,.0f} ms")  # fmt: skip
    accounts = card_accounts(1_000, seed=1)
    swipes = card_swipes(accounts, span_h=24.0, seed=1)
    rows = list(swipes.select("auth_id", "account", "t", "amount").iter_rows())

    def authorizer_only() -> None:
        auth = Authorizer(SimulatedBackend(accounts, Latencies(), seed=1), seed=1)
        for auth_id, account, t, amount in rows:
            auth.authorize(auth_id, account, amount, t)

    took = timed(authorizer_only)
    print(f"{'Authorizer.authorize alone, 1,000 accounts':<44} {len(rows):>8,} {took:>8.3f} "
          f"{len(rows) / took:>10,.0f}")  # fmt: skip
    took = timed(lambda: compare_prefunded(swipes, accounts, seed=1), 1)
    table = compare_prefunded(swipes, accounts, seed=1)
    jit, pre = table.rows(named=True)
    print(f"{'compare_prefunded (both approaches)':<44} {swipes.height:>8,} {took:>8.3f} "
          f"{swipes.height / took:>10,.0f}  JIT p99 {jit['p99_ms']:,.0f} ms, "
          f"pre-funded p99 {pre['p99_ms']:,.1f} ms")  # fmt: skip


def _address(base: int, i: int) -> str:
    return "0x" + f"{base + i:040x}"


def _setup(
    credit: CreditClient, w3: Web3, n: int
) -> tuple[dict[str, dict[str, int]], dict[str, str]]:
    """Card accounts on chain: collateral locked and the starting debt drawn; their holdings."""
    scenario = load_scenario("default")
    assert scenario.credit is not None
    by_key = {c.key: c for c in scenario.credit.collateral}

    def rpc(method: str, *params: object) -> object:
        answer = w3.provider.make_request(method, list(params))  # type: ignore[arg-type]
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def mine() -> object:
        return rpc("evm_mine")

    holdings: dict[str, dict[str, int]] = {}
    names: dict[str, str] = {}
    sink = _address(0xCA4DF000, 0)
    for i, position in enumerate(card_accounts(n, seed=7).values()):
        account = _address(0xCA4D0000, i)
        rpc("anvil_impersonateAccount", account)
        rpc("anvil_setBalance", account, hex(10**20))
        held: dict[str, int] = {}
        for key, value in position.values.items():
            c = by_key[key]
            price = Fraction(credit.collateral(8453, c.address).collateral_price_usd)
            units = int(Fraction(value, 10**6) / price * 10**c.decimals)
            rpc("anvil_dealERC20", account, c.address, hex(units))
            execute_calls(w3, account, credit.lock(account, units, c.address), after_send=mine)
            held[c.address] = units
        if position.principal:
            execute_calls(
                w3, account, credit.draw(account, position.principal, sink), after_send=mine
            )
        holdings[account] = held
        names[account] = _address(0xCA4D8000, i)  # its card receiver
    return holdings, names


def _percentiles(values: list[float]) -> str:
    ms = np.asarray(values) * 1_000
    return f"p50 {np.percentile(ms, 50):7.1f} ms  p99 {np.percentile(ms, 99):7.1f} ms"


def loopback(swipes_wanted: int, seconds: float, n_accounts: int) -> None:
    process, url = start_loopback()
    try:
        with ServiceClient(url, retry=RetryPolicy(error_retries=0), env={}) as client:
            credit = CreditClient(client)
            w3 = chain_web3(8453, url=f"{url}/rpc/8453")
            holdings, receivers = _setup(credit, w3, n_accounts)
            hours = seconds / 3_600
            swipes = card_swipes(
                list(holdings),
                rate_per_h=swipes_wanted / (n_accounts * hours),
                span_h=hours,
                retry_share=0.05,
                seed=7,
            )
            backend = ServiceCardBackend(credit, w3, holdings)
            hub = credit.protocol().chains["eip155:8453"].credit_hubs["usdc"]
            usdc = w3.eth.contract(
                address=Web3.to_checksum_address(hub.asset_address),
                abi=functions.json_abi("erc20"),
            )
            started = time.perf_counter()
            run = run_cards(swipes, backend, receiver=receivers.__getitem__)
            took = time.perf_counter() - started
            s = run.summary
            print(f"\nloopback run: {s.swipes} swipes on {n_accounts} accounts over "
                  f"{took:.0f} s of wall time (one 2 s block every 2 s)")  # fmt: skip
            print(f"  approved {s.approved} ({s.approval_share:.1%}); answer latency "
                  f"p50 {s.p50_ms:,.0f} ms, p99 {s.p99_ms:,.0f} ms, max {s.max_ms:,.0f} "
                  f"ms against the {s.budget_ms:,.0f} ms budget; over budget "
                  f"{s.over_budget_share:.1%}; path p99 {s.path_p99_ms:,.0f} ms; "
                  f"late draws {s.late_draws}")  # fmt: skip
            for reason, count, share in run.reasons().iter_rows():
                print(f"  {reason:<16} {count:>5} {share:>7.1%}")
            for step in ("info", "draw", "include"):
                took_step = [t for name, t in backend.timings if name == step]
                if took_step:
                    print(f"  step {step:<8} {len(took_step):>4} calls  {_percentiles(took_step)}")
            delivered = int(run.decisions.filter(pl.col("drawn") > 0)["amount"].sum())
            got = sum(
                int(usdc.functions.balanceOf(Web3.to_checksum_address(r)).call())
                for r in receivers.values()
            )
            check = "ok" if got == delivered else "MISMATCH"
            print(f"  on chain: receivers hold {got / 1e6:,.2f} USDC, the swipes that drew "
                  f"delivered {delivered / 1e6:,.2f} USDC: {check}")  # fmt: skip
    finally:
        process.terminate()
        process.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loopback-swipes", type=int, default=60)
    parser.add_argument("--loopback-seconds", type=float, default=120.0)
    parser.add_argument("--accounts", type=int, default=12)
    args = parser.parse_args()
    simulated()
    if args.loopback_swipes > 0:
        loopback(args.loopback_swipes, args.loopback_seconds, args.accounts)


if __name__ == "__main__":
    main()
