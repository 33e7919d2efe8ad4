"""Fills, reverted fills and settlements: where the service's receivables live.

A fill (or a loan's authorization) moves a pool's reservation to ``outstanding`` and records a
receivable: the order's input, owed on its repayment chain (the origin chain for an order, the
borrow quote's ``repayment_chain`` for a loan), in the same token, and the ``earned`` figure
(input − output − fill cost). :meth:`FillBook.unfill` drops a fill whose transaction reverted.
:meth:`FillBook.settle` pays the receivable:

- under every policy but ``instant-free``, the lending pool's ``outstanding`` and ``balance``
  both fall by the amount (it was paid elsewhere) and the repayment chain's inventory gains the
  whole input (:meth:`TransferBook._credit`); the threshold policy then checks the token's
  chains. The fill's gas (``fill_cost``) is not taken from token inventory: the filler pays gas
  in the native coin, so it is a cost line in USD in the economics;
- under ``instant-free`` (the named baseline), the lending pool is repaid in place: its
  ``outstanding`` falls by the amount and its ``balance`` gains ``earned``.

Methods validate their arguments before touching any state, so a rejected call changes nothing
(apart from the clock moving to ``now`` and the lapses and arrivals due by then).
"""

from __future__ import annotations

from toolkit.engine.errors import (
    CapacityExhausted,
    FillRejected,
    InvalidArgument,
    NoRoute,
    UnknownReservation,
)
from toolkit.engine.events import CREDITED, FILLED, FILLED_DIRECT, REPAID, SETTLED, UNFILLED
from toolkit.engine.results import EXACT_OUTPUT, Fill, OrderTerms, ReservedQuote, Settlement
from toolkit.engine.state import AMOUNT, KIND, LIVE, POOL, QUOTE, HoldingSlot, PoolSlot
from toolkit.engine.transfers import TransferBook
from toolkit.scenario import Scenario

__all__ = ["ORDER_KIND", "FillBook"]

#: The kind of reservation an escrowed order holds (a quote re-keyed by :meth:`Engine.convert`).
ORDER_KIND = "order"
_new = tuple.__new__
#: A receivable: ``(pool, amount, earned, holding credited, credit, repayment chain, loan)``.
Debt = tuple[PoolSlot, int, int, HoldingSlot, int, int, bool]


