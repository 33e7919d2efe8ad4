"""The reservation engine: pure, single-threaded, time passed in as ``now`` (seconds).

The engine holds the service's liquidity pools (per destination chain and token) and the
reservations against them, and prices quotes. It reads no clock and no global randomness: the
embedded service passes wall-clock time, a backtest a virtual clock. ``now`` must never go
backwards.

Pools have ``balance``, ``reserved`` and ``outstanding`` (filled or lent, awaiting repayment);
``available = balance − reserved − outstanding``. ``balance`` is the capital booked to the pool:
its tokens on its chain plus what it lent and awaits (``outstanding``, its receivable), so its
tokens on chain are ``balance − outstanding``.

Inventory has a chain (:mod:`toolkit.engine.transfers`): per (chain, token) the engine holds the
service's pools there, an unallocated balance, what settlements owe it and what bridges carry.
A fill spends the destination's inventory; a settlement credits the order's *origin* chain (the
escrow releases the input there), and only a rebalancing transfer, sent by the scenario's
``[rebalancing]`` policy through a bridge model with a latency and a cost, moves inventory
between chains. The ``instant-free`` policy keeps the old books as a named baseline: a
settlement repays the lending pool in place, at once and for free.

Lifecycle (the spec's state table):

- :meth:`Engine.quote` prices an RFQ (formula in :mod:`toolkit.engine.pricing`) on the pool
  with the most available liquidity and reserves the output amount for 15 s under a new quote
  id (``validUntil = round(now) + 15``, when the reservation ends). :class:`NoRoute` (400)
  when no route is configured or the amount is outside its limits; :class:`CapacityExhausted` (404)
  when no pool can serve it now. :meth:`Engine.quoter` is the same quote with the route
  resolved once, for a caller that quotes one route many times (the replay).
- :meth:`Engine.convert` re-keys a live quote reservation to the on-chain order id for 60 s
  from the call (True), or returns False and reserves nothing when the quote lapsed.
- :meth:`Engine.fill` moves an order's reservation to outstanding (or, when the reservation
  lapsed, takes available liquidity directly if the order's terms still pay) and records the
  receivable, owed on the order's origin chain; :meth:`Engine.unfill` drops a fill whose
  transaction reverted; :meth:`Engine.settle` pays it (:mod:`toolkit.engine.fills`).
- :meth:`Engine.borrow_quote` / :meth:`Engine.authorize` are the liquidity API's borrow quote
  and signing authorization on the same reservation mechanism; a loan spends the pool's chain
  and is repaid by ``settle`` on the quote's ``repayment_chain`` (its caller decides when: the
  whole-flow backtest after ``borrow_hold_s``, the served simulation when the borrower's
  repayment transfer is mined, :mod:`toolkit.world.lending`).
- :meth:`Engine.inventory` reads the holdings per (chain, token); :meth:`Engine.transfers`,
  :meth:`Engine.transfers_since` and :meth:`Engine.arrivals_since` the rebalancing transfers.
- Lapses are lazy: a heap of expiry times is popped up to ``now`` at the start of every call;
  entries for re-keyed or consumed reservations are skipped when popped. Transfers' arrivals
  and periodic rebalances ride the same heap.
- Every change is an :class:`Event` in an append-only log with ids 1, 2, 3, ... and the pool's
  state after it; :meth:`Engine.events_since` feeds the SSE stream and backtests.

Using it:

- The embedded service passes wall-clock seconds (never decreasing: use ``max(last, time())``),
  maps :class:`NoRoute` / :class:`CapacityExhausted` / :class:`InvalidArgument` to their ``status``
  (400 / 404 / 400), checks a posted quote against :meth:`Engine.reservation`, serves
  ``/liquidity/pools`` from :meth:`Engine.pools` and the SSE stream from
  :meth:`Engine.events_since` (after :meth:`Engine.advance`; only events whose
  :attr:`Event.is_liquidity` is true are liquidity updates, ``fee`` events are fee updates).
- Backtests pass a virtual clock, may model other holding times with ``quote(..., hold=)`` or
  raw :meth:`Engine.reserve` (holds, numbered like quotes), and keep no event log with
  ``Engine(..., max_events=0)`` when they do not read it (saving its memory and time).
  :class:`toolkit.world.World` adds the escrow and the filler.

>>> from toolkit.engine import Engine
>>> from toolkit.scenario import load_scenario
>>> engine = Engine(load_scenario("single-pool"))
>>> usdc = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
>>> q = engine.quote(1, 8453, usdc, 10**9, now=0.0, kind="ExactOutput")
>>> engine.pool(q.pool, now=1.0).available
14000000000
>>> engine.pool(q.pool, now=15.0).available
15000000000
>>> [e.kind for e in engine.events_since(0)]
['created', 'released']
"""

from toolkit.engine.core import HOLD
from toolkit.engine.engine import Engine
from toolkit.engine.errors import (
    CapacityExhausted,
    EngineError,
    EventsTruncated,
    FillRejected,
    InvalidArgument,
    NoRoute,
    UnknownReservation,
)
from toolkit.engine.events import LIQUIDITY_KINDS, Event
from toolkit.engine.pricing import exact_input, exact_output, premium_bps, tier_fee_bps
from toolkit.engine.results import (
    EXACT_INPUT,
    EXACT_OUTPUT,
    Fill,
    Holding,
    Loan,
    OrderTerms,
    PoolState,
    Reservation,
    ReservedQuote,
    Settlement,
    Transfer,
)

__all__ = [
    "EXACT_INPUT",
    "EXACT_OUTPUT",
    "HOLD",
    "LIQUIDITY_KINDS",
    "CapacityExhausted",
    "Engine",
    "EngineError",
    "Event",
    "EventsTruncated",
    "Fill",
    "FillRejected",
    "Holding",
    "InvalidArgument",
    "Loan",
    "NoRoute",
    "OrderTerms",
    "PoolState",
    "Reservation",
    "ReservedQuote",
    "Settlement",
    "Transfer",
    "UnknownReservation",
    "exact_input",
    "exact_output",
    "premium_bps",
    "tier_fee_bps",
]
