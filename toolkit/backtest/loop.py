"""The replay's event loop: one heap of timed events under a virtual clock, no ticking.

Arrivals come from the flow (already sorted) and are merged with a heap of scheduled events:
retried RFQs, conversions (the transaction call), fills and settlements. Ties are broken by
the order events were scheduled in, and scheduled events go before a flow arrival at the same
instant, so a replay is a pure function of its inputs.

What happens to request ``k`` (the spec's state table), on the same engine and world as the
embedded service:

1. RFQ at ``t``: :meth:`Engine.quote` reserves the output for the quote window. ``NoRoute`` ends
   the request (``no_route``, a 400: never retried). ``NoCapacity`` (404) schedules a retry
   after the policy's backoff, or ends it (``no_capacity``).
2. Without conversion the quote lapses on its own (lazy expiry in the engine): ``expired``.
3. Conversion at quote time + ``convert_delay``: :meth:`Engine.convert` re-keys the
   reservation to the order for the order window (a lapsed quote converts to nothing, but the
   caller still gets calldata), and the caller escrows the order at once through the world's
   fast path (:meth:`World.deposit`, no ABI encoding) with the deadlines the transaction
   endpoint derives: exclusivity for the service until ``floor(now) + exclusive``,
   ``fillDeadline`` after the open period, ``expires`` after the settlement buffer.
4. The service's filler calls :meth:`World.fill` once the source confirmations have passed:
   from the order reservation when it is still live, else from available liquidity at today's
   price. A fill refused for capacity or price is retried every second (the world's own
   filler cadence) until ``fillDeadline``; then the order is missed (``expired``, reclaimable).
5. :meth:`World.settle` ``settlement_delay_seconds`` after the fill repays the pool and adds the
   fee the service earned to its balance.

The loop drives the filler itself, at the exact instants things fall due, rather than polling
:meth:`World.advance`: same rules, one call per step.

Pools are sampled every ``interval`` seconds of virtual time (``t = 0, interval, ...``), after
every event at or before that instant, until the last reservation has lapsed and the last fill
has settled (``end``).
"""

from __future__ import annotations

import math
import random
from heapq import heappop, heappush
from typing import Any, NamedTuple

from toolkit.backtest.retry import RetryPolicy
from toolkit.backtest.validate import FlowColumns
from toolkit.engine import (
    EXACT_INPUT,
    EXACT_OUTPUT,
    Engine,
    FillRejected,
    NoCapacity,
    NoRoute,
    OrderTerms,
)
from toolkit.scenario import Scenario
from toolkit.world import EscrowOrder, World, WorldError

__all__ = ["EXPIRED", "FILLED", "NO_CAPACITY", "NO_ROUTE", "OUTCOMES", "Trace", "run_events"]

FILLED = "filled"
EXPIRED = "expired"
NO_CAPACITY = "no_capacity"
NO_ROUTE = "no_route"
#: Every outcome a request can end with.
OUTCOMES: tuple[str, ...] = (FILLED, EXPIRED, NO_CAPACITY, NO_ROUTE)

_ARRIVE, _CONVERT, _FILL, _SETTLE = 0, 1, 2, 3
#: Seconds between the filler's attempts at an order it could not fill yet (the world's default).
FILL_RETRY_SECONDS = 1.0
#: The simulated user who requests, escrows and receives (one address: balances are not modelled).
USER = "0x" + "11" * 20


class Trace(NamedTuple):
    """Everything the loop recorded, as parallel lists (one entry per request or sample)."""

    quotes: list[Any]
    quoted_at: list[float | None]
    attempts: list[int]
    outcome: list[str | None]
    error: list[str | None]
    order_id: list[str | None]
    ordered_at: list[float | None]
    filled_at: list[float | None]
    settled_at: list[float | None]
    earned: list[int | None]
    fill_pool: list[str | None]
    revenue: dict[str, int]
    rejected: int
    end: float
    samples: dict[str, list[Any]]