class FillBook(TransferBook):
    """Fills, reverted fills and settlements (see the module docstring)."""

    def __init__(self, scenario: Scenario, *, seed: int = 0, max_events: int | None = None) -> None:
        super().__init__(scenario, seed=seed, max_events=max_events)
        # Receivables by order id or borrow quote id (a tuple: one is made per fill).
        self._outstanding: dict[str, Debt] = {}

    def _owe(
        self,
        key: str,
        pool: PoolSlot,
        amount: int,
        earned: int,
        input_amount: int,
        repayment_chain: int,
        symbol: str,
        loan: bool,
    ) -> None:
        """Record the receivable of a fill or a loan (see the module docstring)."""
        if self._instant_free:
            holding = pool.holding
            credit = amount + earned
        else:
            holding = self._holdings[(repayment_chain, symbol)]
            credit = input_amount
        assert holding is not None
        holding.receivable_in += credit
        self._outstanding[key] = (pool, amount, earned, holding, credit, repayment_chain, loan)

    def fill(self, order_id: str, now: float, terms: OrderTerms | None = None) -> Fill:
        """Fill an order: its reservation moves to outstanding, owed on the order's origin chain
        until :meth:`settle`.

        Without a live reservation (it lapsed, the order was built without a quote id, or its
        earlier fill reverted) the order is filled from available liquidity if ``terms`` are
        given, the route exists, its input covers today's price for its output and a pool has
        the output available; otherwise :class:`FillRejected` or :class:`CapacityExhausted`
        says why. With a reservation, ``terms`` (if given) must match it.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> engine = Engine(load_scenario("single-pool"))
        >>> q = engine.quote(1, 8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", 10**9, 0.0)
        >>> engine.convert(q.quote_id, "0x01", 1.0)
        True
        >>> engine.fill("0x01", 30.0)
        Fill(order_id='0x01', pool='8453:USDC:usdc', amount=1000000000, earned=0, reserved=True)
        """
        if not isinstance(order_id, str) or not order_id:
            raise InvalidArgument("order_id", "must be a non-empty string")
        if terms is not None and not isinstance(terms, OrderTerms):
            raise InvalidArgument("terms", "must be an OrderTerms")
        self._tick(now)
        if order_id in self._outstanding:
            raise FillRejected("order_id", f"{order_id} is already filled")
        res = self._reservations.get(order_id)
        if res is None or res[KIND] != ORDER_KIND:
            return self._fill_direct(order_id, now, terms)
        quote: ReservedQuote = res[QUOTE]
        if terms is not None:
            self._check_terms(order_id, terms, quote)
        del self._reservations[order_id]
        res[LIVE] = False
        pool = res[POOL]
        amount = res[AMOUNT]
        pool.reserved -= amount
        pool.outstanding += amount
        paid = quote.input_amount
        earned = paid - amount - quote.fill_cost
        # _owe inlined: this is the replay's hot path (one call fewer per fill).
        if self._instant_free:
            holding = pool.holding
            credit = amount + earned
        else:
            holding = self._holdings[(quote.src_chain, quote.symbol)]
            credit = paid
        holding.receivable_in += credit
        self._outstanding[order_id] = (
            pool,
            amount,
            earned,
            holding,
            credit,
            quote.src_chain,
            False,
        )
        if self._keep_log:
            self._log += (now, FILLED, order_id, pool, amount, None)
        else:
            self._log_base += 1
        if self._threshold:
            self._rebalance(quote.symbol, now)
        return _new(Fill, (order_id, pool.id, amount, earned, True))

    def _check_terms(self, order_id: str, terms: OrderTerms, quote: ReservedQuote) -> None:
        if terms.dst_chain != quote.dst_chain:
            raise FillRejected(f"order {order_id}: output token differs from the reservation")
        token = terms.output_token
        # The quote's own spelling of its token (the common case) needs no lookup.
        if (
            token != quote.dst_token
            and self._symbols.get((terms.dst_chain, str(token).lower())) != quote.symbol
        ):
            raise FillRejected(f"order {order_id}: output token differs from the reservation")
        if terms.output_amount != quote.output_amount:
            raise FillRejected(
                f"order {order_id}: output amount {terms.output_amount} differs from the "
                f"reserved {quote.output_amount}"
            )
        if terms.input_amount < quote.input_amount:
            raise FillRejected(
                f"order {order_id}: input amount {terms.input_amount} is below the quoted "
                f"{quote.input_amount}"
            )

    def _fill_direct(self, order_id: str, now: float, terms: OrderTerms | None) -> Fill:
        if terms is None:
            raise FillRejected(
                "order_id",
                f"{order_id} holds no live reservation; give its terms to fill it "
                "from available liquidity",
            )
        for name in ("src_chain", "dst_chain", "input_amount", "output_amount"):
            value = getattr(terms, name)
            if type(value) is not int or value <= 0:
                raise InvalidArgument(f"terms.{name}: must be a positive integer")
        try:
            route = self._route(
                terms.src_chain, terms.dst_chain, terms.output_token, terms.input_token
            )
        except NoRoute as exc:
            raise FillRejected(f"order {order_id}: {exc}") from None
        output = terms.output_amount
        pool = self._pick(route, None)
        try:
            required, _, _, _ = self._price(route, output, EXACT_OUTPUT, pool)
        except NoRoute as exc:
            raise FillRejected(f"order {order_id}: {exc}") from None
        if terms.input_amount < required:
            raise FillRejected(
                f"order {order_id}: input amount {terms.input_amount} is below the "
                f"{required} the service charges now for this output"
            )
        free = pool.balance - pool.reserved - pool.outstanding
        if output > free:
            raise CapacityExhausted(
                f"order {order_id}: no pool has {output} {route.symbol} available on chain "
                f"{route.dst} ({free} at most)"
            )
        pool.outstanding += output
        earned = terms.input_amount - output - route.fill_cost
        self._owe(
            order_id, pool, output, earned, terms.input_amount, route.src, route.symbol, False
        )
        self._log_event(now, FILLED_DIRECT, order_id, pool, output, None)
        if self._threshold:
            self._rebalance(route.symbol, now)
        return Fill(order_id, pool.id, output, earned, False)

    def unfill(self, order_id: str, now: float) -> Fill:
        """Undo a fill whose transaction reverted: its amount leaves ``outstanding``, its
        receivable is dropped, and the order holds nothing (a retry fills it from available
        liquidity through :meth:`fill` with its terms). Returns the fill undone (``reserved``
        False: nothing is held for the order now).

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> engine = Engine(load_scenario("single-pool"))
        >>> engine.unfill("0x01", 0.0)
        Traceback (most recent call last):
        ...
        toolkit.engine.errors.UnknownReservation: order_id: no fill outstanding under '0x01'
        """
        self._tick(now)
        debt = self._outstanding.get(order_id) if isinstance(order_id, str) else None
        if debt is None or debt[6]:
            raise UnknownReservation("order_id", f"no fill outstanding under {order_id!r}")
        del self._outstanding[order_id]
        pool, amount, earned, holding, credit, _, _ = debt
        pool.outstanding -= amount
        holding.receivable_in -= credit
        self._log_event(now, UNFILLED, order_id, pool, amount, None)
        return Fill(order_id, pool.id, amount, earned, False)

    def settle(self, key: str, now: float) -> Settlement:
        """Settle a filled order or an authorized loan (see the module docstring).

        ``key`` is the order id (fills) or the borrow quote id (loans).

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> engine = Engine(load_scenario("single-pool"))
        >>> engine.settle("0x01", 0.0)
        Traceback (most recent call last):
        ...
        toolkit.engine.errors.UnknownReservation: key: nothing outstanding under '0x01'
        """
        self._tick(now)
        debt = self._outstanding.pop(key, None) if isinstance(key, str) else None
        if debt is None:
            raise UnknownReservation("key", f"nothing outstanding under {key!r}")
        pool, amount, earned, holding, credit, repayment_chain, _ = debt
        pool.outstanding -= amount
        holding.receivable_in -= credit
        if self._instant_free:
            pool.balance += earned
            if self._keep_log:
                self._log += (now, REPAID, key, pool, amount, earned)
            else:
                self._log_base += 1
            return _new(
                Settlement,
                (key, pool.id, amount, earned, repayment_chain, pool.chain, pool.id, credit),
            )
        pool.balance -= amount
        self._log_event(now, SETTLED, key, pool, amount, earned)
        detail = (holding.chain, holding.symbol)
        credited = self._credit(holding, credit, now, CREDITED, key, detail)
        if self._threshold:
            self._rebalance(holding.symbol, now)
        return Settlement(
            key,
            pool.id,
            amount,
            earned,
            repayment_chain,
            holding.chain,
            None if credited is None else credited.id,
            credit,
        )

    def outstanding(self, key: str) -> tuple[str, int, int] | None:
        """``(pool, amount, earned)`` outstanding under ``key``, or None.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> Engine(load_scenario("single-pool")).outstanding("0x01") is None
        True
        """
        debt = self._outstanding.get(key) if isinstance(key, str) else None
        return None if debt is None else (debt[0].id, debt[1], debt[2])
