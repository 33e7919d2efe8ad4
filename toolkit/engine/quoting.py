"""Routes, pricing and priced reservations: the quoting half of the engine.

:class:`QuoteBook` resolves a request to an onboarded route, picks the pool, prices the amount
(formula in :mod:`toolkit.engine.pricing`) and reserves the output; it also holds the routes'
fee tiers. :class:`toolkit.engine.engine.Engine` adds the flows (RFQ, conversion, fills, loans,
settlement) on top.
"""

from __future__ import annotations

import math
from heapq import heappush
from math import floor
from typing import Any

from toolkit.engine.core import ReservationCore
from toolkit.engine.errors import CapacityExhausted, InvalidArgument, NoRoute
from toolkit.engine.events import CREATED, FEE
from toolkit.engine.pricing import BPS, exact_input, exact_output, premium_bps, tier_fee_bps
from toolkit.engine.results import EXACT_INPUT, EXACT_OUTPUT, ReservedQuote
from toolkit.engine.state import PoolSlot, RouteSlot, group_marker
from toolkit.scenario import FeeTier, Scenario, ScenarioError, check_tiers

__all__ = ["QUOTE_KIND", "QuoteBook", "check_kind"]

_KINDS = (EXACT_INPUT, EXACT_OUTPUT)
_new = tuple.__new__
_INF = math.inf
#: The kind of reservation an RFQ quote holds (Engine.quote's and the quoters').
QUOTE_KIND = "quote"


