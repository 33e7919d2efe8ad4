"""Random quote/convert/fill/unfill/settle/borrow/advance sequences keep the engine's invariants,
under the threshold policy (small pools on every chain, so that transfers are sent) and under
the instant-free baseline.

Checked after every step, from the event log and the pools: reserved + outstanding <= balance
(available never negative) at every event; each reservation is released or consumed exactly
once (and is live exactly when it was neither); reserved and outstanding equal the sums their
events imply; balances change by exactly what their events say (fees repaid in place under
instant-free; settlements, credits and transfers otherwise); event ids run 1, 2, 3, ... with
non-decreasing times; the inventory's figures match the pools and the transfers in flight.
"""

import dataclasses
import itertools

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    precondition,
    rule,
)

from toolkit.engine import (
    EXACT_INPUT,
    EXACT_OUTPUT,
    Engine,
    EngineError,
    OrderTerms,
)
from toolkit.scenario import Scenario, load_scenario

# Small pools so that capacity runs out: Base USDC (two pools), Optimism WETH (one pool); the
# other USDC pools small too, so that a few fills move a chain out of its band.
SMALL = {
    "8453:USDC:usdc": 20_000 * 10**6,
    "8453:USDC:aave": 8_000 * 10**6,
    "1:USDC:usdc": 12_000 * 10**6,
    "1:USDC:aave": 4_000 * 10**6,
    "10:USDC:usdc": 9_000 * 10**6,
    "10:USDC:aave": 3_000 * 10**6,
}
USDC_AMOUNTS = st.sampled_from([10 * 10**6, 999 * 10**6, 3_000 * 10**6, 7_500 * 10**6])
ROUTES = [(1, 8453, "USDC"), (10, 8453, "USDC"), (8453, 10, "WETH"), (1, 10, "WETH")]


def _small_scenario() -> Scenario:
    base = load_scenario("default")
    pools = tuple(
        dataclasses.replace(p, balance=SMALL[p.id])
        if p.id in SMALL
        else dataclasses.replace(p, balance=3 * 10**18)
        if p.id == "10:WETH:aave_v2"
        else p
        for p in base.pools
    )
    return dataclasses.replace(base, pools=pools)


SCENARIO = _small_scenario()
CONSUMING = {"filled", "borrowed"}
#: What each event does to its pool's balance (sign of ``amount``), beyond reservations.
BALANCE_SIGN = {"settled": -1, "transfer_out": -1, "credited": 1, "transfer_in": 1}


