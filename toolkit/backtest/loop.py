"""The replay's event loop: the toolkit's :class:`~toolkit.scheduler.Scheduler` under a virtual
clock, no ticking, one handler per kind of event (:class:`Replay`).

Arrivals are the flow's ``t`` column (already sorted), fed to the scheduler in place; the
handlers schedule retried RFQs, conversions (the transaction call), fills and settlements.
Ties are broken by the order events were scheduled in, and scheduled events go before a flow
arrival at the same instant (arrivals are fed at a later priority), so a replay is a pure
function of its inputs.

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
5. :meth:`World.settle` ``settlement_delay_s`` after the fill books the input on the order's
   origin chain (the escrow releases it there; the lending pool's receivable is paid), or,
   under the ``instant-free`` baseline, repays the lending pool in place with the fee the
   service earned. The scenario's rebalancing policy sends transfers as the engine's books
   change (:mod:`toolkit.engine.transfers`); they land on the engine's own heap.

The loop drives the filler itself, at the exact instants things fall due, rather than polling
:meth:`World.advance`: same rules, one call per step. Its world is ``driven`` (it keeps no
schedule of its own) and forgets settled orders, so memory stays bounded by the orders in
flight.

Pools and the inventory per (chain, token) are sampled every ``interval`` seconds of virtual
time (``t = 0, interval, ...``), after every event at or before that instant (the scheduler
runs to each sampling instant in turn), until the last reservation has lapsed, the last fill
has settled and the last transfer has landed (``end``).
"""

from __future__ import annotations

import math
import random
from typing import Any, NamedTuple

from toolkit.backtest.sampler import Sampler
from toolkit.engine import (
    EXACT_INPUT,
    EXACT_OUTPUT,
    CapacityExhausted,
    Engine,
    FillRejected,
    NoRoute,
    Transfer,
)
from toolkit.flows import FlowColumns
from toolkit.resources.retry import RetryPolicy
from toolkit.scheduler import Scheduler
from toolkit.world import EscrowOrder, World, WorldError

__all__ = [
    "EXPIRED",
    "FILLED",
    "NO_CAPACITY",
    "NO_ROUTE",
    "OUTCOMES",
    "Replay",
    "Trace",
    "run_events",
]

FILLED = "filled"
EXPIRED = "expired"
NO_CAPACITY = "no_capacity"
NO_ROUTE = "no_route"
#: Every outcome a request can end with.
OUTCOMES: tuple[str, ...] = (FILLED, EXPIRED, NO_CAPACITY, NO_ROUTE)

#: Arrivals run after the events scheduled for the same instant (those run at priority 0).
ARRIVALS = 1
#: Seconds between the filler's attempts at an order it could not fill yet (the world's default).
FILL_RETRY_SECONDS = 1.0
#: The simulated user who requests, escrows and receives (one address: balances are not modelled).
USER = "0x" + "11" * 20


