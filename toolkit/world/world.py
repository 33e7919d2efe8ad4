"""The simulated on-chain side of the partner-intents flow: escrow, filler and settlement."""

from __future__ import annotations

import math

from toolkit.arguments import number
from toolkit.engine import CapacityExhausted, Engine, Fill, FillRejected, Settlement
from toolkit.scenario import Scenario
from toolkit.scheduler import Scheduler
from toolkit.world.escrow import check_timing
from toolkit.world.order import (
    EscrowOrder,
    OrderState,
    OrderStatus,
    Progress,
    Reverted,
    Tally,
    WorldError,
)
from toolkit.world.record import (
    DEPOSITED_AT,
    DEPOSITOR,
    EXCLUSIVE_FILL,
    EXCLUSIVE_UNTIL,
    FILL,
    FILLED_AT,
    FOREIGN,
    ORDER,
    REFUNDED_AT,
    SETTLED_AT,
    STATUS,
    Record,
    escrowed_inputs,
    new_record,
)

__all__ = ["World"]

_DEPOSITED = OrderStatus.DEPOSITED
_FILLED = OrderStatus.FILLED
_SETTLED = OrderStatus.SETTLED
_REFUNDED = OrderStatus.REFUNDED
_NOTHING = Progress((), (), (), (), 0)


