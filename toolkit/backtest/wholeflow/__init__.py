"""The whole flow in one backtest: card spenders, solvers, cross-chain users and liquidators on
one world and one virtual clock, so the surfaces meet.

Every step (``step_seconds`` of virtual time) of :func:`whole_flow`:

1. **Prices.** The WETH reference price (:func:`~toolkit.world.chain.flow.reference_path`, times
   a drawdown of ``shock`` spread over ``shock_hours`` from ``shock_at``) is brought to the pools
   of both chains by arbitrage (:class:`~toolkit.world.chain.flow.BackgroundTraders`).
2. **Engine events** due since the last step run at their own instants: intents fills (the
   service's filler, once the quote's ``eta`` has passed), settlements (the fee joins the pool),
   solvers' repayments, and the swap on arrival of users whose intents order just filled.
3. **Credit.** The oracle reads the credit chain's deepest USDC/WETH pool. Accounts holding WETH
   and USDC collateral swipe cards (Poisson, log-normal USD amounts): the draw that delivers the
   swipe after its fee (:func:`~toolkit.models.cards.draw_for`) is approved when the health
   factor after it stays at least ``min_health_factor`` and the LTV capacity covers it; indebted
   accounts repay at rate ``1 / repay_hours``. Accounts under a health factor of 1 are liquidated
   exactly as :func:`toolkit.credit.liquidation` says, and the liquidators sell the seized WETH
   through the chain's pools (a real route, :func:`~toolkit.world.swap.find_route`, executed on
   the ledger); the oracle takes the pools' new price and the next round sees it, as in
   :func:`~toolkit.models.cascade.liquidation_cascade`.
4. **Solvers** borrow pool liquidity (:meth:`~toolkit.engine.Engine.borrow_quote`, then
   :meth:`~toolkit.engine.Engine.authorize`) and repay ``borrow_hold_seconds`` later: the same
   pools the intents orders reserve from.
5. **Users** holding WETH on the source chain and wanting USDC on the destination cost three
   ways out, on the pools as they are now: (a) an intents order of the WETH, then a swap on
   arrival; (b) a swap on the source, then an intents order of the USDC; (c) the same swap, then
   a canonical bridge at ``bridge_bps`` (no intents). The two intents strategies are costed by
   :func:`~toolkit.models.routes.firm_vs_indicative` from firm quotes (each RFQ reserves, as the
   service's do: a refused one is a 404 and drops its strategy) and routes at the pools' state;
   the cheapest way is taken. A swap executes on the pools and moves them.

The liquidators sell where the users swap, so a liquidation wave moves the credit chain's pools
into their thin ranges just as users arrive; :func:`interactions` measures what that does to
depth, slippage and the users' choice, and :func:`whole_flow_seeds` runs a shocked world against
its no-shock control (same seed: common random numbers) over several seeds.

>>> result = whole_flow(WholeFlow(hours=0.5, shock_at=0.2, shock_hours=0.1), seed=3)
>>> result.credit.height == result.intents.height == 15, result.summary["users"] > 0
(True, True)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from heapq import heappop, heappush
from typing import Any, Final

import numpy as np
import polars as pl

from toolkit.arguments import ArgumentError, fraction, number, whole
from toolkit.credit import DEFAULT_RULES, CollateralRule, liquidation
from toolkit.engine import CapacityExhausted, Engine, FillRejected, NoRoute, OrderTerms
from toolkit.models.cards import draw_for
from toolkit.models.routes import firm_vs_indicative
from toolkit.progress import progress_bar
from toolkit.scenario import Scenario, load_scenario
from toolkit.world import EscrowOrder, World, WorldError
from toolkit.world.chain import Chains
from toolkit.world.chain.amm import V3PoolContract
from toolkit.world.chain.contracts import ERC20, Revert
from toolkit.world.chain.flow import BackgroundTraders, reference_path
from toolkit.world.chain.ledger import Ledger
from toolkit.world.chain.markets import market_for
from toolkit.world.swap import NoSwapRoute, find_route, mid_price, venues_of

__all__ = [
    "WHOLE_FLOW_METRICS",
    "WholeFlow",
    "WholeFlowResult",
    "interactions",
    "whole_flow",
    "whole_flow_seeds",
]

#: Where the ledgers' clocks start (engine time is seconds from 0, ledger time this plus that).
GENESIS: Final = 1_760_000_000.0
#: The simulated user, liquidator and solver (one address each: balances are not modelled).
USER: Final = "0x" + "a2" * 20
LIQUIDATOR: Final = "0x" + "a3" * 20
#: ETH collateral under the volatile-vault parameters (LTV 55 %, maintenance 70 %, bonus 8 %).
WETH_RULE: Final = CollateralRule("weth", "volatile", 5500, 7000, 800)
_USDC_UNIT: Final = 10**6
_MAX_ROUNDS: Final = 5

#: The summary metrics :func:`whole_flow_seeds` reports with confidence bands.
WHOLE_FLOW_METRICS: tuple[str, ...] = (
    "users",
    "intents_share",
    "rfq_404_rate",
    "fees_usd",
    "swap_slippage_bps",
    "liquidations",
    "collateral_sold_usd",
    "bad_debt_usd",
    "min_health_factor",
    "borrowed_usd",
)


@dataclass(frozen=True)
class WholeFlow:
    """The world's settings (module docstring); every field is checked when built.

    ``shock`` is the drawdown (``-0.3``: the price ends 30 % lower; 0: the control),
    ``shock_at`` where it starts as a share of the horizon. ``depth_scale`` scales every AMM
    pool of the scenario (a market about the size one credit book's liquidations matter to)."""

    hours: float = 3.0
    step_seconds: float = 120.0
    shock: float = -0.3
    shock_at: float = 0.4
    shock_hours: float = 0.25
    volatility: float = 0.6
    depth_scale: float = 0.1
    source: int = 8453
    destination: int = 1
    users_per_hour: float = 16.0
    user_median_usd: float = 30_000.0
    bridge_bps: float = 3.0
    accounts: int = 300
    collateral_median_usd: float = 60_000.0
    swipes_per_hour: float = 0.3
    swipe_median_usd: float = 80.0
    min_health_factor: float = 1.3
    repay_hours: float = 48.0
    borrows_per_hour: float = 20.0
    borrow_median_usd: float = 50_000.0
    borrow_hold_seconds: float = 300.0
    sigma: float = 0.9

    def __post_init__(self) -> None:
        number(self.hours, "hours", above=0, maximum=24 * 7)
        number(self.step_seconds, "step_seconds", minimum=12)
        number(self.shock, "shock", above=-1, below=1)
        fraction(self.shock_at, "shock_at")
        number(self.shock_hours, "shock_hours", above=0)
        number(self.volatility, "volatility", minimum=0)
        number(self.depth_scale, "depth_scale", above=0)
        whole(self.source, "source", minimum=1)
        whole(self.destination, "destination", minimum=1)
        if self.source == self.destination:
            raise ArgumentError("destination", "a chain other than the source", self.destination)
        for name in ("users_per_hour", "swipes_per_hour", "borrows_per_hour", "bridge_bps"):
            number(getattr(self, name), name, minimum=0)
        for name in (
            "user_median_usd",
            "collateral_median_usd",
            "swipe_median_usd",
            "repay_hours",
            "borrow_median_usd",
            "borrow_hold_seconds",
        ):
            number(getattr(self, name), name, above=0)
        whole(self.accounts, "accounts", minimum=1)
        number(self.min_health_factor, "min_health_factor", minimum=1)
        number(self.sigma, "sigma", minimum=0)

    @property
    def steps(self) -> int:
        """Steps in the horizon."""
        return max(1, round(self.hours * 3600 / self.step_seconds))

    def phase(self, hour: float) -> str:
        """``before``, ``during`` (the drawdown and one more ``shock_hours``) or ``after``."""
        start = self.shock_at * self.hours
        if hour < start:
            return "before"
        return "during" if hour < start + 2 * self.shock_hours else "after"


@dataclass(frozen=True)
class WholeFlowResult:
    """Per-step frames per surface (``step``, ``hour`` first), one row per user, the summary."""

    settings: WholeFlow
    seed: int
    intents: pl.DataFrame
    swaps: pl.DataFrame
    credit: pl.DataFrame
    borrow: pl.DataFrame
    liquidations: pl.DataFrame
    users: pl.DataFrame
    summary: dict[str, Any]

    def interactions(self) -> pl.DataFrame:
        """:func:`interactions` of this run."""
        return interactions(self)


def _shock_path(settings: WholeFlow, seed: int, start: float) -> list[float]:
    base = reference_path(
        settings.steps,
        start=start,
        volatility=settings.volatility,
        step_seconds=settings.step_seconds,
        seed=seed,
    )
    begin = settings.shock_at * settings.hours
    out = []
    for i, price in enumerate(base):
        hour = (i + 1) * settings.step_seconds / 3600
        done = min(1.0, max(0.0, (hour - begin) / settings.shock_hours))
        out.append(price * (1.0 + settings.shock) ** done)
    return out


def _scaled(scenario: Scenario, scale: float) -> Scenario:
    pools = tuple(
        dataclasses.replace(p, depth_usd=max(1, round(p.depth_usd * scale)))
        for p in scenario.amm.pools
    )
    return dataclasses.replace(scenario, amm=dataclasses.replace(scenario.amm, pools=pools))


class _Market:
    """One chain's pools: prices, depth, and swaps executed on the ledger."""

    def __init__(self, scenario: Scenario, ledger: Ledger, seed: int) -> None:
        market = market_for(scenario, ledger.chain_id)
        if market is None:
            raise ArgumentError("scenario", f"AMM pools on chain {ledger.chain_id}", scenario.name)
        self.ledger = ledger
        self.weth = market.tokens["WETH"]
        self.usdc = market.tokens["USDC"]
        self.traders = BackgroundTraders(ledger, seed=seed, noise_trades=1, noise_usd=20_000.0)
        self.main = max(
            (c for c in self.traders.pools.values() if isinstance(c, V3PoolContract)),
            key=lambda c: c.spec.depth_usd if {"WETH", "USDC"} == _symbols(c) else -1,
        )

    def weth_usd(self) -> float:
        """WETH in USD at the deepest USDC/WETH pool's mid (the oracle)."""
        return self.traders.mid_price_usd(self.main.spec.label)

    def depth_usd(self, move: float = 0.02) -> float:
        """USDC the deepest pool pays for WETH sold until its price is ``move`` lower."""
        pool = self.main.pool
        weth_is_0 = self.main.spec.token0.symbol == "WETH"
        factor = (1 - move) if weth_is_0 else 1 / (1 - move)
        limit = int(pool.sqrt_price_x96 * math.sqrt(factor))
        amount0, amount1 = pool.quote(weth_is_0, 2**200, limit)
        return -(amount1 if weth_is_0 else amount0) / _USDC_UNIT

    def route(self, token_in: str, token_out: str, amount: int, now: float) -> Any:
        """The route for ``amount`` (None: the pools cannot take it)."""
        try:
            return find_route(self.ledger, token_in, token_out, amount, now=GENESIS + now)
        except NoSwapRoute:
            return None

    def mid_out(self, token_in: str, token_out: str, amount: int) -> float:
        found = mid_price(venues_of(self.ledger), token_in, token_out)
        return 0.0 if found is None else float(found) * amount

    def swap(
        self, token_in: str, token_out: str, amount: int, now: float, who: str
    ) -> tuple[int, float]:
        """Route and execute ``amount`` on the ledger: ``(delivered, slippage_bps vs mid)``;
        ``(0, nan)`` when no route takes it or it reverts."""
        route = self.route(token_in, token_out, amount, now)
        if route is None:
            return 0, math.nan
        mid = self.mid_out(token_in, token_out, amount)
        run = self.ledger.direct(GENESIS + now)
        paying = run.state.contracts[token_in]
        receiving = run.state.contracts[token_out]
        assert isinstance(paying, ERC20) and isinstance(receiving, ERC20)
        paying.mint(run, who, amount)
        run.write(paying.allowances, (who, route.target.lower()), amount)
        before = receiving.balances.get(who, 0)
        try:
            run.call(who, route.target.lower(), bytes.fromhex(route.call_data[2:]), route.value)
        except Revert:
            run.rollback()
            return 0, math.nan
        out = receiving.balances.get(who, 0) - before
        return out, (1 - out / mid) * 10_000 if mid else math.nan


def _symbols(contract: Any) -> set[str]:
    return {contract.spec.token0.symbol, contract.spec.token1.symbol}


_FILL, _SETTLE, _REPAY = 0, 1, 2


class _Run:
    """One world's state and its per-step counters (kept apart from :func:`whole_flow` so that
    each surface's step is one method)."""

    def __init__(self, settings: WholeFlow, scenario: Scenario, seed: int) -> None:
        self.settings = settings
        s = _scaled(scenario, settings.depth_scale)
        self.scenario = s
        chains = Chains(s, genesis=GENESIS)
        self.src = _Market(s, chains.ledger(settings.source), seed)
        self.dst = _Market(s, chains.ledger(settings.destination), seed + 1)
        self.engine = Engine(s, seed=seed, max_events=0)
        self.world = World(s, self.engine, driven=True, keep_finished=False)
        self.rng = np.random.default_rng(seed)
        self.price = self.path_price = self.src.weth_usd()
        self.path = _shock_path(settings, seed, self.price)
        self.rules = dataclasses.replace(
            DEFAULT_RULES, collateral={**DEFAULT_RULES.collateral, "weth": WETH_RULE}
        )
        self.symbol_of = {p.id: p.symbol for p in self.engine.pools(0.0)}
        self.opening = {p.id: p.balance for p in self.engine.pools(0.0)}
        self.earned = dict.fromkeys(self.opening, 0)
        self.heap: list[tuple[float, int, int, Any]] = []
        self.seq = 0
        self._book()
        self.rows: dict[str, list[dict[str, Any]]] = {
            k: [] for k in ("intents", "swaps", "credit", "borrow", "liquidations")
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

    def push(self, at: float, kind: int, payload: Any) -> None:
        self.seq += 1
        heappush(self.heap, (at, self.seq, kind, payload))

    # -- engine events ----------------------------------------------------------------------

    def events_until(self, now: float, counts: dict[str, Any]) -> None:
        """Run every fill, settlement and repayment due at or before ``now``, at its instant."""
        windows = self.scenario.windows
        while self.heap and self.heap[0][0] <= now:
            at, _, kind, payload = heappop(self.heap)
            if kind == _FILL:
                oid, deadline, weth = payload
                try:
                    fill = self.world.fill(oid, at)
                except (CapacityExhausted, FillRejected):
                    if at + 1.0 <= deadline:
                        self.push(at + 1.0, _FILL, payload)
                    else:
                        counts["missed"] += 1
                    continue
                counts["fills"] += 1
                self.push(at + windows.settlement_delay_seconds, _SETTLE, oid)
                if weth:  # strategy (a): the swap on arrival, once the WETH has arrived
                    self.user_swap(self.dst, fill.amount, at, counts)
            else:
                done = self.world.settle(payload, at) if kind == _SETTLE else None
                if kind == _REPAY:
                    done = self.engine.settle(payload, at)
                    counts["repaid_usd"] += self.usd(done.pool, done.amount)
                assert done is not None
                self.earned[done.pool] += done.earned
                counts["fees_usd"] += self.usd(done.pool, done.earned)

    def usd(self, pool: str, amount: int) -> float:
        if self.symbol_of[pool] == "WETH":
            return amount / 1e18 * self.price
        return amount / _USDC_UNIT

    def user_swap(self, market: _Market, weth: int, now: float, counts: dict[str, Any]) -> int:
        out, slip = market.swap(
            market.weth.address.lower(), market.usdc.address.lower(), weth, now, USER
        )
        if out:
            counts["swaps"].append((out / _USDC_UNIT, slip, market is self.src))
        return out

    # -- credit -----------------------------------------------------------------------------

    def health(self, price: float) -> np.ndarray:
        maint = self.weth * price * self.m[0] + self.usdc * self.m[1]
        return np.where(self.debt > 0, maint / np.where(self.debt > 0, self.debt, 1.0), np.inf)

    def cards(self, hours: float, row: dict[str, Any]) -> None:
        s, rng, price = self.settings, self.rng, self.price
        swipes = rng.poisson(s.swipes_per_hour * hours, s.accounts)
        amounts = s.swipe_median_usd * rng.lognormal(0.0, s.sigma, s.accounts)
        approved = declined = 0
        drawn = 0.0
        for i in np.flatnonzero(swipes):
            draw = draw_for(int(amounts[i] * swipes[i] * _USDC_UNIT), self.rules) / _USDC_UNIT
            after = self.debt[i] + draw
            maint = self.weth[i] * price * self.m[0] + self.usdc[i] * self.m[1]
            capacity = self.weth[i] * price * self.ltv[0] + self.usdc[i] * self.ltv[1]
            if after <= capacity and maint / after >= s.min_health_factor:
                self.debt[i] = after
                approved += 1
                drawn += draw
            else:
                declined += 1
        repaying = (self.debt > 0) & (rng.random(s.accounts) < 1 - math.exp(-hours / s.repay_hours))
        repaid = float(self.debt[repaying].sum())
        self.debt[repaying] = 0.0
        self.totals["drawn"] += drawn
        self.totals["repaid"] += repaid
        row.update(draws=approved, declines=declined, drawn_usd=drawn, repaid_usd=repaid)

    def liquidate(self, now: float, row: dict[str, Any], sold_row: dict[str, Any]) -> None:
        """Rounds of exact liquidations, the seized WETH sold through the source's pools."""
        price = before = self.src.weth_usd()
        liquidated = 0
        sold_weth = proceeds = bad = 0.0
        for _ in range(_MAX_ROUNDS):
            weak = np.flatnonzero((self.debt >= 1.0) & (self.health(price) < 1.0))
            if weak.size == 0:
                break
            sold = 0.0
            for i in weak:
                values = {
                    "weth": int(self.weth[i] * price * _USDC_UNIT),
                    "usdc": int(self.usdc[i] * _USDC_UNIT),
                }
                liq = liquidation(
                    {a: v for a, v in values.items() if v},
                    int(self.debt[i] * _USDC_UNIT),
                    rules=self.rules,
                )
                units = min(self.weth[i], liq.seized.get("weth", 0) / _USDC_UNIT / price)
                self.weth[i] -= units
                self.usdc[i] = max(0.0, self.usdc[i] - liq.seized.get("usdc", 0) / _USDC_UNIT)
                sold += units
                self.debt[i] -= liq.repaid / _USDC_UNIT
                self.totals["liquidated"] += liq.repaid / _USDC_UNIT
                if liq.bad_debt:
                    bad += self.debt[i]
                    self.debt[i] = 0.0
                liquidated += 1
            if sold > 0:
                weth = self.src.weth.address.lower()
                out, _ = self.src.swap(
                    weth, self.src.usdc.address.lower(), int(sold * 1e18), now, LIQUIDATOR
                )
                sold_weth += sold
                proceeds += out / _USDC_UNIT
            price = self.src.weth_usd()
        self.totals["bad_debt"] += bad
        self.price = price
        hf = self.health(price)
        owed = self.debt > 0
        row.update(
            debt_usd=float(self.debt.sum()),
            min_health_factor=float(hf.min()) if owed.any() else math.nan,
            mean_health_factor=float(np.mean(np.minimum(hf[owed], 10.0)))
            if owed.any()
            else math.nan,
            accounts_below_1_1=int((hf < 1.1).sum()),
            liquidations=liquidated,
            bad_debt_usd=bad,
            oracle_usd=price,
        )
        sold_row.update(
            liquidations=liquidated,
            collateral_sold_weth=sold_weth,
            collateral_sold_usd=sold_weth * before,
            proceeds_usd=proceeds,
            price_before=before,
            price_after=price,
            impact_bps=(1 - price / before) * 10_000,
        )

    # -- solvers ----------------------------------------------------------------------------

    def borrow(self, now: float, hours: float, row: dict[str, Any]) -> None:
        s = self.settings
        usdc_dst = self.scenario.token(s.destination, "USDC").address
        quotes = refused = 0
        borrowed = 0.0
        for _ in range(self.rng.poisson(s.borrows_per_hour * hours)):
            amount = int(s.borrow_median_usd * self.rng.lognormal(0.0, s.sigma) * _USDC_UNIT)
            try:
                quote = self.engine.borrow_quote(s.source, s.destination, usdc_dst, amount, now)
            except (CapacityExhausted, NoRoute):
                refused += 1
                continue
            quotes += 1
            loan = self.engine.authorize(quote.quote_id, now)
            borrowed += loan.amount / _USDC_UNIT
            self.push(now + s.borrow_hold_seconds, _REPAY, quote.quote_id)
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
        legs: list[dict[str, Any]] = []
        eta = float(self.scenario.eta(s.source, s.destination))
        if route_a is not None:
            moved = q_a.output_amount / 1e18 * price
            legs += [
                _leg("a", size, 1, "intents", "source", 0.0, size, moved, 0.0),
                _leg(
                    "a",
                    size,
                    2,
                    "swap",
                    "destination",
                    eta,
                    moved,
                    route_a.amount_out / _USDC_UNIT,
                    route_a.gas_used * gas[self.dst],
                ),
            ]
        if route_b is not None:
            swapped = route_b.amount_out / _USDC_UNIT
            legs.append(
                _leg(
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
                _leg(
                    "b",
                    size,
                    2,
                    "intents",
                    "source",
                    0.0,
                    swapped,
                    None if q_b is None else q_b.output_amount / _USDC_UNIT,
                    0.0,
                )
            )
        costs: dict[str, float] = {}
        if legs:
            table = firm_vs_indicative(pl.DataFrame(legs, schema=_LEG_SCHEMA), _NO_REVERTS)
            for strategy, cost in table.select("strategy", "cost_usd").iter_rows():
                if cost is not None:
                    costs[strategy] = cost
        slip = math.nan
        if route_b is not None:
            mid = self.src.mid_out(src_w, src_u, weth)
            slip = (1 - route_b.amount_out / mid) * 10_000 if mid else math.nan
            costs["c"] = (
                size
                - route_b.amount_out / _USDC_UNIT * (1 - s.bridge_bps / 1e4)
                + route_b.gas_used * gas[self.src]
            )
        choice = min(costs, key=lambda c: (costs[c], c)) if costs else None
        self.users.append(
            {
                "user": k,
                "hour": now / 3600,
                "size_usd": size,
                "cost_a_bps": _bps(costs.get("a"), size),
                "cost_b_bps": _bps(costs.get("b"), size),
                "cost_c_bps": _bps(costs.get("c"), size),
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

    def order(self, oid: str, quote: Any, now: float, weth: bool) -> None:
        """Convert the quote, escrow the order; the filler comes back after the ``eta``."""
        s, windows = self.settings, self.scenario.windows
        self.engine.convert(quote.quote_id, oid, now)
        start = math.floor(now)
        deadline = start + windows.exclusive_seconds + windows.open_seconds
        terms = OrderTerms(
            quote.src_chain,
            quote.src_token,
            quote.input_amount,
            quote.dst_chain,
            quote.dst_token,
            quote.output_amount,
        )
        buffer = self.scenario.expiry_buffer(s.source, s.destination)
        order = EscrowOrder(
            oid,
            USER,
            terms,
            USER,
            deadline,
            deadline + buffer,
            self.scenario.filler,
            start + windows.exclusive_seconds,
        )
        try:
            self.world.deposit(order, now)
        except WorldError:
            return
        self.push(now + self.scenario.eta(s.source, s.destination), _FILL, (oid, deadline, weth))


def _leg(
    strategy: str,
    size: float,
    step: int,
    leg: str,
    network: str,
    delay: float,
    value_in: float,
    value_out: float | None,
    gas: float,
) -> dict[str, Any]:
    return {
        "strategy": strategy,
        "size_usd": size,
        "step": step,
        "leg": leg,
        "network": network,
        "delay_s": delay,
        "value_in_usd": value_in,
        "value_out_usd": value_out,
        "gas_usd": gas,
    }


_LEG_SCHEMA: Final = {
    "strategy": pl.String,
    "size_usd": pl.Float64,
    "step": pl.Int64,
    "leg": pl.String,
    "network": pl.String,
    "delay_s": pl.Float64,
    "value_in_usd": pl.Float64,
    "value_out_usd": pl.Float64,
    "gas_usd": pl.Float64,
}
#: Routes executed at once on the state they were quoted on do not revert.
_NO_REVERTS: Final = pl.DataFrame(
    {"network": ["source", "destination"], "delay_s": [0.0, 0.0], "revert_rate": [0.0, 0.0]}
)


def _bps(cost: float | None, size: float) -> float | None:
    return None if cost is None else cost / size * 10_000


def _step(run: _Run, i: int, now: float) -> None:
    s = run.settings
    hours = s.step_seconds / 3600
    hour = now / 3600
    run.path_price = run.path[i]
    for market in (run.src, run.dst):
        market.traders.step(GENESIS + now, run.path_price)
    run.price = run.src.weth_usd()
    counts: dict[str, Any] = {
        "rfqs": 0, "quotes": 0, "no_capacity": 0, "fills": 0, "missed": 0, "fees_usd": 0.0,
        "repaid_usd": 0.0, "swaps": [], "choices": {"a": 0, "b": 0, "c": 0, None: 0},
    }  # fmt: skip
    run.events_until(now, counts)
    credit: dict[str, Any] = {"step": i, "hour": hour}
    liq: dict[str, Any] = {"step": i, "hour": hour}
    run.cards(hours, credit)
    run.liquidate(now, credit, liq)
    borrow: dict[str, Any] = {"step": i, "hour": hour}
    run.borrow(now, hours, borrow)
    depth = run.src.depth_usd()
    for _ in range(run.rng.poisson(s.users_per_hour * hours)):
        run.arrive(len(run.users), now, counts)
    borrow["repaid_usd"] = counts.pop("repaid_usd")
    pools = [p for p in run.engine.pools(now) if p.chain == s.destination]
    held = sum(p.reserved + p.outstanding for p in pools)
    choices = counts.pop("choices")
    users = sum(choices.values())
    run.rows["intents"].append(
        {
            "step": i,
            "hour": hour,
            **{k: counts[k] for k in ("rfqs", "quotes", "no_capacity", "fills", "missed")},
            "fees_usd": counts["fees_usd"],
            "utilisation": held / max(1, sum(p.balance for p in pools)),
            "users": users,
            "intents_users": choices["a"] + choices["b"],
            "route_a": choices["a"],
            "route_b": choices["b"],
            "bridge": choices["c"],
        }
    )
    swaps = counts["swaps"]
    slips = np.array([x[1] for x in swaps if not math.isnan(x[1])])
    run.rows["swaps"].append(
        {
            "step": i,
            "hour": hour,
            "reference_usd": run.path_price,
            "source_mid_usd": run.src.weth_usd(),
            "depth_2pct_usd": depth,
            "swaps": len(swaps),
            "volume_usd": float(sum(x[0] for x in swaps)),
            "slippage_bps_mean": float(slips.mean()) if slips.size else math.nan,
            "slippage_bps_p95": float(np.percentile(slips, 95)) if slips.size else math.nan,
        }
    )
    run.rows["credit"].append(credit)
    run.rows["borrow"].append(borrow)
    run.rows["liquidations"].append(liq)


def whole_flow(
    settings: WholeFlow | None = None,
    scenario: Scenario | str = "default",
    *,
    seed: int = 0,
    progress: bool = True,
) -> WholeFlowResult:
    """Run the whole flow (module docstring) for ``settings`` (default :class:`WholeFlow`) on
    ``scenario`` (which needs AMM pools with WETH and USDC on both chains). The same seed gives
    the same frames; a progress bar counts the steps (``progress=False`` or ``TQDM_DISABLE=1``
    hides it). Orders and loans still open at the horizon are filled, settled and repaid
    after it, so the summary's pool balances are final."""
    settings = WholeFlow() if settings is None else settings
    if not isinstance(settings, WholeFlow):
        raise ArgumentError("settings", "a WholeFlow", type(settings).__name__)
    seed = whole(seed, "seed", minimum=0)
    run = _Run(settings, load_scenario(scenario, env={}), seed)
    now = 0.0
    steps = range(settings.steps)
    for i in progress_bar(steps, desc="whole flow", unit="step", enabled=progress):
        now = (i + 1) * settings.step_seconds
        _step(run, i, now)
    tail: dict[str, Any] = {
        "fills": 0,
        "missed": 0,
        "fees_usd": 0.0,
        "repaid_usd": 0.0,
        "swaps": [],
    }
    run.events_until(math.inf, tail)
    return _result(run, seed, tail)


def _result(run: _Run, seed: int, tail: dict[str, Any]) -> WholeFlowResult:
    frames = {k: pl.DataFrame(v) for k, v in run.rows.items()}
    users = pl.DataFrame(
        run.users,
        schema={
            "user": pl.Int64, "hour": pl.Float64, "size_usd": pl.Float64,
            "cost_a_bps": pl.Float64, "cost_b_bps": pl.Float64, "cost_c_bps": pl.Float64,
            "source_slippage_bps": pl.Float64, "choice": pl.String, "intents": pl.Boolean,
        },
    )  # fmt: skip
    intents, swaps, credit = frames["intents"], frames["swaps"], frames["credit"]
    closing = {p.id: p.balance for p in run.engine.pools(run.engine.clock)}
    outstanding = sum(p.outstanding for p in run.engine.pools(run.engine.clock))
    rfqs = int(intents["rfqs"].sum())
    weighted = swaps.filter(pl.col("swaps") > 0)
    counts = weighted["swaps"].to_numpy()
    means = weighted["slippage_bps_mean"].to_numpy()
    slippage = float((means * counts).sum() / counts.sum()) if weighted.height else math.nan
    during = [run.settings.phase(h) == "during" for h in swaps["hour"]]
    depths = swaps.filter(pl.Series(during))["depth_2pct_usd"].to_numpy()
    summary: dict[str, Any] = {
        "seed": seed,
        "shock": run.settings.shock,
        "steps": run.settings.steps,
        "users": users.height,
        "intents_share": float(users["intents"].cast(pl.Float64).to_numpy().mean())
        if users.height
        else math.nan,
        "rfqs": rfqs,
        "rfq_404_rate": int(intents["no_capacity"].sum()) / rfqs if rfqs else 0.0,
        "fills": int(intents["fills"].sum()) + tail["fills"],
        "fees_usd": float(intents["fees_usd"].sum()) + tail["fees_usd"],
        "swaps": int(swaps["swaps"].sum()),
        "swap_volume_usd": float(swaps["volume_usd"].sum()),
        "swap_slippage_bps": slippage,
        "depth_during_usd": float(depths.mean()) if depths.size else math.nan,
        "draws": int(credit["draws"].sum()),
        "declines": int(credit["declines"].sum()),
        "opening_debt_usd": run.opening_debt,
        "drawn_usd": run.totals["drawn"],
        "repaid_usd": run.totals["repaid"],
        "liquidated_usd": run.totals["liquidated"],
        "bad_debt_usd": run.totals["bad_debt"],
        "end_debt_usd": float(run.debt.sum()),
        "liquidations": int(credit["liquidations"].sum()),
        "collateral_sold_usd": float(frames["liquidations"]["collateral_sold_usd"].sum()),
        "min_health_factor": float(credit["min_health_factor"].min()),  # type: ignore[arg-type]
        "borrowed_usd": float(frames["borrow"]["borrowed_usd"].sum()),
        "pool_earned": dict(run.earned),
        "pool_balance_change": {k: closing[k] - run.opening[k] for k in closing},
        "outstanding_end": outstanding,
    }
    return WholeFlowResult(
        run.settings,
        seed,
        intents,
        swaps,
        credit,
        frames["borrow"],
        frames["liquidations"],
        users,
        summary,
    )


def interactions(result: WholeFlowResult) -> pl.DataFrame:
    """Where the surfaces meet, in long form (``measure``, ``group``, ``value``):

    - per phase of the shock (``before``, ``during``, ``after``; the same hours in a control
      run): the source pools' ``depth_2pct_usd`` (mean), users' ``swap_slippage_bps`` (mean per
      swap), ``liquidations`` and ``collateral_sold_usd`` (sums), ``intents_share`` of users;
    - users bucketed by the slippage a swap on the source would have cost them (quartiles of the
      run): ``intents_share`` per bucket (``q1`` the least slippage), and over all users the
      Pearson ``correlation`` of that slippage with choosing an intents route.

    >>> run = whole_flow(WholeFlow(hours=0.5, shock_at=0.2, shock_hours=0.1), seed=3)
    >>> frame = run.interactions()
    >>> sorted(frame["measure"].unique().to_list())[:2]
    ['collateral_sold_usd', 'correlation']
    """
    s = result.settings
    phase = pl.col("hour").map_elements(s.phase, return_dtype=pl.String).alias("group")
    swaps = result.swaps.with_columns(phase)
    by_phase = swaps.group_by("group", maintain_order=True).agg(
        depth_2pct_usd=pl.col("depth_2pct_usd").mean(),
        swap_slippage_bps=(pl.col("slippage_bps_mean").fill_nan(None) * pl.col("swaps")).sum()
        / pl.col("swaps").sum(),
    )
    liq = (
        result.liquidations.with_columns(phase)
        .group_by("group", maintain_order=True)
        .agg(
            liquidations=pl.col("liquidations").sum(),
            collateral_sold_usd=pl.col("collateral_sold_usd").sum(),
        )
    )
    users = result.users.with_columns(phase)
    share = users.group_by("group", maintain_order=True).agg(
        intents_share=pl.col("intents").cast(pl.Float64).mean()
    )
    phases = by_phase.join(liq, on="group", how="left").join(share, on="group", how="left")
    long = phases.unpivot(index="group", variable_name="measure").select(
        "measure", "group", pl.col("value").cast(pl.Float64)
    )
    quoted = result.users.filter(pl.col("source_slippage_bps").is_not_nan())
    rows: list[dict[str, Any]] = []
    if quoted.height >= 4:
        bucket = (
            (pl.col("source_slippage_bps").rank("ordinal") * 4 / (quoted.height + 1))
            .floor()
            .cast(pl.Int64)
        )
        buckets = (
            quoted.with_columns(bucket.alias("_q"))
            .group_by("_q")
            .agg(
                intents_share=pl.col("intents").cast(pl.Float64).mean(),
                slippage=pl.col("source_slippage_bps").mean(),
            )
            .sort("_q")
        )
        for q, value, slip in buckets.iter_rows():
            rows.append({"measure": "intents_share", "group": f"slippage q{q + 1}", "value": value})
            rows.append(
                {"measure": "source_slippage_bps", "group": f"slippage q{q + 1}", "value": slip}
            )
        corr = np.corrcoef(
            quoted["source_slippage_bps"].to_numpy(), quoted["intents"].cast(pl.Float64).to_numpy()
        )[0, 1]
        rows.append(
            {"measure": "correlation", "group": "slippage vs intents", "value": float(corr)}
        )
    extra = pl.DataFrame(
        rows, schema={"measure": pl.String, "group": pl.String, "value": pl.Float64}
    )
    return pl.concat([long, extra])


def _seed_rows(settings: WholeFlow, scenario: Scenario | str, seed: int) -> list[dict[str, Any]]:
    rows = []
    control = dataclasses.replace(settings, shock=0.0)
    for name, variant in (("shock", settings), ("control", control)):
        result = whole_flow(variant, scenario, seed=seed, progress=False)
        row: dict[str, Any] = {"run": name, "seed": seed}
        row.update({k: result.summary[k] for k in WHOLE_FLOW_METRICS})
        for measure, group, value in interactions(result).iter_rows():
            if group == "during" and measure in ("depth_2pct_usd", "swap_slippage_bps"):
                row[f"{measure}_during"] = value
        rows.append(row)
    return rows


def whole_flow_seeds(
    settings: WholeFlow | None = None,
    scenario: Scenario | str = "default",
    *,
    seeds: Sequence[int] = (0, 1, 2),
    executor: Executor | None = None,
    progress: bool = True,
) -> pl.DataFrame:
    """The shocked world and its no-shock control (same seed, same arrivals and base path) for
    every seed, through ``executor`` (anything with ``submit``; None runs here): one row per run
    and seed with the :data:`WHOLE_FLOW_METRICS` and the depth and slippage during the wave.
    :func:`bands` of it by ``run`` gives means with confidence bands, so the interaction is a
    measured difference between the runs.

    >>> from toolkit.backtest import bands
    >>> frame = whole_flow_seeds(WholeFlow(hours=0.3, shock_at=0.2, shock_hours=0.1), seeds=[1, 2])
    >>> bands(frame, ["run"], ["liquidations"])["run"].to_list()
    ['shock', 'control']
    """
    settings = WholeFlow() if settings is None else settings
    if not isinstance(settings, WholeFlow):
        raise ArgumentError("settings", "a WholeFlow", type(settings).__name__)
    if not seeds:
        raise ArgumentError("seeds", "at least one seed", seeds)
    checked = [whole(seed, "seeds[]", minimum=0) for seed in seeds]
    if executor is None:
        bar = progress_bar(checked, desc="whole flow seeds", unit="seed", enabled=progress)
        rows = [row for seed in bar for row in _seed_rows(settings, scenario, seed)]
    else:
        futures = [executor.submit(_seed_rows, settings, scenario, seed) for seed in checked]
        rows = [row for future in futures for row in future.result()]
    order = {"shock": 0, "control": 1}
    return pl.DataFrame(rows).sort(pl.col("run").replace_strict(order), "seed")