class _Sampler:
    """Pool snapshots plus RFQ and 404 counts per (chain, token) since the previous sample."""

    def __init__(self, engine: Engine, scenario: Scenario, interval: float) -> None:
        self.engine = engine
        self.interval = interval
        self.count = 0
        self.next = 0.0
        groups: dict[tuple[int, str], int] = {}
        for pool in scenario.pools:
            groups.setdefault((pool.chain, pool.token), len(groups))
        self.groups = groups
        self.pool_group = [groups[(p.chain, p.token)] for p in scenario.pools]
        self.rfqs = [0] * len(groups)
        self.rejects = [0] * len(groups)
        self.revenue = {p.id: 0 for p in scenario.pools}
        self.columns: dict[str, list[Any]] = {
            name: []
            for name in (
                "t",
                "pool",
                "chain",
                "token",
                "pool_type",
                "capacity",
                "available",
                "reserved",
                "outstanding",
                "rfqs",
                "no_capacity",
                "fee_revenue",
            )
        }

    def take_until(self, now: float) -> None:
        """Take every sample due strictly before ``now``."""
        while self.next < now:
            self.take()

    def take(self) -> None:
        t = self.next
        c = self.columns
        rfqs, rejects, revenue = self.rfqs, self.rejects, self.revenue
        for state, group in zip(self.engine.pools(t), self.pool_group, strict=True):
            c["t"].append(t)
            c["pool"].append(state.id)
            c["chain"].append(state.chain)
            c["token"].append(state.symbol)
            c["pool_type"].append(state.type)
            c["capacity"].append(state.balance)
            c["available"].append(state.available)
            c["reserved"].append(state.reserved)
            c["outstanding"].append(state.outstanding)
            c["rfqs"].append(rfqs[group])
            c["no_capacity"].append(rejects[group])
            c["fee_revenue"].append(revenue[state.id])
        for g in range(len(rfqs)):
            rfqs[g] = 0
            rejects[g] = 0
        self.count += 1
        # Multiply instead of adding so that sample times do not drift.
        self.next = self.count * self.interval