class World:
    """The escrow contracts and the service's filler, on the engine's clock.

    The filler fills an order once the quote's ``eta`` has passed since its deposit (the source
    chain's confirmations, then the destination chain's fill time) and settles it
    ``settlement_delay_s`` after the fill. ``retry_s`` spaces the filler's retries
    of an order it could not fill yet (no capacity, price not covered). With
    ``refund_expired`` the users reclaim every missed order as soon as its ``expires`` passes
    (backtests); otherwise refunds are explicit calls. With ``keep_finished=False`` settled and
    refunded orders are forgotten (``order`` no longer finds them; ``counts`` still counts
    them), which keeps long replays' memory and garbage-collector work bounded by the orders in
    flight.

    With ``driven=True`` the world has no filler of its own: its caller calls :meth:`fill` and
    :meth:`settle` at the instants it chooses (a backtest's event loop), so the world keeps no
    schedule of due fills and settlements, and :meth:`advance` is refused.

    >>> from toolkit.engine import Engine, OrderTerms
    >>> from toolkit.scenario import load_scenario
    >>> scenario = load_scenario("single-pool")
    >>> engine = Engine(scenario)
    >>> world = World(scenario, engine)
    >>> usdc_eth = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
    >>> usdc_base = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
    >>> q = engine.quote(1, 8453, usdc_base, 10**9, now=0.0)
    >>> engine.convert(q.quote_id, "0xorder", now=2.0)
    True
    >>> terms = OrderTerms(1, usdc_eth, q.input_amount, 8453, usdc_base, q.output_amount)
    >>> user = "0x" + "11" * 20
    >>> world.deposit(EscrowOrder("0xorder", user, terms, user, 362, 43562), now=5.0)
    '0xorder'
    >>> world.advance(42.9).filled, world.advance(43.0).filled  # eta: 36 s + 2 s after 5.0
    ((), ('0xorder',))
    >>> world.advance(343.0).settled
    ('0xorder',)
    >>> world.order("0xorder").status
    <OrderStatus.SETTLED: 'Settled'>
    """

    def __init__(
        self,
        scenario: Scenario,
        engine: Engine,
        *,
        retry_s: float = 1.0,
        refund_expired: bool = False,
        keep_finished: bool = True,
        driven: bool = False,
    ) -> None:
        if not isinstance(scenario, Scenario):
            raise WorldError("scenario: must be a toolkit.scenario.Scenario")
        if not isinstance(engine, Engine):
            raise WorldError("engine: must be a toolkit.engine.Engine")
        number(retry_s, "retry_s", above=0)
        if driven and refund_expired:
            raise WorldError("refund_expired: needs the world's own filler (driven=False)")
        self._scenario = scenario
        self._engine = engine
        self._retry = retry_s
        self._refund_expired = bool(refund_expired)
        self._keep_finished = bool(keep_finished)
        self._driven = bool(driven)
        self._filler = scenario.filler
        self._filler_lower = scenario.filler.lower()
        self._confirmations = {c.id: c.confirmation_s for c in scenario.chains}
        self._fill_seconds = {c.id: c.fill_s for c in scenario.chains}
        self._settle_delay = scenario.windows.settlement_delay_s
        self._orders: dict[str, Record] = {}
        # The filler's calendars, one per kind of event, each run in turn by :meth:`advance`:
        # fills due once the quote's eta passes, settlements due once the settlement delay
        # passes, refunds due once ``expires`` passes. A driven world leaves the first two empty.
        self._to_fill = Scheduler()
        self._to_settle = Scheduler()
        self._to_refund = Scheduler()
        # The instant of the advance running: the filler acts then, on everything due by then.
        self._now = -math.inf
        self._tally = Tally()
        # Cumulative counts per step (an order only moves Deposited -> Filled -> Settled or
        # Deposited -> Refunded), from which :meth:`counts` derives the statuses: an int bump
        # per step, where a dict keyed by status paid the enum's Python-level __hash__ twice.
        self._deposits = self._fills = self._settlements = self._refunds = 0

    @property
    def engine(self) -> Engine:
        """The reservation engine the filler draws on."""
        return self._engine

    # -- escrow ---------------------------------------------------------------------------------

    def deposit(self, order: EscrowOrder, now: float, *, sender: str | None = None) -> str:
        """Escrow an order that was built without calldata (the backtests' fast path).

        Applies the escrow's timing checks and its one-deposit-per-order-id rule; the filler
        picks the order up once the quote's eta (source confirmations, destination fill) passed.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> s = load_scenario("single-pool")
        >>> world = World(s, Engine(s))
        >>> try:
        ...     world.deposit("0x01", now=0.0)
        ... except WorldError as exc:
        ...     print(exc)
        order: must be an EscrowOrder
        """
        self._engine.advance(now)
        check_timing(order, now)
        key = order.order_id
        if key in self._orders:
            raise Reverted("InvalidOrderStatus", f"order {key} was already opened")
        terms = order.terms
        confirmations = self._confirmations.get(terms.src_chain)
        if confirmations is None:
            raise WorldError(f"order: source chain {terms.src_chain} is not in the scenario")
        self._orders[key] = new_record(
            order, sender or order.user, now, self._filler, self._filler_lower
        )
        self._deposits += 1
        if not self._driven:
            # Due once the quote's eta has passed. A destination outside the scenario has no
            # route, so every attempt will be refused whatever the delay.
            due = now + confirmations + self._fill_seconds.get(terms.dst_chain, 0)
            self._to_fill.schedule(due, self._fill_due, key)
        return key

    def refund(self, order_id: str, now: float) -> None:
        """Reclaim an unfilled order after its ``expires`` (anyone may call it).

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> s = load_scenario("single-pool")
        >>> try:
        ...     World(s, Engine(s)).refund("0x01", now=0.0)
        ... except WorldError as exc:
        ...     print(exc)
        order_id: the escrow holds no order '0x01'
        """
        self._engine.advance(now)
        record = self._record(order_id)
        if record[STATUS] is not _DEPOSITED:
            raise Reverted("InvalidOrderStatus", f"order {order_id} is {record[STATUS].value}")
        expires = record[ORDER].expires
        if not now > expires:
            raise Reverted("TimestampNotPassed", f"expires {expires} not before {now}")
        self._refunded(order_id, record, now)

    # -- the service's filler -------------------------------------------------------------------

    def fill(self, order_id: str, now: float) -> Fill:
        """The service fills an escrowed order on the destination chain (engine fill).

        Allowed until ``fillDeadline``; exclusivity lets only ``exclusive_for`` fill before
        ``exclusive_until`` (the service, unless the order named another filler). See the class
        example for a whole flow.
        """
        self._engine.advance(now)
        record = self._record(order_id)
        order: EscrowOrder = record[ORDER]
        if record[STATUS] is not _DEPOSITED:
            raise WorldError(f"order {order_id}: is {record[STATUS].value}, not Deposited")
        if now > order.fill_deadline:
            raise WorldError(f"order {order_id}: fillDeadline {order.fill_deadline} has passed")
        exclusive = now < record[EXCLUSIVE_UNTIL]
        if exclusive and record[FOREIGN]:
            raise Reverted("ExclusiveTo", f"order {order_id} is exclusive to {order.exclusive_for}")
        return self._fill(order_id, record, now, exclusive)

    def _fill(self, order_id: str, record: Record, now: float, exclusive: bool) -> Fill:
        fill = self._engine.fill(order_id, now, record[ORDER].terms)
        record[STATUS] = _FILLED
        record[FILLED_AT] = now
        record[EXCLUSIVE_FILL] = exclusive
        record[FILL] = fill
        self._fills += 1
        if not self._driven:
            self._to_settle.schedule(now + self._settle_delay, self._settle_due, order_id)
        return fill

    def unfill(self, order_id: str, now: float) -> Fill:
        """The service's fill of an order reverted on chain: the order is ``Deposited`` again
        and the engine drops the fill (:meth:`toolkit.engine.Engine.unfill`: the order holds
        no liquidity now). Its filler may fill it again, from available liquidity, until its
        fillDeadline (:meth:`fill`); else it is left to refund.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> s = load_scenario("single-pool")
        >>> try:
        ...     World(s, Engine(s)).unfill("0x01", now=0.0)
        ... except WorldError as exc:
        ...     print(exc)
        order_id: the escrow holds no order '0x01'
        """
        self._engine.advance(now)
        record = self._record(order_id)
        if record[STATUS] is not _FILLED:
            raise WorldError(f"order {order_id}: is {record[STATUS].value}, not Filled")
        fill = self._engine.unfill(order_id, now)
        record[STATUS] = _DEPOSITED
        record[FILLED_AT] = None
        record[EXCLUSIVE_FILL] = False
        record[FILL] = None
        self._fills -= 1
        return fill

    def settle(self, order_id: str, now: float) -> Settlement:
        """Settle a filled order once the settlement delay passed: the escrow releases the
        input on the origin chain and the engine books it (:meth:`toolkit.engine.Engine.settle`).

        See the class example for a whole flow.
        """
        self._engine.advance(now)
        record = self._record(order_id)
        if record[STATUS] is not _FILLED:
            raise WorldError(f"order {order_id}: is {record[STATUS].value}, not Filled")
        due = record[FILLED_AT] + self._settle_delay
        if now < due:
            raise WorldError(f"order {order_id}: settles at {due}, not before")
        return self._settle(order_id, record, now)

    def _settle(self, order_id: str, record: Record, now: float) -> Settlement:
        settlement = self._engine.settle(order_id, now)
        self._settlements += 1
        if self._keep_finished:
            record[STATUS] = _SETTLED
            record[SETTLED_AT] = now
        else:
            self._forget(order_id)
        return settlement

    def advance(self, now: float) -> Progress:
        """Run the filler up to ``now``: settle what is due, then fill what is due (eta passed).

        Orders whose fill fails for capacity or price are retried every ``retry_s``
        until their fillDeadline; then they are reported as missed (reclaimable).

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> s = load_scenario("single-pool")
        >>> World(s, Engine(s)).advance(10.0)
        Progress(filled=(), settled=(), missed=(), refunded=(), retried=0)
        """
        if self._driven:
            raise WorldError("advance: this world is driven by its caller (driven=True)")
        self._engine.advance(now)
        fills, settles, refunds = self._to_fill, self._to_settle, self._to_refund
        if fills.peek() > now and settles.peek() > now and not refunds.peek() < now:
            return _NOTHING  # the common case in a replay: one call per request
        self._now = now
        self._tally = tally = Tally()
        settles.run(until=now)
        fills.run(until=now)
        refunds.run(until=math.nextafter(now, -math.inf))  # refunds need ``now > expires``
        return tally.progress()

    def _settle_due(self, at: float, key: str) -> None:
        record = self._orders.get(key)  # None once settled and forgotten
        if record is not None and record[STATUS] is _FILLED:
            self._settle(key, record, self._now)
            self._tally.settled.append(key)

    def _fill_due(self, at: float, key: str) -> None:
        record = self._orders.get(key)
        if record is None or record[STATUS] is not _DEPOSITED:
            return
        now, tally, order = self._now, self._tally, record[ORDER]
        if now > order.fill_deadline:
            tally.missed.append(key)
            self._missed(key, record)
            return
        exclusive = now < record[EXCLUSIVE_UNTIL]
        try:
            if exclusive and record[FOREIGN]:
                raise Reverted("ExclusiveTo", f"order {key} is exclusive to another filler")
            self._fill(key, record, now, exclusive)
        except (CapacityExhausted, FillRejected, Reverted):
            tally.retried += 1
            if now + self._retry <= order.fill_deadline:
                self._to_fill.schedule(now + self._retry, self._fill_due, key)
            else:
                tally.missed.append(key)
                self._missed(key, record)
            return
        tally.filled.append(key)

    def _refund_due(self, at: float, key: str) -> None:
        record = self._orders.get(key)
        if record is not None and record[STATUS] is _DEPOSITED:
            self._refunded(key, record, self._now)
            self._tally.refunded.append(key)

    # -- reads ----------------------------------------------------------------------------------

    def order(self, order_id: str) -> OrderState:
        """A snapshot of one order; WorldError when the escrow never saw it.

        See the class example.
        """
        r = self._record(order_id)
        return OrderState(
            r[ORDER],
            r[STATUS],
            r[DEPOSITOR],
            r[DEPOSITED_AT],
            r[FILLED_AT],
            r[SETTLED_AT],
            r[REFUNDED_AT],
            r[EXCLUSIVE_FILL],
            r[FILL],
        )

    def escrowed(self) -> dict[tuple[int, str], int]:
        """The inputs the escrows hold now, by (origin chain, token symbol): every order
        Deposited or Filled (a settlement releases its input to the service, a refund to the
        user). O(orders held).

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> s = load_scenario("single-pool")
        >>> World(s, Engine(s)).escrowed()
        {}
        """
        return escrowed_inputs(self._orders.values(), self._scenario)

    def counts(self) -> dict[OrderStatus, int]:
        """How many orders are in each status now.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> s = load_scenario("single-pool")
        >>> World(s, Engine(s)).counts()[OrderStatus.DEPOSITED]
        0
        """
        deposits, fills, settlements, refunds = (
            self._deposits,
            self._fills,
            self._settlements,
            self._refunds,
        )
        return {
            _DEPOSITED: deposits - fills - refunds,
            _FILLED: fills - settlements,
            _SETTLED: settlements,
            _REFUNDED: refunds,
        }

    # -- internals ------------------------------------------------------------------------------

    def _record(self, order_id: str) -> Record:
        record = self._orders.get(order_id) if isinstance(order_id, str) else None
        if record is None:
            raise WorldError(f"order_id: the escrow holds no order {order_id!r}")
        return record

    def _refunded(self, key: str, record: Record, now: float) -> None:
        self._refunds += 1
        if self._keep_finished:
            record[STATUS] = _REFUNDED
            record[REFUNDED_AT] = now
        else:
            self._forget(key)

    def _forget(self, key: str) -> None:
        # A forgotten order id could be opened again; the escrow's own status would say
        # Claimed or Refunded, so replays must not reuse order ids (nonces make them unique).
        del self._orders[key]

    def _missed(self, key: str, record: Record) -> None:
        if self._refund_expired:
            # Due at ``expires``; an order found missed late (its eta longer than its window)
            # may have expired before a refund already run: it is due at once then.
            refunds = self._to_refund
            refunds.schedule(max(record[ORDER].expires, refunds.now), self._refund_due, key)
