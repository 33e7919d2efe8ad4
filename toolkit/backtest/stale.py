"""Stale routes for :meth:`toolkit.backtest.routes.RouteLab.delay_trials`: the schedule of
quotes and delayed executions block by block, and a route's calldata executed on a simulated
chain's latest state (then undone).

The schedule is pure: the lab passes in how to quote, how to move one block and how to
execute, so the loop is the same whatever moves the pools.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import polars as pl

from toolkit.arguments import number, whole
from toolkit.resources import RouteResult
from toolkit.world.evm.contracts import Execution, Revert
from toolkit.world.evm.ledger import Ledger
from toolkit.world.evm.markets import MarketToken
from toolkit.world.evm.tokens import ERC20

__all__ = ["TRIAL_SCHEMA", "USER", "TrialPlan", "execute_route"]

#: The user the lab quotes and executes for: an analytics address with no key.
USER: Final = "0x" + "a1" * 20

#: :meth:`RouteLab.delay_trials`' columns.
TRIAL_SCHEMA: Final = {
    "network": pl.String,
    "pair": pl.String,
    "size_usd": pl.Float64,
    "trial": pl.Int64,
    "cluster": pl.Int64,
    "delay_s": pl.Float64,
    "quoted_out": pl.Int128,
    "executed_out": pl.Int128,
}


@dataclass(frozen=True)
class TrialPlan:
    """When trials are quoted and executed, in blocks: ``steps`` maps blocks after the quote
    to the delay asked for (seconds), a trial is quoted every ``stride`` blocks, ``trials`` of
    them."""

    steps: Mapping[int, float]
    stride: int
    trials: int

    @classmethod
    def of(
        cls, delays_s: Sequence[float], block_time_s: float, trials: int, stride_blocks: int | None
    ) -> TrialPlan:
        """Delays rounded up to whole blocks (at least one); the stride defaults to the
        longest delay, so trials do not overlap."""
        steps = {
            max(1, math.ceil(number(d, "delays_s[]", above=0) / block_time_s)): float(d)
            for d in delays_s
        }
        longest = max(steps)
        stride = (
            longest if stride_blocks is None else whole(stride_blocks, "stride_blocks", minimum=1)
        )
        return cls(steps, stride, trials)

    @property
    def longest(self) -> int:
        """The longest delay in blocks."""
        return max(self.steps)

    @property
    def blocks(self) -> int:
        """Blocks from the first quote to the last trial's last execution."""
        return (self.trials - 1) * self.stride + self.longest

    def run(
        self,
        quote: Callable[[], RouteResult],
        move: Callable[[], float],
        execute: Callable[[RouteResult, float], int | None],
    ) -> list[dict[str, object]]:
        """Walk the blocks: ``move`` one block (it returns the new time), ``execute`` each
        pending route whose delay is due at that time, then ``quote`` the next trial when one
        is due. One row per execution: trial, cluster (trials quoted within one longest delay
        of each other), delay_s, quoted_out, executed_out."""
        longest = self.longest
        rows: list[dict[str, object]] = []
        pending: list[tuple[int, int, RouteResult]] = []  # (trial, block quoted, route)
        for now_block in range(self.blocks + 1):
            if now_block:
                now = move()
                for trial, quoted_at, route in pending:
                    delay = self.steps.get(now_block - quoted_at)
                    if delay is None:
                        continue
                    rows.append(
                        {"trial": trial, "cluster": quoted_at // longest, "delay_s": delay,
                         "quoted_out": route.amount_out_int,
                         "executed_out": execute(route, now)}
                    )  # fmt: skip
                pending = [p for p in pending if now_block - p[1] < longest]
            if now_block % self.stride == 0 and now_block // self.stride < self.trials:
                pending.append((now_block // self.stride, now_block, quote()))
        return rows


def execute_route(
    ledger: Ledger,
    route: RouteResult,
    paying_token: MarketToken,
    receiving_token: MarketToken,
    amount: int,
    now: float,
) -> int | None:
    """Send the route's calldata from a funded user on the latest state and undo it: what it
    delivered, or None when it reverted."""
    router, call_data = route.target.lower(), route.call_data
    token_in, token_out = paying_token.address.lower(), receiving_token.address.lower()
    state = ledger.state
    number_ = ledger.block_number(now)
    run = Execution(state, timestamp=ledger.block_timestamp(number_), number=number_)
    try:
        paying, receiving = state.contracts[token_in], state.contracts[token_out]
        assert isinstance(paying, ERC20) and isinstance(receiving, ERC20)
        paying.mint(run, USER, amount)
        run.write(paying.allowances, (USER, router), amount)
        before = receiving.balances.get(USER, 0)
        try:
            run.call(USER, router, bytes.fromhex(call_data[2:]), 0)
        except Revert:
            return None
        return receiving.balances.get(USER, 0) - before
    finally:
        run.rollback()
