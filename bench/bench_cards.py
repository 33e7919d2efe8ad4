"""Card authorizations: simulated swipes per second through the just-in-time path.

Each swipe goes through the authorizer of ``toolkit.models.cards`` against the simulated
backend: the idempotency store, the per-account queue, ``/info``, the health rule by
``toolkit.credit``'s exact figures (twice a swipe: the position and the position after the
draw), ``draw`` and the block schedule, on a virtual clock. Printed: swipes per second of the
whole run (best of three) at several book sizes, the authorizer alone (swipes already in a
list), and the pre-funded comparison (both approaches), with the run's approval rate and
latency figures so a change that speeds it up by doing less shows.

The issue's second figure, the loopback run's p99 against the embedded service, needs the
service's credit endpoints (``/credit/accounts/{account}/info`` and ``draw``) and a backend
for them; neither exists yet, so it is not printed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from toolkit.models.cards import (
    Authorizer,
    Latencies,
    SimulatedBackend,
    card_accounts,
    card_swipes,
    compare_prefunded,
    simulate_cards,
)


def timed(run: Callable[[], object], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    print(f"{'what':<44} {'swipes':>8} {'seconds':>8} {'swipes/s':>10}  run")
    for n_accounts, hours in ((100, 24.0), (1_000, 24.0), (1_000, 96.0)):
        accounts = card_accounts(n_accounts, seed=0)
        swipes = card_swipes(accounts, hours=hours, seed=0)
        took = timed(lambda accounts=accounts, swipes=swipes: simulate_cards(swipes, accounts))
        s = simulate_cards(swipes, accounts).summary
        label = f"simulate_cards, {n_accounts:,} accounts, {hours:.0f} h"
        print(f"{label:<44} {swipes.height:>8,} {took:>8.3f} {swipes.height / took:>10,.0f}  "
              f"approved {s['approval_rate']:.1%}, p50 {s['p50_ms']:,.0f} ms, "
              f"p99 {s['p99_ms']:,.0f} ms, path p99 {s['path_p99_ms']:,.0f} ms")  # fmt: skip
    accounts = card_accounts(1_000, seed=1)
    swipes = card_swipes(accounts, hours=24.0, seed=1)
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


if __name__ == "__main__":
    main()