class Trace(NamedTuple):
    """Everything the loop recorded, as parallel lists (one entry per request or sample).

    ``quote_id``, ``input_amount``, ``output_amount`` and ``fee_bps`` are the successful quote's;
    ``pool`` is the pool that filled the order, else the quote's pool. ``samples`` are the pool
    samples, ``inventory`` the inventory samples (:class:`~toolkit.backtest.sampler.Sampler`),
    ``transfers`` every rebalancing transfer and ``policy`` the rebalancing policy.
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
    inventory: dict[str, list[Any]]
    transfers: list[Transfer]
    policy: str


def run_events(
    engine: Engine,
    flow: FlowColumns,
    *,
    retry: RetryPolicy | None,
    seed: int,
    interval: float,
) -> Trace:
    """Replay ``flow`` on ``engine`` (fresh, clock unset) and a world around it; record it all."""
    sampler = Sampler(engine, engine.scenario, interval)
    replay = Replay(engine, flow, sampler, retry=retry, seed=seed)
    sched = replay.scheduler
    sched.feed(flow.t, replay.arrive, priority=ARRIVALS)
    # A sample at ``s`` is taken once every event at or before ``s`` has run, if any is left.
    while True:
        sched.run(until=sampler.next)
        if sched.peek() == math.inf:
            break
        sampler.take()
    # Sample on until the last reservation has lapsed and the last transfer has landed, so the
    # final sample is the settled state (a transfer sent meanwhile extends the horizon).
    horizon = max(sched.now, replay.quote_lapse, replay.order_lapse)
    while True:
        end = math.ceil(horizon / interval) * interval
        while sampler.next <= end:
            sampler.take()
        landing = max((t.arrives_at for t in engine.transfers_since(0)), default=-math.inf)
        if landing <= end:
            break
        horizon = landing
    return replay.trace(horizon, sampler, engine)


class Replay:
    """The replay's state, as columns with one entry per request, and its handlers: one per
    kind of event (:meth:`arrive`, :meth:`convert`, :meth:`fill`, :meth:`settle`), each called
    by the scheduler as ``handler(now, k)`` for request ``k``.

    RFQs, 404s and fee revenue are counted into ``sampler``'s counters, which its samples read.
    """

    def __init__(
        self,
        engine: Engine,
        flow: FlowColumns,
        sampler: Sampler,
        *,
        retry: RetryPolicy | None,
        seed: int,
    ) -> None:
        scenario = engine.scenario
        self.scheduler = Scheduler()
        self.world = world = World(scenario, engine, driven=True, keep_finished=False)
        # Bound once: each handler calls one of them per conversion.
        self.deposit, self.fill_order, self.settle_order = world.deposit, world.fill, world.settle
        windows = scenario.windows
        self.order_window = windows.order_s
        self.settle_delay = windows.settlement_delay_s
        self.scenario = scenario
        self.rfqs, self.rejects, self.revenue = sampler.rfqs, sampler.rejects, sampler.revenue
        self._routes(engine, flow, sampler.groups)
        self.retry = retry
        self.max_retries = -1 if retry is None else retry.capacity_retries
        self.uniform = random.Random(seed).random
        self._columns(len(flow.t))
        self.schedule = self.scheduler.schedule
        self.rejected = 0
        # When the last quote and the last order reservation lapse (see ``end``), tracked as the
        # loop goes rather than by passes over a million quotes afterwards. Conversions come in
        # time order, so the last one's order reservation lapses last.
        self.quote_lapse = -math.inf
        self.order_lapse = -math.inf

    def _routes(
        self, engine: Engine, flow: FlowColumns, groups: dict[tuple[int, str], int]
    ) -> None:
        """Per-route lookups (indexed by ``flow.route``) and the flow's columns."""
        scenario = engine.scenario
        routes = flow.routes
        self.r_eta = [scenario.eta(src, dst) for src, dst, _ in routes]
        r_group = [groups[(dst, sym)] for _, dst, sym in routes]
        # Per request, the engine's quoter for its route and kind (Engine.quoter: the route is
        # resolved once, not on every RFQ) and its sampler group: lists built at C speed here
        # rather than two lookups per RFQ in the loop.
        quoters = [
            (
                engine.quoter(src, dst, token, kind=EXACT_INPUT),
                engine.quoter(src, dst, token, kind=EXACT_OUTPUT),
            )
            for src, dst, token in (
                (src, dst, scenario.token(dst, sym).address) for src, dst, sym in routes
            )
        ]
        self.quote_of = [quoters[r][x] for r, x in zip(flow.route, flow.exact_output, strict=True)]
        self.group_of = [r_group[r] for r in flow.route]
        self.route_of, self.amounts = flow.route, flow.amount
        self.converts, self.delays = flow.converts, flow.convert_delay
        self.convert_quote = engine.convert

    def _columns(self, n: int) -> None:
        # The quote's fields go straight into columns: keeping a million ReservedQuote tuples
        # alive cost memory, time in the loop and a pass over them all to build the frames.
        self.quote_id: list[str | None] = [None] * n
        self.input_amount: list[int | None] = [None] * n
        self.output_amount: list[int | None] = [None] * n
        self.fee_bps: list[int | None] = [None] * n
        self.pool: list[str | None] = [None] * n
        self.pending: list[Any] = [None] * n  # each request's quote, from RFQ to conversion
        self.quoted_at: list[float | None] = [None] * n
        self.attempts = [0] * n
        self.outcome: list[str | None] = [None] * n
        self.error: list[str | None] = [None] * n
        self.order_id: list[Any] = [None] * n
        self.ordered_at: list[float | None] = [None] * n
        self.filled_at: list[float | None] = [None] * n
        self.settled_at: list[float | None] = [None] * n
        self.earned: list[int | None] = [None] * n
        self.deadline_of = [0] * n

    # -- the handlers -----------------------------------------------------------------------

    def arrive(self, now: float, k: int) -> None:
        """The RFQ of request ``k`` (a flow arrival, or a retry after a 404)."""
        group = self.group_of[k]
        self.rfqs[group] += 1
        self.attempts[k] = tries = self.attempts[k] + 1
        try:
            q = self.quote_of[k](self.amounts[k], now)
        except CapacityExhausted:
            self.rejects[group] += 1
            self.rejected += 1
            if tries <= self.max_retries:
                wait = self.retry.capacity_delay(tries - 1, self.uniform())  # type: ignore[union-attr]
                self.schedule(now + wait, self.arrive, k)
            else:
                self.outcome[k] = NO_CAPACITY
            return
        except NoRoute as exc:
            self.outcome[k] = NO_ROUTE
            self.error[k] = str(exc)
            return
        self.quoted_at[k] = now
        self.quote_id[k] = q.quote_id
        self.input_amount[k] = q.input_amount
        self.output_amount[k] = q.output_amount
        self.fee_bps[k] = q.fee_bps
        self.pool[k] = q.pool
        if q.expires_at > self.quote_lapse:
            self.quote_lapse = q.expires_at
        if self.converts[k]:
            self.pending[k] = q
            self.schedule(now + self.delays[k], self.convert, k)
        else:
            self.outcome[k] = EXPIRED

    def convert(self, now: float, k: int) -> None:
        """The transaction call of request ``k``: convert its quote, escrow the order."""
        q = self.pending[k]
        self.pending[k] = None
        r = self.route_of[k]
        self.order_id[k] = oid = f"or_{k}"
        self.ordered_at[k] = now
        self.order_lapse = now + self.order_window
        self.convert_quote(q.quote_id, oid, now)
        order = EscrowOrder.from_quote(oid, q, now, self.scenario, USER)
        self.deadline_of[k] = order.fill_deadline
        try:
            self.deposit(order, now)
        except WorldError as exc:
            self.outcome[k] = EXPIRED
            self.error[k] = f"escrow: {exc}"
            return
        self.schedule(now + self.r_eta[r], self.fill, k)

    def fill(self, now: float, k: int) -> None:
        """The service's filler at order ``k``, every second until its fillDeadline."""
        try:
            done = self.fill_order(self.order_id[k], now)
        except (CapacityExhausted, FillRejected) as exc:
            deadline = self.deadline_of[k]
            if now + FILL_RETRY_SECONDS <= deadline:
                self.schedule(now + FILL_RETRY_SECONDS, self.fill, k)
            else:
                self.outcome[k] = EXPIRED
                self.error[k] = (
                    f"fill: not filled by the fillDeadline {deadline}, the order is "
                    f"reclaimable on the escrow; last refusal: {exc}"
                )
            return
        self.filled_at[k] = now
        self.pool[k] = done.pool
        self.outcome[k] = FILLED
        self.schedule(now + self.settle_delay, self.settle, k)

    def settle(self, now: float, k: int) -> None:
        """Order ``k``'s settlement: the lending pool's receivable is paid (on the origin chain;
        in place under instant-free); its fee revenue is the lending pool's."""
        repaid = self.settle_order(self.order_id[k], now)
        self.settled_at[k] = now
        self.earned[k] = repaid.earned
        self.revenue[repaid.pool] += repaid.earned

    # -- the record -------------------------------------------------------------------------

    def trace(self, end: float, sampler: Sampler, engine: Engine) -> Trace:
        """The columns as a :class:`Trace` ending at ``end``, with ``sampler``'s samples and
        ``engine``'s transfers."""
        return Trace(
            quote_id=self.quote_id,
            input_amount=self.input_amount,
            output_amount=self.output_amount,
            fee_bps=self.fee_bps,
            pool=self.pool,
            quoted_at=self.quoted_at,
            attempts=self.attempts,
            outcome=self.outcome,
            error=self.error,
            order_id=self.order_id,
            ordered_at=self.ordered_at,
            filled_at=self.filled_at,
            settled_at=self.settled_at,
            earned=self.earned,
            revenue=self.revenue,
            rejected=self.rejected,
            end=end,
            samples=sampler.columns,
            inventory=sampler.inventory,
            transfers=engine.transfers_since(0),
            policy=engine.policy,
        )
