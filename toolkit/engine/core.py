"""The engine's core: the clock, reservations with lazy expiry, and the event log.

:class:`ReservationCore` knows pools and reservations, not prices or routes;
:class:`toolkit.engine.engine.Engine` builds quoting, fills and loans on top of it.

Expiry schedule. Reservations lapse in order of ``[expires, seq]``, ``seq`` counting every
reservation made, so those ending at the same instant lapse in the order they were made. Each
reservation is its own entry in a heap, except quotes made with the default window: they end
on whole seconds (``validUntil``) and a busy engine makes many per second, so a second's quotes
are grouped in ``_due[second]`` (in the order they were made) behind one marker entry in the
heap, made with the first of them. A quote then costs a list append instead of a push and a pop
on a heap of records (about 0.3 s of a million-request replay). When a marker falls due, its
quotes lapse, merged by ``seq`` with any other entry ending at that very second, so the order
is the one a heap of single entries would give. A re-keyed or consumed reservation stays where
it is, marked dead, and is skipped when it falls due.

Event log layout. Appending an 11-field tuple per event was the largest cost of a reservation
(profiled: about 40 % of an arrival), mostly memory growth. So the log is one flat list of
6-slot records ``time, kind, key, pool, amount, detail`` that only reference objects the engine
already holds, and an event's pool figures (available, reserved, outstanding, balance after it)
are not stored: :meth:`ReservationCore.events_since` rebuilds them by walking back from the
pools' current figures and undoing each newer event. That costs O(events returned).

With ``max_events=0`` nothing is stored at all: events are only counted, so that ids stay
gap-free (building and trimming records nobody could read cost a sixth of an arrival in the
Erlang benchmark). The hot paths inline :meth:`ReservationCore._log_event`: a call would cost
more than the append.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from heapq import heappop, heappush
from typing import Any

from toolkit.engine.errors import EventsTruncated, InvalidArgument, UnknownReservation
from toolkit.engine.events import CREATED, RELEASED, Event, rebuild_events
from toolkit.engine.results import PoolState, Reservation
from toolkit.engine.state import (
    AMOUNT,
    EXPIRES,
    GROUP,
    KEY,
    KIND,
    LIVE,
    POOL,
    QUOTE,
    SEQ,
    TIMED,
    LiveReservation,
    PoolSlot,
    timed_entry,
)
from toolkit.scenario import Scenario

__all__ = ["HOLD", "ReservationCore"]

_INF = math.inf
#: Kind of a raw reservation made with :meth:`ReservationCore.reserve`.
HOLD = "hold"
# Slots per event record in the flat log (toolkit.engine.events.rebuild_events reads them).
_W = 6
# The log is trimmed in chunks so that trimming stays amortised O(1) per event.
_TRIM_SLACK = 4096


def _by_seq(res: LiveReservation) -> int:
    return res[SEQ]


class ReservationCore:
    """Pools, reservations, lazy expiry and the event log (see the package docstring)."""

    def __init__(self, scenario: Scenario, *, seed: int = 0, max_events: int | None = None) -> None:
        if not isinstance(scenario, Scenario):
            raise InvalidArgument("scenario", "must be a toolkit.scenario.Scenario")
        if type(seed) is not int or seed < 0:
            raise InvalidArgument("seed", "must be a non-negative integer")
        if max_events is not None and (type(max_events) is not int or max_events < 0):
            raise InvalidArgument("max_events", "must be None or a non-negative integer")
        self._scenario = scenario
        self._clock = -_INF
        # The expiry schedule (see the module docstring).
        self._heap: list[LiveReservation] = []
        self._due: dict[int, list[LiveReservation]] = {}
        self._seq = 0
        # Quotes, orders and loans under their string ids; holds under their numbers.
        self._reservations: dict[str | int, LiveReservation] = {}
        self._count = 0
        self._seed = seed
        self._hold_prefix = f"rs_{seed}_"
        self._log: list[Any] = []
        self._log_base = 0  # id of the last event dropped by retention (or counted, not kept)
        self._max_events = max_events
        self._keep_log = max_events != 0
        self._trim_at = 0 if not max_events else _W * (max_events + _TRIM_SLACK)
        self._pools: dict[str, PoolSlot] = {}
        for pool in scenario.pools:
            self._pools[pool.id] = PoolSlot(
                pool.id, pool.chain, pool.token, pool.type, pool.address, pool.balance
            )

    # -- clock and expiry ---------------------------------------------------------------------

    @property
    def scenario(self) -> Scenario:
        """The scenario the engine was built from (pool balances there are the initial ones)."""
        return self._scenario

    @property
    def clock(self) -> float:
        """The latest ``now`` any call passed (``-inf`` before the first call)."""
        return self._clock

    def _bad_now(self, now: object) -> InvalidArgument:
        if isinstance(now, bool) or not isinstance(now, int | float):
            return InvalidArgument("now", "must be a number of seconds")
        if now != now or now == _INF:
            return InvalidArgument("now", "must be a finite number of seconds")
        return InvalidArgument("now", f"{now} is earlier than the engine's clock {self._clock}")

    def _expire(self, now: float) -> None:
        heap = self._heap
        while heap and heap[0][0] <= now:
            res = heappop(heap)
            kind = res[KIND]
            if kind is GROUP:
                # A due second's quotes lapse together, in one pass (most lapses).
                self._release(self._lapsing(res))
            elif res[LIVE]:  # else re-keyed or consumed since it was scheduled
                self._release((res,))
            elif kind is TIMED:
                res[QUOTE](res[EXPIRES], res[KEY])

    def _schedule(self, at: float, handler: Any, key: Any) -> None:
        """Call ``handler(at, key)`` when the clock reaches ``at``, in order with the lapses
        (a transfer's arrival, a periodic rebalance: :mod:`toolkit.engine.inventory`)."""
        self._seq = seq = self._seq + 1
        heappush(self._heap, timed_entry(at, seq, key, handler))

    def _release(self, due: Iterable[LiveReservation]) -> None:
        """Release lapsed reservations, in order, and log (or count) their releases."""
        live = self._reservations
        log = self._log if self._keep_log else None
        counted = 0
        for res in due:
            if not res[LIVE]:
                continue  # re-keyed or consumed since it was scheduled
            res[LIVE] = False
            key = res[KEY]
            del live[key]
            pool = res[POOL]
            pool.reserved -= res[AMOUNT]
            # The release happens at the lapse time, which lies between the previous call's
            # ``now`` and this one, so event times stay non-decreasing.
            if log is None:
                counted += 1
            else:
                log += (res[EXPIRES], RELEASED, key, pool, res[AMOUNT], None)
        self._log_base += counted

    def _lapsing(self, marker: LiveReservation) -> list[LiveReservation]:
        """The quotes of a due second's group, in order (see the module docstring)."""
        second = marker[EXPIRES]
        group = self._due.pop(second)
        heap = self._heap
        if heap and heap[0][0] == second:
            # Rare: other reservations end at this very second; all lapse in creation order.
            while heap and heap[0][0] == second:
                group.append(heappop(heap))
            group.sort(key=_by_seq)
            if any(res[KIND] is TIMED for res in group):
                # Rarer: a handler is due then too; each entry runs in turn, in order.
                for res in group:
                    if res[KIND] is TIMED:
                        res[QUOTE](res[EXPIRES], res[KEY])
                    else:
                        self._release((res,))
                return []
        return group

    def _log_event(
        self, time: float, kind: str, key: str, pool: PoolSlot | None, amount: int, detail: Any
    ) -> None:
        """Append one event, or only count it when the log keeps none (``max_events=0``)."""
        if self._keep_log:
            self._log += (time, kind, key, pool, amount, detail)
        else:
            self._log_base += 1

    def advance(self, now: float) -> None:
        """Move the clock to ``now`` and release every reservation that lapsed by then.

        Every public method does this first; call it alone before reading the event log.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> engine = Engine(load_scenario("single-pool"))
        >>> engine.advance(10.0); engine.clock
        10.0
        """
        try:
            ok = self._clock <= now < _INF
        except TypeError:
            ok = False
        if not ok:
            raise self._bad_now(now)
        self._clock = now
        heap = self._heap
        if heap and heap[0][0] <= now:
            self._expire(now)
        if self._trim_at and len(self._log) > self._trim_at:
            self._trim()

    # The engine's methods call this first step ``_tick``; ``advance`` is the same function, not
    # a wrapper, so that callers outside the engine (the world, on every step) pay one call.
    _tick = advance

    # -- reservations -------------------------------------------------------------------------

    def reserve(self, pool_id: str, amount: int, now: float, lifetime: float) -> int | None:
        """Reserve ``amount`` on a pool for ``lifetime`` seconds with no pricing; None when full.

        The raw mechanism under quotes, for capacity experiments (an Erlang loss system is a
        pool whose arrivals call ``reserve`` with their holding time). Returns the hold's
        number ``n``; its id, in the event log and for :meth:`reservation`, is
        ``rs_{seed}_{n}``. A hold only lapses: nothing consumes it.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> engine = Engine(load_scenario("single-pool"))
        >>> engine.reserve("8453:USDC:usdc", 15_000_000_000, 0.0, 2.5)
        1
        >>> engine.reservation("rs_0_1", 0.5).expires_at
        2.5
        >>> engine.reserve("8453:USDC:usdc", 1, 1.0, 2.5) is None
        True
        >>> engine.pool("8453:USDC:usdc", 2.5).available
        15000000000
        """
        # The hot path of capacity experiments: the clock tick, the heap push and the event
        # append are inlined, and a hold is keyed by its number, not by a string id made for
        # every arrival (each saved a measurable share of an arrival: bench/bench_engine.py §2).
        try:
            ok = self._clock <= now < _INF and 0 < lifetime < _INF
        except TypeError:
            ok = False
        if not ok:
            try:
                now_ok = self._clock <= now < _INF
            except TypeError:
                now_ok = False
            if not now_ok:
                raise self._bad_now(now)
            raise InvalidArgument("lifetime", "must be a positive finite number of seconds")
        self._clock = now
        heap = self._heap
        if heap and heap[0][0] <= now:
            self._expire(now)
        if self._trim_at and len(self._log) > self._trim_at:
            self._trim()
        pool = self._pools.get(pool_id)
        if pool is None:
            raise InvalidArgument("pool_id", f"no pool {pool_id!r}")
        if type(amount) is not int or amount <= 0:
            raise InvalidArgument("amount", "must be a positive integer")
        reserved = pool.reserved
        if pool.balance - reserved - pool.outstanding < amount:
            return None
        self._count = n = self._count + 1
        self._seq = seq = self._seq + 1
        res = [now + lifetime, seq, n, HOLD, pool, amount, None, True]
        heappush(heap, res)
        self._reservations[n] = res
        pool.reserved = reserved + amount
        if self._keep_log:
            self._log += (now, CREATED, n, pool, amount, None)
        else:
            self._log_base += 1
        return n

    def _live(self, key: str) -> LiveReservation | None:
        """The live reservation under a quote, order or hold id."""
        if not isinstance(key, str):
            return None
        res = self._reservations.get(key)
        if res is None and key.startswith(self._hold_prefix):
            number = key[len(self._hold_prefix) :]
            # Only a hold's own spelling: ASCII digits, no leading zero, and short enough for
            # int() (which refuses strings past 4300 digits).
            if number.isascii() and number.isdigit() and number[0] != "0" and len(number) < 20:
                res = self._reservations.get(int(number))
        return res

    def reservation(self, key: str, now: float) -> Reservation | None:
        """The live reservation under ``key`` (a quote, order or hold id), else None.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> engine = Engine(load_scenario("single-pool"))
        >>> engine.reservation("qt_unknown", 0.0) is None
        True
        """
        self._tick(now)
        res = self._live(key)
        if res is None:
            return None
        return Reservation(key, res[KIND], res[POOL].id, res[AMOUNT], res[EXPIRES], res[QUOTE])

    def _take(self, key: str, kind: str, field: str) -> LiveReservation:
        """Remove and return a live reservation of ``kind``; its heap entry goes stale."""
        res = self._reservations.get(key) if isinstance(key, str) else None
        if res is None or res[KIND] != kind:
            raise UnknownReservation(field, f"no live {kind} reservation {key!r}")
        del self._reservations[key]
        res[LIVE] = False
        return res

    # -- pools --------------------------------------------------------------------------------

    def pool(self, pool_id: str, now: float) -> PoolState:
        """A snapshot of one pool at ``now``.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> Engine(load_scenario("single-pool")).pool("8453:USDC:usdc", 0.0).balance
        15000000000
        """
        self._tick(now)
        pool = self._pools.get(pool_id) if isinstance(pool_id, str) else None
        if pool is None:
            raise InvalidArgument("pool_id", f"no pool {pool_id!r}")
        return pool.state()

    def pools(self, now: float) -> list[PoolState]:
        """Snapshots of every pool at ``now``, in scenario order.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> [p.id for p in Engine(load_scenario("single-pool")).pools(0.0)]
        ['8453:USDC:usdc']
        """
        self._tick(now)
        return [pool.state() for pool in self._pools.values()]

    # -- events -------------------------------------------------------------------------------

    @property
    def last_event_id(self) -> int:
        """Id of the latest event (0 before any event)."""
        return self._log_base + len(self._log) // _W

    def events_since(self, event_id: int) -> list[Event]:
        """Every event with an id greater than ``event_id``, oldest first.

        Raises :class:`EventsTruncated` when retention (``max_events``) dropped some of them.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> engine = Engine(load_scenario("single-pool"))
        >>> _ = engine.reserve("8453:USDC:usdc", 5, 0.0, 1.0)
        >>> [(e.id, e.kind, e.reserved) for e in engine.events_since(0)]
        [(1, 'created', 5)]
        """
        if type(event_id) is not int or event_id < 0:
            raise InvalidArgument("event_id", "must be a non-negative integer")
        if event_id < self._log_base:
            raise EventsTruncated(
                "event_id",
                f"events up to {self._log_base} were dropped (max_events="
                f"{self._max_events}); resume from {self._log_base}",
            )
        log = self._log
        start = (event_id - self._log_base) * _W
        count = (len(log) - start) // _W
        if count <= 0:
            return []
        figures = {p: [p.reserved, p.outstanding, p.balance] for p in self._pools.values()}
        return rebuild_events(log[start:], event_id + count, figures, self._hold_prefix)

    def _trim(self) -> None:
        keep = self._max_events or 0
        drop = len(self._log) // _W - keep
        del self._log[: drop * _W]
        self._log_base += drop