class EngineMachine(RuleBasedStateMachine):
    quotes = Bundle("quotes")
    orders = Bundle("orders")
    borrows = Bundle("borrows")
    debts = Bundle("debts")

    scenario = SCENARIO

    def __init__(self) -> None:
        super().__init__()
        self.engine = Engine(self.scenario)
        self.now = 0.0
        self.n = 0
        self.terms: dict[str, OrderTerms] = {}

    def _amount(self, symbol: str, data: st.DataObject) -> int:
        if symbol == "USDC":
            return data.draw(USDC_AMOUNTS)
        return data.draw(st.sampled_from([5 * 10**15, 10**18, 2 * 10**18]))

    @rule(
        target=quotes,
        route=st.sampled_from(ROUTES),
        kind=st.sampled_from([EXACT_INPUT, EXACT_OUTPUT]),
        data=st.data(),
    )
    def quote(self, route, kind, data):
        src, dst, symbol = route
        token = self.scenario.token(dst, symbol).address
        try:
            q = self.engine.quote(src, dst, token, self._amount(symbol, data), self.now, kind=kind)
        except EngineError:
            return None
        return q

    @rule(target=orders, quote=consumes(quotes))
    def convert(self, quote):
        if quote is None:
            return None
        self.n += 1
        order_id = f"0x{self.n:x}"
        converted = self.engine.convert(quote.quote_id, order_id, self.now)
        src = SCENARIO.token(quote.src_chain, quote.symbol).address
        self.terms[order_id] = OrderTerms(
            quote.src_chain,
            src,
            quote.input_amount,
            quote.dst_chain,
            quote.dst_token,
            quote.output_amount,
        )
        return order_id if converted or self.n % 2 else None

    @rule(target=debts, order_id=consumes(orders), with_terms=st.booleans())
    def fill(self, order_id, with_terms):
        if order_id is None:
            return None
        try:
            self.engine.fill(order_id, self.now, self.terms[order_id] if with_terms else None)
        except EngineError:
            return None
        return order_id

    @rule(target=orders, key=consumes(debts))
    def unfill(self, key):
        """A fill's transaction reverted: the order may be filled again (from available)."""
        if key is None or key not in self.terms:
            return None  # a loan: nothing to unfill (its debt is left unsettled)
        self.engine.unfill(key, self.now)
        return key

    @rule(target=borrows, route=st.sampled_from(ROUTES), data=st.data())
    def borrow_quote(self, route, data):
        src, dst, symbol = route
        token = SCENARIO.token(dst, symbol).address
        try:
            return self.engine.borrow_quote(src, dst, token, self._amount(symbol, data), self.now)
        except EngineError:
            return None

    @rule(target=debts, quote=consumes(borrows))
    def authorize(self, quote):
        if quote is None:
            return None
        try:
            self.engine.authorize(quote.quote_id, self.now)
        except EngineError:
            return None
        return quote.quote_id

    @rule(key=consumes(debts))
    def settle(self, key):
        if key is not None:
            self.engine.settle(key, self.now)

    @rule(amount=st.integers(1, 9_000 * 10**6), lifetime=st.floats(0.1, 90.0))
    def hold(self, amount, lifetime):
        self.engine.reserve("8453:USDC:aave", amount, self.now, lifetime)

    @rule(dt=st.sampled_from([0.0, 0.5, 1.0, 14.0, 15.0, 30.0, 59.0, 60.0, 61.0]))
    def advance(self, dt):
        self.now += dt
        self.engine.advance(self.now)

    @precondition(lambda self: self.engine.last_event_id > 0)
    @invariant()
    def log_and_pools_agree(self):
        engine = self.engine
        events = engine.events_since(0)
        assert [e.id for e in events] == list(range(1, len(events) + 1))
        assert all(a.time <= b.time for a, b in itertools.pairwise(events))
        initial = {p.id: p.balance for p in self.scenario.pools}
        reserved = dict.fromkeys(initial, 0)
        outstanding = dict.fromkeys(initial, 0)
        balance = dict(initial)
        chain_of: dict[str, str] = {}  # current key -> key that created the reservation
        ended: set[str] = set()
        live_amount: dict[str, int] = {}
        for e in events:
            if e.pool is None:
                continue
            if e.kind == "created":
                assert e.key not in chain_of and e.key not in ended
                chain_of[e.key] = e.key
                live_amount[e.key] = e.amount
                reserved[e.pool] += e.amount
            elif e.kind == "rekeyed":
                origin = chain_of.pop(e.detail)
                chain_of[e.key] = origin
                live_amount[e.key] = live_amount.pop(e.detail)
            elif e.kind == "released" or e.kind in CONSUMING:
                origin = chain_of.pop(e.key)
                assert origin not in ended  # released or consumed exactly once
                ended.add(origin)
                assert live_amount.pop(e.key) == e.amount
                reserved[e.pool] -= e.amount
                if e.kind in CONSUMING:
                    outstanding[e.pool] += e.amount
            elif e.kind == "filled_direct":
                outstanding[e.pool] += e.amount
            elif e.kind == "repaid":
                outstanding[e.pool] -= e.amount
                balance[e.pool] += e.detail
                assert e.detail >= 0
            elif e.kind in ("settled", "unfilled"):
                outstanding[e.pool] -= e.amount
            if e.kind in BALANCE_SIGN:
                balance[e.pool] += BALANCE_SIGN[e.kind] * e.amount
            assert (e.reserved, e.outstanding, e.balance) == (
                reserved[e.pool],
                outstanding[e.pool],
                balance[e.pool],
            )
            assert e.available >= 0 and e.reserved + e.outstanding <= e.balance
        for key in chain_of:  # every reservation not ended is live, with its amount
            live = engine.reservation(key, self.now)
            assert live is not None and live.amount == live_amount[key]
        for pool in engine.pools(self.now):
            assert (pool.reserved, pool.outstanding, pool.balance) == (
                reserved[pool.id],
                outstanding[pool.id],
                balance[pool.id],
            )
            assert pool.available >= 0
        self._inventory_matches()

    def _inventory_matches(self) -> None:
        engine = self.engine
        pools = engine.pools(self.now)
        in_flight: dict[tuple[int, str], int] = {}
        for t in engine.transfers(self.now):
            if not t.arrived:
                key = (t.dst_chain, t.token)
                in_flight[key] = in_flight.get(key, 0) + t.amount - t.fee
        for h in engine.inventory(self.now):
            mine = [p for p in pools if (p.chain, p.symbol) == (h.chain, h.symbol)]
            held = sum(p.balance - p.outstanding for p in mine)
            assert h.on_chain == held + h.unallocated and h.unallocated >= 0
            assert h.reserved == sum(p.reserved for p in mine)
            assert h.in_flight_in == in_flight.get((h.chain, h.symbol), 0)


class InstantFreeMachine(EngineMachine):
    scenario = SCENARIO.with_policy("instant-free")


EngineMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=40, deadline=None)
TestEngineMachine = EngineMachine.TestCase
InstantFreeMachine.TestCase.settings = EngineMachine.TestCase.settings
TestInstantFreeMachine = InstantFreeMachine.TestCase
