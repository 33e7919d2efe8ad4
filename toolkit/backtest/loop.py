"""The replay's event loop: one heap of timed events under a virtual clock, no ticking.

Arrivals come from the flow (already sorted) and are merged with a heap of scheduled events:
retried RFQs, conversions (the transaction call), fills and settlements. Ties are broken by
the order events were scheduled in, and scheduled events go before a flow arrival at the same
instant, so a replay is a pure function of its inputs.

What happens to request ``k`` (the spec's state table), on the same engine and world as the
embedded service:

1. RFQ at ``t``: :meth:`Engine.quote` reserves the output for the quote window. ``NoRoute`` ends
   the request (``no_route``, a 400: never retried). ``CapacityExhausted`` (404) schedules a retry
   after the policy's backoff, or ends it (``no_capacity``).
2. Without conversion the quote lapses on its own (lazy expiry in the engine): ``expired``.
3. Conversion at quote time + ``convert_delay``: :meth:`Engine.convert` re-keys the
   reservation to the order for the order window (a lapsed quote converts to nothing, but the
   caller still gets calldata), and the caller escrows the order at once through the world's
   fast path (:meth:`World.deposit`, no ABI encoding) with the deadlines the transaction
   endpoint derives: exclusivity for the service until ``floor(now) + exclusive``,
   ``fillDeadline`` after the open period, ``expires`` after the settlement buffer.
4. The service's filler calls :meth:`World.fill` once the quote's ``eta`` has passed since the
   deposit (source confirmations, then the destination's fill time), as the world's own filler
   does: from the order reservation when it is still live, else from available liquidity at
   today's price. A fill refused for capacity or price is retried every second (the world's
   own filler cadence) until ``fillDeadline``; then the order is missed (``expired``,
   reclaimable).
5. :meth:`World.settle` ``settlement_delay_seconds`` after the fill repays the pool and adds the
   fee the service earned to its balance.

The loop drives the filler itself, at the exact instants things fall due, rather than polling
:meth:`World.advance`: same rules, one call per step. Its world is ``driven`` (it keeps no
schedule of its own) and forgets settled orders, so memory stays bounded by the orders in
flight.

Pools are sampled every ``interval`` seconds of virtual time (``t = 0, interval, ...``), after
every event at or before that instant, until the last reservation has lapsed and the last fill
has settled (``end``).
"""

from __future__ import annotations

import math
import random
from heapq import heappop, heappush
from typing import Any, NamedTuple

