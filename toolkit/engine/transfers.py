"""Inventory per (chain, token), rebalancing transfers and the policies that send them.

:class:`TransferBook` holds the service's inventory of each token on each chain (a
:class:`~toolkit.engine.state.HoldingSlot`: its pools there, an unallocated balance, what
settlements owe it and what bridges carry) and moves it between chains as the scenario's
``[rebalancing]`` policy says (:mod:`toolkit.scenario.rebalancing`):

- ``threshold``: checked whenever a fill, a loan or a settlement changes a chain's figures
  (:meth:`_rebalance`, O(chains)): a chain whose share of the token falls below its threshold
  is sent enough to reach its target plus the overshoot (:func:`toolkit.engine.rebalancing.
  plan_moves`), from the chains holding the most above their targets (what settlements still
  owe a source does not count: it sends only tokens it has);
- ``periodic``: every ``period_s`` (at whole multiples of it) every chain is brought back to
  its target, on the same heap as the lapses; a tick whose successor is already past (no call
  came for longer than a period) is followed by the next multiple after the clock, so an idle
  engine does not replay every missed tick;
- ``none`` and ``instant-free`` send nothing.

A chain's share is its figure (tokens on chain, plus what is in flight to it and what
settlements to come owe it: the Across relayer's "virtual balance") over the sum of the
token's figures. A transfer (:class:`~toolkit.engine.results.Transfer`, numbered 1, 2, ...)
debits the source when sent (its unallocated balance first, then the pool with the most
available liquidity, and so on), pays the bridge its fee, and credits the destination on
arrival (the pool with the largest shortfall against its opening balance, ties in scenario
order, else the unallocated balance). Arrivals are applied lazily, like lapses, in
:meth:`advance`; each debit and credit of a pool is a liquidity event.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from toolkit.engine.bridges import Bridges
from toolkit.engine.errors import InvalidArgument
from toolkit.engine.events import TRANSFER_IN, TRANSFER_OUT
from toolkit.engine.quoting import QuoteBook
from toolkit.engine.rebalancing import plan_moves
from toolkit.engine.results import Holding, Transfer
from toolkit.engine.state import HoldingSlot, PoolSlot
from toolkit.scenario import Scenario
from toolkit.scenario.rebalancing import INSTANT_FREE, PERIODIC, THRESHOLD, resolve_targets

__all__ = ["TransferBook"]


def _ceil_share(total: int, share: Fraction) -> int:
    """``ceil(total * share)``: a chain at this figure holds at least the share."""
    return -(-total * share.numerator // share.denominator)


class TransferBook(QuoteBook):
    """Holdings per (chain, token), the transfers between them and the rebalancing policy."""

    def __init__(self, scenario: Scenario, *, seed: int = 0, max_events: int | None = None) -> None:
        super().__init__(scenario, seed=seed, max_events=max_events)
        rebalancing = scenario.rebalancing
        self._policy = rebalancing.policy
        self._instant_free = rebalancing.policy == INSTANT_FREE
        self._threshold = rebalancing.policy == THRESHOLD
        targets = resolve_targets(scenario)
        self._holdings: dict[tuple[int, str], HoldingSlot] = {}
        for token in scenario.tokens:
            key = (token.chain, token.symbol)
            self._holdings[key] = HoldingSlot(token.chain, token.symbol, *targets[key])
        for pool in self._pools.values():
            holding = self._holdings[(pool.chain, pool.symbol)]
            holding.pools += (pool,)
            pool.holding = holding
        pooled = dict.fromkeys(pool.symbol for pool in self._pools.values())
        # The chains a policy moves each pooled token between, in scenario order.
        self._by_symbol = {
            symbol: tuple(h for h in self._holdings.values() if h.symbol == symbol)
            for symbol in pooled
        }
        self._overshoot = Fraction(rebalancing.overshoot_share)
        self._minimum = {symbol: self._minimum_amount(symbol) for symbol in pooled}
        moves = rebalancing.policy in (THRESHOLD, PERIODIC)
        self._bridges = Bridges(scenario, seed) if moves else None
        self._transfers: list[Transfer] = []
        self._arrivals: list[int] = []  # transfer ids, in the order they arrived
        self._period = rebalancing.period_s
        if rebalancing.policy == PERIODIC and self._period is not None:
            self._schedule(float(self._period), self._periodic, None)

    def _minimum_amount(self, symbol: str) -> int:
        """``min_transfer_usd`` in ``symbol``'s smallest units (0 without a price)."""
        usd = self.scenario.rebalancing.min_transfer_usd
        price = self.scenario.pricing.price_usd(symbol)
        if usd == 0 or price is None:
            return 0
        decimals = next(t.decimals for t in self.scenario.tokens if t.symbol == symbol)
        units = Fraction(usd) * 10**decimals / Fraction(price)
        return -(-units.numerator // units.denominator)

    # -- reads --------------------------------------------------------------------------------

    @property
    def policy(self) -> str:
        """The rebalancing policy the engine runs (the scenario's ``[rebalancing] policy``)."""
        return self._policy

    def inventory(self, now: float) -> list[Holding]:
        """The service's inventory of every scenario token on every chain at ``now``, in the
        scenario's ``[[tokens]]`` order (see :class:`~toolkit.engine.results.Holding`).

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> [(h.chain, h.on_chain) for h in Engine(load_scenario("single-pool")).inventory(0.0)]
        [(1, 0), (8453, 15000000000)]
        """
        self._tick(now)
        out = []
        for h in self._holdings.values():
            reserved = outstanding = 0
            for pool in h.pools:
                reserved += pool.reserved
                outstanding += pool.outstanding
            out.append(
                Holding(
                    h.chain,
                    h.symbol,
                    h.on_chain(),
                    h.unallocated,
                    reserved,
                    outstanding,
                    h.receivable_in,
                    h.in_flight_in,
                    h.in_flight_out,
                )
            )
        return out

    def transfers(self, now: float) -> list[Transfer]:
        """Every transfer sent so far, oldest first, ``arrived`` as of ``now``.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> Engine(load_scenario("default")).transfers(0.0)
        []
        """
        self._tick(now)
        return list(self._transfers)

    def transfers_since(self, transfer_id: int) -> list[Transfer]:
        """Transfers with an id above ``transfer_id``, oldest first, as of the engine's clock
        (call :meth:`advance` first): what was sent since a reader last looked.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> Engine(load_scenario("default")).transfers_since(0)
        []
        """
        if type(transfer_id) is not int or transfer_id < 0:
            raise InvalidArgument("transfer_id", "must be a non-negative integer")
        return self._transfers[transfer_id:]

    def arrivals_since(self, position: int) -> list[Transfer]:
        """Transfers that arrived after the first ``position`` arrivals, in arrival order, as of
        the engine's clock (call :meth:`advance` first); a reader keeps ``position`` as the
        count it has seen.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> Engine(load_scenario("default")).arrivals_since(0)
        []
        """
        if type(position) is not int or position < 0:
            raise InvalidArgument("position", "must be a non-negative integer")
        return [self._transfers[i - 1] for i in self._arrivals[position:]]

    # -- moving inventory -----------------------------------------------------------------

    def _credit(
        self, holding: HoldingSlot, amount: int, now: float, kind: str, key: str, detail: Any
    ) -> PoolSlot | None:
        """Book ``amount`` arriving on ``holding``'s chain: to its pool with the largest
        shortfall against its opening balance (ties: scenario order), else unallocated."""
        best: PoolSlot | None = None
        for pool in holding.pools:
            if best is None or pool.opening - pool.balance > best.opening - best.balance:
                best = pool
        if best is None:
            holding.unallocated += amount
        else:
            best.balance += amount
        self._log_event(now, kind, key, best, amount, detail)
        return best

    def _debit(self, holding: HoldingSlot, amount: int, now: float, key: str, detail: Any) -> None:
        """Take ``amount`` (at most what it can send) from ``holding``: its unallocated balance
        first, then the pool with the most available liquidity, then the next."""
        take = min(amount, holding.unallocated)
        if take:
            holding.unallocated -= take
            self._log_event(now, TRANSFER_OUT, key, None, take, detail)
            amount -= take
        pools = sorted(
            holding.pools, key=lambda p: -(p.balance - p.reserved - p.outstanding)
        )  # stable: ties keep scenario order
        for pool in pools:
            if amount <= 0:
                break
            take = min(amount, pool.balance - pool.reserved - pool.outstanding)
            if take > 0:
                pool.balance -= take
                self._log_event(now, TRANSFER_OUT, key, pool, take, detail)
                amount -= take

    def _send(self, src: HoldingSlot, dst: HoldingSlot, amount: int, now: float) -> None:
        """Send one transfer now; it arrives after the bridge's latency."""
        bridges = self._bridges
        assert bridges is not None  # only a policy that moves inventory sends
        symbol = src.symbol
        route = bridges.route(symbol, src.chain, dst.chain)
        fee = bridges.fee(symbol, src.chain, dst.chain, amount)
        arrives_at = now + bridges.latency(symbol, src.chain, dst.chain)
        number = len(self._transfers) + 1
        self._debit(src, amount, now, f"tr_{number}", number)
        src.in_flight_out += amount - fee
        dst.in_flight_in += amount - fee
        self._transfers.append(
            Transfer(
                number,
                symbol,
                src.chain,
                dst.chain,
                amount,
                fee,
                route.gas_usd,
                now,
                arrives_at,
                False,
                route.name,
            )
        )
        self._schedule(arrives_at, self._arrive, number)

    def _arrive(self, at: float, number: int) -> None:
        """A transfer lands (run from the heap at its arrival time)."""
        transfer = self._transfers[number - 1]
        received = transfer.amount - transfer.fee
        self._holdings[(transfer.src_chain, transfer.token)].in_flight_out -= received
        dst = self._holdings[(transfer.dst_chain, transfer.token)]
        dst.in_flight_in -= received
        self._credit(dst, received, at, TRANSFER_IN, f"tr_{number}", number)
        self._transfers[number - 1] = transfer._replace(arrived=True)
        self._arrivals.append(number)

    # -- policies ---------------------------------------------------------------------------

    def _rebalance(self, symbol: str, now: float, *, periodic: bool = False) -> None:
        """Send what the policy asks of ``symbol``'s chains now (see the module docstring)."""
        holdings = self._by_symbol[symbol]
        figures = [h.figure() for h in holdings]
        total = sum(figures)
        if total <= 0:
            return
        floor = [_ceil_share(total, h.target) for h in holdings]
        if periodic:
            trigger = goal = floor
        else:
            trigger = [_ceil_share(total, h.threshold) for h in holdings]
            if all(f >= t for f, t in zip(figures, trigger, strict=True)):
                return  # the common case: every chain within its band
            goal = [min(total, _ceil_share(total, h.target + self._overshoot)) for h in holdings]
        bridges = self._bridges
        assert bridges is not None

        def gross(s: int, d: int, arriving: int) -> int:
            return bridges.gross(symbol, holdings[s].chain, holdings[d].chain, arriving)

        def fee(s: int, d: int, amount: int) -> int:
            return bridges.fee(symbol, holdings[s].chain, holdings[d].chain, amount)

        held = [f - h.receivable_in for f, h in zip(figures, holdings, strict=True)]
        sendable = [h.sendable() for h in holdings]
        moves = plan_moves(
            figures, held, sendable, trigger, goal, floor, self._minimum[symbol], gross, fee
        )
        for s, d, amount in moves:
            self._send(holdings[s], holdings[d], amount, now)

    def _periodic(self, at: float, _: object) -> None:
        """The periodic policy's tick: every token back to its targets, then the next tick."""
        for symbol in self._by_symbol:
            self._rebalance(symbol, at, periodic=True)
        period = self._period
        assert period is not None
        following = at + period
        if following <= self._clock:
            following = (self._clock // period + 1) * period
        self._schedule(following, self._periodic, None)
