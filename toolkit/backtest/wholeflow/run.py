"""One whole-flow world as it steps (:class:`Run`): the engine's events, the credit book, the
solvers and the users, each surface's step one method."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import polars as pl

from toolkit.backtest.wholeflow.legs import NO_REVERTS, bps, leg
from toolkit.backtest.wholeflow.liquidators import liquidate
from toolkit.backtest.wholeflow.market import Market, genesis_ledger, scaled, shock_path
from toolkit.backtest.wholeflow.settings import (
    USDC_UNIT,
    USER,
    WETH_RULE,
    WholeFlow,
)
from toolkit.credit import DEFAULT_RULES
from toolkit.engine import (
    CapacityExhausted,
    Engine,
    FillRejected,
    NoRoute,
    Settlement,
)
from toolkit.models.cards import draw_for
from toolkit.models.routes import LEG_SCHEMA, firm_vs_indicative
from toolkit.scenario import Scenario
from toolkit.scheduler import Scheduler
from toolkit.world import EscrowOrder, World, WorldError


class Run:
    """One world's state and its per-step counters (kept apart from :func:`whole_flow` so that
    each surface's step is one method)."""

    def __init__(self, settings: WholeFlow, scenario: Scenario, seed: int) -> None:
        self.settings = settings
        s = scaled(scenario, settings.depth_scale)
        self.scenario = s
        noise = 20_000.0 * settings.depth_scale
        self.src = Market(s, genesis_ledger(s, settings.source), seed, noise)
        self.dst = Market(s, genesis_ledger(s, settings.destination), seed + 1, noise)
        self.engine = Engine(s, seed=seed, max_events=0)
        self.world = World(s, self.engine, driven=True, keep_finished=False)
        self.rng = np.random.default_rng(seed)
        self.price = self.path_price = self.src.weth_usd()
        self.path = shock_path(settings, seed, self.price)
        self.control_path = shock_path(dataclasses.replace(settings, shock=0.0), seed, self.price)
        self.inventory = 0.0  # seized WETH the liquidators have not sold yet
        self.liquidated: set[int] = set()  # accounts some call has liquidated
        self.rules = dataclasses.replace(
            DEFAULT_RULES, collateral={**DEFAULT_RULES.collateral, "weth": WETH_RULE}
        )
        self.symbol_of = {p.id: p.symbol for p in self.engine.pools(0.0)}
        self.opening = {p.id: p.balance for p in self.engine.pools(0.0)}
        self.earned = dict.fromkeys(self.opening, 0)
        # What settlements booked beyond what the pools lent, by token (input less output;
        # the fee earned under instant-free): the books' own account of the inventory's gain.
        self.gained = dict.fromkeys(self.symbol_of.values(), 0)
        # Fills, settlements and repayments, each run at its instant by its handler.
        self.scheduler = Scheduler()
        self.counts: dict[str, Any] = {}  # the step's counters the handlers add to
        self._book()
        self.rows: dict[str, list[dict[str, Any]]] = {
            k: [] for k in ("intents", "swaps", "credit", "borrow", "liquidations", "inventory")
        }
        self.users: list[dict[str, Any]] = []
        self.totals = {"drawn": 0.0, "repaid": 0.0, "liquidated": 0.0, "bad_debt": 0.0}

    # -- set-up ---------------------------------------------------------------------------

    def _book(self) -> None:
        s, rng = self.settings, self.rng
        n = s.accounts
        price = self.src.weth_usd()
        worth = s.collateral_median_usd * rng.lognormal(0.0, 0.8, n)
        share = rng.uniform(0.5, 1.0, n)
        self.weth = worth * share / price
        self.usdc = worth * (1 - share)
        self.m = (
            WETH_RULE.maintenance_ltv_bps / 1e4,
            self.rules.rule("usdc").maintenance_ltv_bps / 1e4,
        )
        self.ltv = (WETH_RULE.ltv_bps / 1e4, self.rules.rule("usdc").ltv_bps / 1e4)
        hf = 1.15 + rng.exponential(0.5, n)  # a book already drawn, some close to the line
        self.debt = (self.weth * price * self.m[0] + self.usdc * self.m[1]) / hf
        self.opening_debt = float(self.debt.sum())

    # -- engine events ----------------------------------------------------------------------

    def events_until(self, now: float, counts: dict[str, Any]) -> None:
        """Run every fill, settlement and repayment due at or before ``now``, at its instant,
        counting into ``counts`` (``now`` may be ``inf``: all of them)."""
        self.counts = counts
        self.scheduler.run(until=None if now == math.inf else now)

    def fill(self, at: float, payload: tuple[str, float, bool]) -> None:
        """The filler at an order, every second until its deadline; settled after the delay."""
        oid, deadline, weth = payload
        counts = self.counts
        try:
            fill = self.world.fill(oid, at)
        except (CapacityExhausted, FillRejected):
            if at + 1.0 <= deadline:
                self.scheduler.schedule(at + 1.0, self.fill, payload)
            else:
                counts["missed"] += 1
            return
        counts["fills"] += 1
        delay = self.scenario.windows.settlement_delay_s
        self.scheduler.schedule(at + delay, self.settle, oid)
        if weth:  # strategy (a): the swap on arrival, once the WETH has arrived
            self.user_swap(self.dst, fill.amount, at, counts)

    def settle(self, at: float, oid: str) -> None:
        """An order's settlement: the input is booked on the origin (the lending pool in place
        under instant-free) and the pool earns the fee."""
        self.earned_fee(self.world.settle(oid, at))

    def repay(self, at: float, quote_id: str) -> None:
        """A solver's loan repaid (see :meth:`borrow`)."""
        done = self.engine.settle(quote_id, at)
        self.counts["repaid_usd"] += self.usd(done.pool, done.amount)
        self.earned_fee(done)

    def earned_fee(self, done: Settlement) -> None:
        self.earned[done.pool] += done.earned
        self.gained[self.symbol_of[done.pool]] += done.credited - done.amount
        self.counts["fees_usd"] += self.usd(done.pool, done.earned)

    def usd(self, pool: str, amount: int) -> float:
        if self.symbol_of[pool] == "WETH":
            return amount / 1e18 * self.price
        return amount / USDC_UNIT

    def user_swap(self, market: Market, weth: int, now: float, counts: dict[str, Any]) -> int:
        out, slip = market.swap(
            market.weth.address.lower(), market.usdc.address.lower(), weth, now, USER
        )
        if out:
            counts["swaps"].append((out / USDC_UNIT, slip, market is self.src))
        return out

    # -- credit -----------------------------------------------------------------------------

    def health(self, price: float) -> np.ndarray:
        maint = self.weth * price * self.m[0] + self.usdc * self.m[1]
        return np.where(self.debt > 0, maint / np.where(self.debt > 0, self.debt, 1.0), np.inf)

    def cards(self, hours: float, row: dict[str, Any]) -> None:
        s, rng, price = self.settings, self.rng, self.price
        swipes = rng.poisson(s.swipes_per_h * hours, s.accounts)
        amounts = s.swipe_median_usd * rng.lognormal(0.0, s.sigma, s.accounts)
        approved = declined = 0
        drawn = 0.0
        for i in np.flatnonzero(swipes):
            draw = draw_for(int(amounts[i] * swipes[i] * USDC_UNIT), self.rules) / USDC_UNIT
            after = self.debt[i] + draw
            maint = self.weth[i] * price * self.m[0] + self.usdc[i] * self.m[1]
            capacity = self.weth[i] * price * self.ltv[0] + self.usdc[i] * self.ltv[1]
            if after <= capacity and maint / after >= s.min_health_factor:
                self.debt[i] = after
                approved += 1
                drawn += draw
            else:
                declined += 1
        repaying = (self.debt > 0) & (rng.random(s.accounts) < 1 - math.exp(-hours / s.repay_h))
        repaid = float(self.debt[repaying].sum())
        self.debt[repaying] = 0.0
        self.totals["drawn"] += drawn
        self.totals["repaid"] += repaid
        row.update(draws=approved, declines=declined, drawn_usd=drawn, repaid_usd=repaid)

    def liquidate(self, now: float, row: dict[str, Any], sold_row: dict[str, Any]) -> None:
        """The liquidators' step (:func:`~.liquidators.liquidate`)."""
        liquidate(self, now, row, sold_row)

    # -- solvers ----------------------------------------------------------------------------

    def borrow(self, now: float, hours: float, row: dict[str, Any]) -> None:
        s = self.settings
        usdc_dst = self.scenario.token(s.destination, "USDC").address
        quotes = refused = 0
        borrowed = 0.0
        for _ in range(self.rng.poisson(s.borrows_per_h * hours)):
            amount = int(s.borrow_median_usd * self.rng.lognormal(0.0, s.sigma) * USDC_UNIT)
            try:
                quote = self.engine.borrow_quote(s.source, s.destination, usdc_dst, amount, now)
            except (CapacityExhausted, NoRoute):
                refused += 1
                continue
            quotes += 1
            loan = self.engine.authorize(quote.quote_id, now)
            borrowed += loan.amount / USDC_UNIT
            self.scheduler.schedule(now + s.borrow_hold_s, self.repay, quote.quote_id)
        row.update(quotes=quotes, refused=refused, borrowed_usd=borrowed)

    # -- users ------------------------------------------------------------------------------

    def quote(self, symbol: str, amount: int, now: float, counts: dict[str, Any]) -> Any:
        """A firm intents quote source → destination (None: refused, a 404 counted)."""
        s = self.settings
        counts["rfqs"] += 1
        try:
            q = self.engine.quote(
                s.source,
                s.destination,
                self.scenario.token(s.destination, symbol).address,
                amount,
                now,
            )
        except CapacityExhausted:
            counts["no_capacity"] += 1
            return None
        except NoRoute:
            return None
        counts["quotes"] += 1
        return q

    def arrive(self, k: int, now: float, counts: dict[str, Any]) -> None:
        """One user: cost (a), (b) and (c) on the pools as they are, take the cheapest."""
        s, price = self.settings, self.path_price
        usd = s.user_median_usd * float(self.rng.lognormal(0.0, s.sigma))
        weth = int(usd / price * 1e18)
        size = weth / 1e18 * price
        src_w, src_u = self.src.weth.address.lower(), self.src.usdc.address.lower()
        dst_w, dst_u = self.dst.weth.address.lower(), self.dst.usdc.address.lower()
        gas = {m: m.ledger.base_fee * price / 1e18 for m in (self.src, self.dst)}
        q_a = self.quote("WETH", weth, now, counts)
        route_a = None if q_a is None else self.dst.route(dst_w, dst_u, q_a.output_amount, now)
        route_b = self.src.route(src_w, src_u, weth, now)
        q_b = None if route_b is None else self.quote("USDC", route_b.amount_out, now, counts)
        legs = self._legs(size, price, q_a, route_a, route_b, q_b, gas)
        costs: dict[str, float] = {}
        if legs:
            table = firm_vs_indicative(pl.DataFrame(legs, schema=LEG_SCHEMA), NO_REVERTS)
            for strategy, cost in table.select("strategy", "cost_usd").iter_rows():
                if cost is not None:
                    costs[strategy] = cost
        slip = math.nan
        if route_b is not None:
            mid = self.src.mid_out(src_w, src_u, weth)
            slip = (1 - route_b.amount_out / mid) * 10_000 if mid else math.nan
            costs["c"] = (
                size
                - route_b.amount_out / USDC_UNIT * (1 - s.bridge_bps / 1e4)
                + route_b.gas_used * gas[self.src]
            )
        choice = min(costs, key=lambda c: (costs[c], c)) if costs else None
        self.users.append(
            {
                "user": k,
                "hour": now / 3600,
                "size_usd": size,
                "cost_a_bps": bps(costs.get("a"), size),
                "cost_b_bps": bps(costs.get("b"), size),
                "cost_c_bps": bps(costs.get("c"), size),
                "source_slippage_bps": slip,
                "choice": choice,
                "intents": choice in ("a", "b"),
            }
        )
        if choice == "a":
            self.order(f"or_{k}", q_a, now, True)
        elif choice in ("b", "c"):
            self.user_swap(self.src, weth, now, counts)
            if choice == "b":
                self.order(f"or_{k}", q_b, now, False)
        counts["choices"][choice] += 1

    def _legs(
        self,
        size: float,
        price: float,
        q_a: Any,
        route_a: Any,
        route_b: Any,
        q_b: Any,
        gas: dict[Market, float],
    ) -> list[dict[str, Any]]:
        """The legs of strategies (a), intents then a destination swap, and (b), a source swap
        then intents, that the pools can serve now (see :func:`~.legs.leg`)."""
        s = self.settings
        legs: list[dict[str, Any]] = []
        eta = float(self.scenario.eta(s.source, s.destination))
        if route_a is not None:
            moved = q_a.output_amount / 1e18 * price
            legs += [
                leg("a", size, 1, "intents", "source", 0.0, size, moved, 0.0),
                leg(
                    "a",
                    size,
                    2,
                    "swap",
                    "destination",
                    eta,
                    moved,
                    route_a.amount_out / USDC_UNIT,
                    route_a.gas_used * gas[self.dst],
                ),
            ]
        if route_b is not None:
            swapped = route_b.amount_out / USDC_UNIT
            legs.append(
                leg(
                    "b",
                    size,
                    1,
                    "swap",
                    "source",
                    0.0,
                    size,
                    swapped,
                    route_b.gas_used * gas[self.src],
                )
            )
            legs.append(
                leg(
                    "b",
                    size,
                    2,
                    "intents",
                    "source",
                    0.0,
                    swapped,
                    None if q_b is None else q_b.output_amount / USDC_UNIT,
                    0.0,
                )
            )
        return legs

    def order(self, oid: str, quote: Any, now: float, weth: bool) -> None:
        """Convert the quote, escrow the order; the filler comes back after the ``eta``."""
        s = self.settings
        self.engine.convert(quote.quote_id, oid, now)
        order = EscrowOrder.from_quote(oid, quote, now, self.scenario, USER)
        try:
            self.world.deposit(order, now)
        except WorldError:
            return
        eta = self.scenario.eta(s.source, s.destination)
        self.scheduler.schedule(now + eta, self.fill, (oid, order.fill_deadline, weth))