class QuoteBook(ReservationCore):
    """Onboarded routes and their fee tiers, pricing, and priced reservations."""

    def __init__(self, scenario: Scenario, *, seed: int = 0, max_events: int | None = None) -> None:
        super().__init__(scenario, seed=seed, max_events=max_events)
        self._symbols: dict[tuple[int, str], str] = {}
        for token in scenario.tokens:
            self._symbols[(token.chain, token.address)] = token.symbol
            self._symbols[(token.chain, token.address.lower())] = token.symbol
        self._routes: dict[tuple[int, int, str], RouteSlot] = {}
        for route in scenario.routes:
            self._routes[(route.src, route.dst, route.token)] = RouteSlot(
                route.src,
                route.dst,
                route.token,
                _tier_tuples(route.fee_tiers),
                tuple(self._pools[p.id] for p in scenario.pools_for(route.dst, route.token)),
                scenario.fill_cost(route.dst, route.token),
                scenario.eta(route.src, route.dst),
                scenario.token(route.src, route.token).address,
                scenario.token(route.dst, route.token).address,
                scenario.repayment_chain(route.src, route.token),
            )
        # (src, dst, destination token address as given or lowercased) -> route: the quote
        # path finds its route with one lookup (the symbol, then the route, in _resolve).
        self._by_token: dict[tuple[int, int, str], RouteSlot] = {}
        for (src, dst, symbol), slot in self._routes.items():
            for token in scenario.tokens:
                if token.chain == dst and token.symbol == symbol:
                    self._by_token[(src, dst, token.address)] = slot
                    self._by_token[(src, dst, token.address.lower())] = slot
        self._kink = scenario.pricing.utilization_kink_bps
        self._premium_max = scenario.pricing.premium_max_bps
        self._quote_head = f"qt_{seed}_"
        self._borrow_head = f"bq_{seed}_"

    # -- pricing ------------------------------------------------------------------------------

    def _route(
        self, src_chain: int, dst_chain: int, token: str, src_token: str | None
    ) -> RouteSlot:
        try:
            route = self._by_token.get((src_chain, dst_chain, token))
        except TypeError:  # an unhashable argument; named by _resolve
            route = None
        if route is None:
            route = self._resolve(src_chain, dst_chain, token)
        if src_token is not None and src_token != route.src_token:
            if not isinstance(src_token, str):
                raise InvalidArgument("src_token", "must be a token address")
            if src_token.lower() != route.src_token.lower():
                raise NoRoute(
                    "src_token", f"{src_token} is not {route.symbol} on chain {src_chain}"
                )
        return route

    def _resolve(self, src_chain: int, dst_chain: int, token: str) -> RouteSlot:
        """The route for any spelling of the token address, or the error that says why not."""
        if not isinstance(token, str):
            raise InvalidArgument("token", "must be a token address")
        if type(dst_chain) is not int:
            raise InvalidArgument("dst_chain", "must be an integer chain id")
        if type(src_chain) is not int:
            raise InvalidArgument("src_chain", "must be an integer chain id")
        symbol = self._symbols.get((dst_chain, token.lower()))
        if symbol is None:
            raise NoRoute("token", f"{token} is not an onboarded token on chain {dst_chain}")
        route = self._routes.get((src_chain, dst_chain, symbol))
        if route is None:
            raise NoRoute(f"no route from chain {src_chain} to chain {dst_chain} for {symbol}")
        return route

    def _price(
        self, route: RouteSlot, amount: int, kind: str, pool: PoolSlot
    ) -> tuple[int, int, int, int]:
        """``(input, output, fee_bps, fee)`` on ``pool``; NoRoute when limits or fees fail."""
        tier = tier_fee_bps(route.tiers, amount)
        if tier is None:
            low, high = route.tiers[0][0], route.tiers[-1][1]
            raise NoRoute("amount", f"{amount} is outside the route's limits [{low}, {high}]")
        fee_bps = tier
        used = pool.reserved + pool.outstanding + amount
        # Skip the call below the kink, where the premium is 0 (most quotes).
        if self._premium_max and used * BPS > self._kink * pool.balance:
            fee_bps += premium_bps(used, pool.balance, self._kink, self._premium_max)
        if kind == EXACT_INPUT:
            input_amount, output, fee = exact_input(amount, fee_bps, route.fill_cost)
            if output <= 0:
                raise NoRoute("amount", f"{amount} does not cover the fee and the fill cost")
        else:
            input_amount, output, fee = exact_output(amount, fee_bps, route.fill_cost)
        return input_amount, output, fee_bps, fee

    def _pick(self, route: RouteSlot, pool_address: str | None) -> PoolSlot:
        """The pool with the most available liquidity, or the pool at ``pool_address`` if given."""
        pools = route.pools
        best = pools[0]
        if len(pools) > 1:
            best_free = best.balance - best.reserved - best.outstanding
            for pool in pools:
                free = pool.balance - pool.reserved - pool.outstanding
                if free > best_free:
                    best, best_free = pool, free
        if pool_address is None:
            return best
        if not isinstance(pool_address, str):
            raise InvalidArgument("pool", "must be a pool address")
        for pool in pools:
            if pool.address.lower() == pool_address.lower():
                return pool
        raise NoRoute("pool", f"no {route.symbol} pool at {pool_address} on chain {route.dst}")

    def _quote(
        self,
        src_chain: int,
        dst_chain: int,
        token: str,
        amount: int,
        now: float,
        kind: str,
        src_token: str | None,
        pool_address: str | None,
        window: int,
        hold: float | None,
        head: str,
        res_kind: str,
    ) -> ReservedQuote:
        """Every quote's steps: the clock, the request's checks, its lifetime, the pool, then
        :meth:`_offer`. Checked in this order, so a refused call names the first bad field."""
        # The hot path of the served service: the clock tick is inlined, as in
        # ReservationCore.reserve, and the route and pool found without a call when the token
        # is spelled as onboarded and the route has one pool (most requests).
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
        try:
            route = self._by_token.get((src_chain, dst_chain, token))
        except TypeError:  # an unhashable argument; named by _route
            route = None
        if route is None or src_token is not None:
            route = self._route(src_chain, dst_chain, token, src_token)
        if type(amount) is not int or amount <= 0:
            raise InvalidArgument("amount", "must be a positive integer")
        if kind != EXACT_INPUT and kind != EXACT_OUTPUT:
            check_kind(kind)
        expires = None if hold is None else _hold_until(now, hold)
        pools = route.pools
        if pool_address is None and len(pools) == 1:
            pool = pools[0]
        else:
            pool = self._pick(route, pool_address)
        return self._offer(route, pool, amount, kind, now, expires, window, head, res_kind)

    def _offer(
        self,
        route: RouteSlot,
        pool: PoolSlot,
        amount: int,
        kind: str,
        now: float,
        expires: float | None,
        window: int,
        head: str,
        res_kind: str,
    ) -> ReservedQuote:
        """Price a checked request on ``pool``, check its capacity and reserve the output
        until ``expires``, or (None: the default windows) until ``validUntil``, a whole second,
        in that second's group (see :mod:`toolkit.engine.core`). The clock is already ``now``."""
        if expires is None:
            # validUntil is a whole second and the reservation ends exactly then (the spec:
            # "after which the quote and its reservation expire"). Rounding to the nearest
            # second, not truncating, keeps the mean hold at exactly `window` seconds, which is
            # what the Erlang-B / Kaufman-Roberts mean-hold mapping assumes.
            expires = valid_until = floor(now + 0.5) + window
            grouped = True
        else:
            valid_until = floor(expires)
            grouped = False
        input_amount, output, fee_bps, fee = self._price(route, amount, kind, pool)
        reserved = pool.reserved
        free = pool.balance - reserved - pool.outstanding
        if output > free:
            raise CapacityExhausted(
                f"no pool can serve {output} {route.symbol} on chain {route.dst} now "
                f"({free} available)"
            )
        self._count = n = self._count + 1
        key = head + str(n)  # concatenation is twice as fast as a format spec here
        # tuple.__new__ skips the NamedTuple's Python-level __new__: a third of the cost.
        quote: ReservedQuote = _new(
            ReservedQuote,
            (
                key, kind, route.src, route.dst, route.symbol, route.src_token, route.dst_token,
                input_amount, output, fee_bps, fee, route.fill_cost, pool.id, pool.address,
                valid_until, expires, route.eta, window,
                route.src if res_kind is QUOTE_KIND else route.loan_repayment,
            ),
        )  # fmt: skip
        self._seq = seq = self._seq + 1
        res = [expires, seq, key, res_kind, pool, output, quote, True]
        if grouped:
            group = self._due.get(valid_until)
            if group is None:
                self._due[valid_until] = [res]
                heappush(self._heap, group_marker(valid_until, seq))
            else:
                group.append(res)
        else:
            heappush(self._heap, res)
        self._reservations[key] = res
        pool.reserved = reserved + output
        if self._keep_log:
            self._log += (now, CREATED, key, pool, output, None)
        else:
            self._log_base += 1
        return quote

    # -- fees ----------------------------------------------------------------------

    def fee_tiers(self, src_chain: int, dst_chain: int, symbol: str) -> tuple[FeeTier, ...]:
        """The route's current fee tiers; :class:`NoRoute` when it is not onboarded.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> Engine(load_scenario("default")).fee_tiers(1, 10, "USDC")[0].fee_bps
        5
        """
        route = self._routes.get((src_chain, dst_chain, symbol))
        if route is None:
            raise NoRoute(f"no route from chain {src_chain} to chain {dst_chain} for {symbol}")
        return tuple(FeeTier(fee, low, high) for low, high, fee in route.tiers)

    def set_fee_tiers(
        self, src_chain: int, dst_chain: int, symbol: str, tiers: tuple[FeeTier, ...], now: float
    ) -> None:
        """Replace a route's fee tiers and log a ``fee`` event.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import FeeTier, load_scenario
        >>> engine = Engine(load_scenario("default"))
        >>> engine.set_fee_tiers(1, 10, "USDC", (FeeTier(7, 1, 10**12),), now=0.0)
        >>> engine.events_since(0)[-1].detail
        (FeeTier(fee_bps=7, min_amount=1, max_amount=1000000000000),)
        """
        route = self._routes.get((src_chain, dst_chain, symbol))
        if route is None:
            raise NoRoute(f"no route from chain {src_chain} to chain {dst_chain} for {symbol}")
        if isinstance(tiers, list):
            tiers = tuple(tiers)
        try:
            check_tiers(tiers, "fee_tiers")
        except ScenarioError as exc:
            raise InvalidArgument(exc.path, exc.rule) from None
        if max(t.fee_bps for t in tiers) + self._premium_max >= BPS:
            raise InvalidArgument("fee_tiers", "fee plus maximum premium must be below 10000")
        self._tick(now)
        route.tiers = _tier_tuples(tiers)
        self._log_event(now, FEE, f"{src_chain}:{dst_chain}:{symbol}", None, 0, tiers)


def check_kind(kind: object) -> None:
    """Refuse a quote kind other than ExactInput and ExactOutput.

    >>> check_kind("ExactIn")
    Traceback (most recent call last):
    ...
    toolkit.engine.errors.InvalidArgument: kind: must be one of ExactInput, ExactOutput
    """
    if kind != EXACT_INPUT and kind != EXACT_OUTPUT:
        raise InvalidArgument("kind", f"must be one of {', '.join(_KINDS)}")


def _hold_until(now: float, hold: float) -> float:
    """When a quote made with an explicit ``hold`` (seconds) lapses."""
    try:
        ok = 0 < hold < _INF
    except TypeError:
        ok = False
    if not ok:
        raise InvalidArgument("hold", "must be a positive finite number of seconds")
    return now + hold


def _tier_tuples(tiers: Any) -> tuple[tuple[int, int, int], ...]:
    return tuple((t.min_amount, t.max_amount, t.fee_bps) for t in tiers)