def run_events(
    engine: Engine,
    flow: FlowColumns,
    *,
    retry: RetryPolicy | None,
    seed: int,
    interval: float,
) -> Trace:
    """Replay ``flow`` on ``engine`` (fresh, clock unset) and a world around it; record it all."""
    scenario = engine.scenario
    world = World(scenario, engine)
    windows = scenario.windows
    order_window = windows.order_seconds
    exclusive = windows.exclusive_seconds
    fill_window = exclusive + windows.open_seconds
    settle_delay = windows.settlement_delay_seconds
    filler = scenario.filler
    sampler = _Sampler(engine, scenario, interval)
    rfqs, rejects, revenue = sampler.rfqs, sampler.rejects, sampler.revenue

    routes = flow.routes
    r_src = [src for src, _, _ in routes]
    r_dst = [dst for _, dst, _ in routes]
    r_token = [scenario.token(dst, sym).address for _, dst, sym in routes]
    r_confirm = [scenario.chain(src).confirmation_seconds for src, _, _ in routes]
    r_buffer = [scenario.expiry_buffer(src, dst) for src, dst, _ in routes]
    r_group = [sampler.groups[(dst, sym)] for _, dst, sym in routes]

    times, route_of, amounts = flow.t, flow.route, flow.amount
    kinds = [EXACT_OUTPUT if x else EXACT_INPUT for x in flow.exact_output]
    converts, delays = flow.converts, flow.convert_delay
    n = len(times)
    quotes: list[Any] = [None] * n
    quoted_at: list[float | None] = [None] * n
    attempts = [0] * n
    outcome: list[str | None] = [None] * n
    error: list[str | None] = [None] * n
    order_id: list[Any] = [None] * n
    ordered_at: list[float | None] = [None] * n
    filled_at: list[float | None] = [None] * n
    settled_at: list[float | None] = [None] * n
    earned: list[int | None] = [None] * n
    fill_pool: list[str | None] = [None] * n
    deadline_of = [0] * n

    quote, convert = engine.quote, engine.convert
    deposit, world_fill, world_settle = world.deposit, world.fill, world.settle
    uniform = random.Random(seed).random
    max_retries = -1 if retry is None else retry.max_retries
    heap: list[tuple[float, int, int, int]] = []
    seq = 0
    rejected = 0
    nxt = 0
    inf = math.inf
    next_sample = 0.0
    now = 0.0

    while True:
        arrival = times[nxt] if nxt < n else inf
        if heap and heap[0][0] <= arrival:
            now, _, kind, k = heappop(heap)
        elif nxt < n:
            now, kind, k = arrival, _ARRIVE, nxt
            nxt += 1
        else:
            break
        if now > next_sample:
            sampler.take_until(now)
            next_sample = sampler.next

        if kind == _ARRIVE:
            r = route_of[k]
            group = r_group[r]
            rfqs[group] += 1
            attempts[k] = tries = attempts[k] + 1
            try:
                q = quote(r_src[r], r_dst[r], r_token[r], amounts[k], now, kind=kinds[k])
            except NoCapacity:
                rejects[group] += 1
                rejected += 1
                if tries <= max_retries:
                    seq += 1
                    wait = retry.delay(tries, uniform())  # type: ignore[union-attr]
                    heappush(heap, (now + wait, seq, _ARRIVE, k))
                else:
                    outcome[k] = NO_CAPACITY
                continue
            except NoRoute as exc:
                outcome[k] = NO_ROUTE
                error[k] = str(exc)
                continue
            quotes[k] = q
            quoted_at[k] = now
            if converts[k]:
                seq += 1
                heappush(heap, (now + delays[k], seq, _CONVERT, k))
            else:
                outcome[k] = EXPIRED

        elif kind == _CONVERT:
            q = quotes[k]
            r = route_of[k]
            oid = f"or_{k}"
            order_id[k] = oid
            ordered_at[k] = now
            convert(q.quote_id, oid, now)
            start = math.floor(now)
            deadline_of[k] = deadline = start + fill_window
            terms = OrderTerms(
                q.src_chain, q.src_token, q.input_amount, q.dst_chain, q.dst_token, q.output_amount
            )
            try:
                deposit(
                    EscrowOrder(
                        oid, USER, terms, USER, deadline, deadline + r_buffer[r], filler,
                        start + exclusive,
                    ),
                    now,
                )  # fmt: skip
            except WorldError as exc:
                outcome[k] = EXPIRED
                error[k] = f"escrow: {exc}"
                continue
            seq += 1
            heappush(heap, (now + r_confirm[r], seq, _FILL, k))

        elif kind == _FILL:
            oid = order_id[k]
            try:
                done = world_fill(oid, now)
            except (NoCapacity, FillRejected) as exc:
                if now + FILL_RETRY_SECONDS <= deadline_of[k]:
                    seq += 1
                    heappush(heap, (now + FILL_RETRY_SECONDS, seq, _FILL, k))
                else:
                    outcome[k] = EXPIRED
                    error[k] = (
                        f"fill: not filled by the fillDeadline {deadline_of[k]}, the order is "
                        f"reclaimable on the escrow; last refusal: {exc}"
                    )
                continue
            filled_at[k] = now
            fill_pool[k] = done.pool
            outcome[k] = FILLED
            seq += 1
            heappush(heap, (now + settle_delay, seq, _SETTLE, k))

        else:
            repaid = world_settle(order_id[k], now)
            settled_at[k] = now
            earned[k] = repaid.earned
            revenue[repaid.pool] += repaid.earned

    # Sample on until the last reservation has lapsed, so the final sample is the settled state.
    horizon = max(
        now,
        max((q.expires_at for q in quotes if q is not None), default=now),
        max((t + order_window for t in ordered_at if t is not None), default=now),
    )
    end = math.ceil(horizon / interval) * interval
    while sampler.next <= end:
        sampler.take()
    return Trace(
        quotes=quotes,
        quoted_at=quoted_at,
        attempts=attempts,
        outcome=outcome,
        error=error,
        order_id=order_id,
        ordered_at=ordered_at,
        filled_at=filled_at,
        settled_at=settled_at,
        earned=earned,
        fill_pool=fill_pool,
        revenue=revenue,
        rejected=rejected,
        end=horizon,
        samples=sampler.columns,
    )
