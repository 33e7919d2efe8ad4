"""The reservation engine: quotes, conversions and loans on top of fills, settlements,
inventory and transfers (:mod:`toolkit.engine.fills`, :mod:`toolkit.engine.transfers`).

Methods validate their arguments before touching any state, so a rejected call changes nothing
(apart from the clock moving to ``now`` and the lapses and arrivals due by then).
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappush

from toolkit.engine.errors import InvalidArgument
from toolkit.engine.events import BORROWED, REKEYED
from toolkit.engine.fills import ORDER_KIND, FillBook
from toolkit.engine.quoting import QUOTE_KIND, check_kind
from toolkit.engine.results import EXACT_INPUT, Loan, ReservedQuote
from toolkit.engine.state import AMOUNT, KIND, LIVE, POOL, QUOTE
from toolkit.scenario import Scenario

__all__ = ["Engine"]

_QUOTE = QUOTE_KIND
_ORDER = ORDER_KIND
_BORROW = "borrow"


class Engine(FillBook):
    """The pure, single-threaded reservation engine; every method takes ``now`` in seconds.

    ``seed`` makes quote ids distinct between engines (ids are a counter behind a seed tag);
    ``max_events`` bounds the event log's memory (None keeps every event; 0 keeps none and only
    counts them, so that :attr:`last_event_id` still advances).

    >>> from toolkit.scenario import load_scenario
    >>> engine = Engine(load_scenario("default"))
    >>> usdc_base = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
    >>> q = engine.quote(1, 8453, usdc_base, 1_000_000_000, now=100.0)
    >>> q.quote_id, q.valid_until, q.input_amount, q.output_amount, q.fee_bps
    ('qt_0_1', 115, 1000000000, 999450000, 5)
    >>> engine.convert(q.quote_id, "0xabc", now=105.0)
    True
    """

    def __init__(self, scenario: Scenario, *, seed: int = 0, max_events: int | None = None) -> None:
        super().__init__(scenario, seed=seed, max_events=max_events)
        windows = scenario.windows
        self._quote_window = windows.quote_s
        self._order_window = windows.order_s
        self._borrow_window = windows.borrow_quote_s

    # -- partner-intents flow -----------------------------------------------------------------

    def quote(
        self,
        src_chain: int,
        dst_chain: int,
        token: str,
        amount: int,
        now: float,
        *,
        kind: str = EXACT_INPUT,
        src_token: str | None = None,
        hold: float | None = None,
    ) -> ReservedQuote:
        """Price an RFQ and reserve its output until ``validUntil = round(now) + 15``.

        ``token`` is the destination token address; ``src_token`` (optional) must be the same
        symbol's token on the source chain. ``hold`` replaces the window by a lifetime in
        seconds (backtests use it to model other holding times). Raises :class:`NoRoute` (400)
        and :class:`CapacityExhausted` (404).

        >>> from toolkit.scenario import load_scenario
        >>> engine = Engine(load_scenario("default"))
        >>> weth_op = "0x4200000000000000000000000000000000000006"
        >>> q = engine.quote(8453, 10, weth_op, 10**18, now=0.0, kind="ExactOutput")
        >>> q.output_amount, q.input_amount, q.fee_bps
        (1000000000000000000, 1000516925129231283, 5)
        """
        return self._quote(
            src_chain,
            dst_chain,
            token,
            amount,
            now,
            kind,
            src_token,
            None,
            self._quote_window,
            hold,
            self._quote_head,
            _QUOTE,
        )

    def quoter(
        self, src_chain: int, dst_chain: int, token: str, *, kind: str = EXACT_INPUT
    ) -> Callable[[int, float], ReservedQuote]:
        """``quote(amount, now)`` for one route and kind: :meth:`Engine.quote` with the route
        resolved and the kind checked once, for callers that quote one route many times (the
        replay makes one per route and kind). Same rules, same errors, same quotes.

        >>> from toolkit.scenario import load_scenario
        >>> engine = Engine(load_scenario("default"))
        >>> quote = engine.quoter(1, 8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
        >>> q = quote(1_000_000_000, 100.0)
        >>> q.quote_id, q.valid_until, q.output_amount
        ('qt_0_1', 115, 999450000)
        """
        route = self._route(src_chain, dst_chain, token, None)
        check_kind(kind)
        window, head = self._quote_window, self._quote_head
        tick, pick, offer = self._tick, self._pick, self._offer
        pools = route.pools
        only = pools[0] if len(pools) == 1 else None

        def quote(amount: int, now: float) -> ReservedQuote:
            tick(now)
            if type(amount) is not int or amount <= 0:
                raise InvalidArgument("amount", "must be a positive integer")
            pool = only or pick(route, None)
            return offer(route, pool, amount, kind, now, None, window, head, _QUOTE)

        return quote

    def convert(self, quote_id: str, order_id: str, now: float) -> bool:
        """Re-key a live quote reservation to ``order_id`` for the order window (60 s from now).

        Returns False, reserving nothing, when the quote lapsed or is unknown (the transaction
        endpoint still returns calldata then).

        >>> from toolkit.scenario import load_scenario
        >>> engine = Engine(load_scenario("single-pool"))
        >>> q = engine.quote(1, 8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", 10**9, 0.0)
        >>> engine.convert(q.quote_id, "0x01", 16.0)
        False
        """
        if not isinstance(order_id, str) or not order_id:
            raise InvalidArgument("order_id", "must be a non-empty string")
        self._tick(now)
        live = self._reservations
        res = live.get(quote_id) if isinstance(quote_id, str) else None
        if res is None or res[KIND] != _QUOTE:
            return False
        if order_id in live or order_id in self._outstanding:
            raise InvalidArgument("order_id", f"{order_id} already holds a reservation or a fill")
        del live[quote_id]
        res[LIVE] = False
        pool = res[POOL]
        amount = res[AMOUNT]
        # A new entry (the old one stays in the schedule, dead: see toolkit.engine.state).
        self._seq = seq = self._seq + 1
        order = [now + self._order_window, seq, order_id, _ORDER, pool, amount, res[QUOTE], True]
        heappush(self._heap, order)
        live[order_id] = order
        if self._keep_log:
            self._log += (now, REKEYED, order_id, pool, amount, quote_id)
        else:
            self._log_base += 1
        return True

    # -- liquidity API ------------------------------------------------------------------------

    def borrow_quote(
        self,
        src_chain: int,
        dst_chain: int,
        token: str,
        amount: int,
        now: float,
        *,
        kind: str = EXACT_INPUT,
        pool: str | None = None,
    ) -> ReservedQuote:
        """Price a borrow and reserve it for the borrow-quote window; same rules as :meth:`quote`.

        ``pool`` is a preferred pool address; it is used when it can serve the amount.

        >>> from toolkit.scenario import load_scenario
        >>> engine = Engine(load_scenario("default"))
        >>> usdc_arb = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
        >>> engine.borrow_quote(1, 42161, usdc_arb, 10**8, now=0.0).quote_duration
        60
        """
        if pool is not None:
            route = self._route(src_chain, dst_chain, token, None)
            preferred = self._pick(route, pool)
            free = preferred.balance - preferred.reserved - preferred.outstanding
            if type(amount) is not int or free < amount:
                pool = None  # fall back to the pool with the most liquidity
        return self._quote(
            src_chain,
            dst_chain,
            token,
            amount,
            now,
            kind,
            None,
            pool,
            self._borrow_window,
            None,
            self._borrow_head,
            _BORROW,
        )

    def authorize(self, quote_id: str, now: float) -> Loan:
        """Consume a live borrow quote: its amount becomes outstanding, owed on the quote's
        ``repayment_chain`` until :meth:`settle`.

        >>> from toolkit.scenario import load_scenario
        >>> engine = Engine(load_scenario("default"))
        >>> usdc_arb = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
        >>> q = engine.borrow_quote(1, 42161, usdc_arb, 10**8, now=0.0)
        >>> engine.authorize(q.quote_id, 5.0).amount == q.output_amount
        True
        """
        self._tick(now)
        res = self._take(quote_id, _BORROW, "quote_id")
        quote: ReservedQuote = res[QUOTE]
        pool = res[POOL]
        amount = res[AMOUNT]
        pool.reserved -= amount
        pool.outstanding += amount
        earned = quote.input_amount - amount - quote.fill_cost
        self._owe(
            quote_id,
            pool,
            amount,
            earned,
            quote.input_amount,
            quote.repayment_chain,
            quote.symbol,
            True,
        )
        self._log_event(now, BORROWED, quote_id, pool, amount, None)
        if self._threshold:
            self._rebalance(quote.symbol, now)
        return Loan(
            quote_id,
            pool.id,
            pool.address,
            quote.dst_chain,
            quote.symbol,
            quote.dst_token,
            amount,
            quote.borrow_cost,
            quote.input_amount,
        )