from toolkit.backtest.sampler import Sampler
from toolkit.engine import (
    EXACT_INPUT,
    EXACT_OUTPUT,
    CapacityExhausted,
    Engine,
    FillRejected,
    NoRoute,
    OrderTerms,
)
from toolkit.flows import FlowColumns
from toolkit.resources import RetryPolicy
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
    """Everything the loop recorded, as parallel lists (one entry per request or sample).

    ``quote_id``, ``input_amount``, ``output_amount`` and ``fee_bps`` are the successful quote's;
    ``pool`` is the pool that filled the order, else the quote's pool.
    """

    quote_id: list[str | None]
    input_amount: list[int | None]
    output_amount: list[int | None]
    fee_bps: list[int | None]
    pool: list[str | None]
    quoted_at: list[float | None]
    attempts: list[int]
    outcome: list[str | None]
    error: list[str | None]
    order_id: list[str | None]
    ordered_at: list[float | None]
    filled_at: list[float | None]
    settled_at: list[float | None]
    earned: list[int | None]
    revenue: dict[str, int]
    rejected: int
    end: float
    samples: dict[str, list[Any]]


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
    world = World(scenario, engine, driven=True, keep_finished=False)
    windows = scenario.windows
    order_window = windows.order_seconds
    exclusive = windows.exclusive_seconds
    fill_window = exclusive + windows.open_seconds
    settle_delay = windows.settlement_delay_seconds
    filler = scenario.filler
    sampler = Sampler(engine, scenario, interval)
    rfqs, rejects, revenue = sampler.rfqs, sampler.rejects, sampler.revenue

    routes = flow.routes
    r_src = [src for src, _, _ in routes]
    r_dst = [dst for _, dst, _ in routes]
    r_token = [scenario.token(dst, sym).address for _, dst, sym in routes]
    r_eta = [scenario.eta(src, dst) for src, dst, _ in routes]
    r_buffer = [scenario.expiry_buffer(src, dst) for src, dst, _ in routes]
    r_group = [sampler.groups[(dst, sym)] for _, dst, sym in routes]

    times, route_of, amounts = flow.t, flow.route, flow.amount
    kinds = [EXACT_OUTPUT if x else EXACT_INPUT for x in flow.exact_output]
    converts, delays = flow.converts, flow.convert_delay
    n = len(times)
    # The quote's fields go straight into columns: keeping a million ReservedQuote tuples alive cost
    # memory, time in the loop and a pass over them all to build the frames.
    quote_id: list[str | None] = [None] * n
    input_amount: list[int | None] = [None] * n
    output_amount: list[int | None] = [None] * n
    fee_bps: list[int | None] = [None] * n
    pool: list[str | None] = [None] * n
    pending: dict[int, Any] = {}  # request -> its quote, from the RFQ to the conversion
    quoted_at: list[float | None] = [None] * n
    attempts = [0] * n
    outcome: list[str | None] = [None] * n
    error: list[str | None] = [None] * n
    order_id: list[Any] = [None] * n
    ordered_at: list[float | None] = [None] * n
    filled_at: list[float | None] = [None] * n
    settled_at: list[float | None] = [None] * n
    earned: list[int | None] = [None] * n
    deadline_of = [0] * n

    quote, convert = engine.quote, engine.convert
    deposit, world_fill, world_settle = world.deposit, world.fill, world.settle
    uniform = random.Random(seed).random
    max_retries = -1 if retry is None else retry.capacity_retries
    heap: list[tuple[float, int, int, int]] = []
    seq = 0
    rejected = 0
    nxt = 0
    inf = math.inf
    next_sample = 0.0
    now = 0.0
    # When the last quote and the last order reservation lapse (see ``end``), tracked as the
    # loop goes rather than by passes over a million quotes afterwards. Conversions come in
    # time order, so the last one's order reservation lapses last.
    quote_lapse: float = -inf
    order_lapse = -inf

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
            except CapacityExhausted:
                rejects[group] += 1
                rejected += 1
                if tries <= max_retries:
                    seq += 1
                    wait = retry.capacity_delay(tries - 1, uniform())  # type: ignore[union-attr]
                    heappush(heap, (now + wait, seq, _ARRIVE, k))
                else:
                    outcome[k] = NO_CAPACITY
                continue
            except NoRoute as exc:
                outcome[k] = NO_ROUTE
                error[k] = str(exc)
                continue
            quoted_at[k] = now
            quote_id[k] = q.quote_id
            input_amount[k] = q.input_amount
            output_amount[k] = q.output_amount
            fee_bps[k] = q.fee_bps
            pool[k] = q.pool
            if q.expires_at > quote_lapse:
                quote_lapse = q.expires_at
            if converts[k]:
                pending[k] = q
                seq += 1
                heappush(heap, (now + delays[k], seq, _CONVERT, k))
            else:
                outcome[k] = EXPIRED

        elif kind == _CONVERT:
            q = pending.pop(k)
            r = route_of[k]
            oid = f"or_{k}"
            order_id[k] = oid
            ordered_at[k] = now
            order_lapse = now + order_window
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
            heappush(heap, (now + r_eta[r], seq, _FILL, k))

        elif kind == _FILL:
            oid = order_id[k]
            try:
                done = world_fill(oid, now)
            except (CapacityExhausted, FillRejected) as exc:
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
            pool[k] = done.pool
            outcome[k] = FILLED
            seq += 1
            heappush(heap, (now + settle_delay, seq, _SETTLE, k))

        else:
            repaid = world_settle(order_id[k], now)
            settled_at[k] = now
            earned[k] = repaid.earned
            revenue[repaid.pool] += repaid.earned

    # Sample on until the last reservation has lapsed, so the final sample is the settled state.
    horizon = max(now, quote_lapse, order_lapse)
    end = math.ceil(horizon / interval) * interval
    while sampler.next <= end:
        sampler.take()
    return Trace(
        quote_id=quote_id,
        input_amount=input_amount,
        output_amount=output_amount,
        fee_bps=fee_bps,
        pool=pool,
        quoted_at=quoted_at,
        attempts=attempts,
        outcome=outcome,
        error=error,
        order_id=order_id,
        ordered_at=ordered_at,
        filled_at=filled_at,
        settled_at=settled_at,
        earned=earned,
        revenue=revenue,
        rejected=rejected,
        end=horizon,
        samples=sampler.columns,
    )
