"""Auto top-up policy: the operator's draws for a spending receiver, and the cheapest config.

The operator contract tops a whitelisted receiver up from the account's credit line. The rule
modelled here, for one receiver with config (``threshold``, ``target_balance``,
``min_health_factor``): after each spend that leaves the balance below ``threshold``, the operator
draws so that what is delivered (the draw less its 0.5 % origination fee, :mod:`toolkit.credit`)
brings the balance back to ``target_balance``; a draw that would exceed the remaining credit
capacity or take the health factor below ``min_health_factor`` shrinks to the largest one
allowed, or is skipped. A spend larger than the balance is declined. Repayments are outside the
model (the principal only grows), so a config is judged on one billing cycle.

Amounts are integers in the credit asset's smallest units; times are seconds.

>>> spends = spending(rate_per_d=4, median=40 * 10**6, sigma=0.5, span_d=30, seed=1)
>>> run = simulate_topups(spends, collateral_value=10_000 * 10**6, maintenance_ltv=0.925,
...                       ltv=0.9, threshold=200 * 10**6, target_balance=400 * 10**6)
>>> run.summary.declined, run.summary.top_ups > 10
(0, True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from toolkit.arguments import ArgumentError, number, whole
from toolkit.credit import DAY, DEFAULT_RULES, YEAR, ProductRules
from toolkit.models.health.results import Row

__all__ = ["TopUpRun", "TopUpSummary", "cheapest_config", "simulate_topups", "spending"]


def spending(
    *, rate_per_d: float, median: int, sigma: float, span_d: float, seed: int = 0
) -> pl.DataFrame:
    """Card spends: Poisson arrivals at ``rate_per_d``, log-normal amounts around ``median``
    (smallest units) with log-sd ``sigma``; columns ``t`` (seconds) and ``amount``.

    Parameters
    ----------
    rate_per_d : float
        Mean spends per day, positive.
    median : int
        Median spend in smallest units, positive.
    sigma : float
        Log-sd of the spend amounts, at least 0.
    span_d : float
        The span in days, positive.
    seed : int
        The random seed.

    Returns
    -------
    polars.DataFrame
        Columns t (seconds, sorted) and amount (Int64, smallest units).

    Examples
    --------
    >>> spending(rate_per_d=10, median=25 * 10**6, sigma=0.4, span_d=1, seed=3).columns
    ['t', 'amount']
    """
    number(rate_per_d, "rate_per_d", above=0)
    whole(median, "median", minimum=1)
    number(sigma, "sigma", minimum=0)
    number(span_d, "span_d", above=0)
    rng = np.random.default_rng(whole(seed, "seed", minimum=0))
    count = rng.poisson(rate_per_d * span_d)
    times = np.sort(rng.uniform(0, span_d * DAY, count))
    amounts = np.maximum(1, np.rint(median * rng.lognormal(0.0, sigma, count))).astype(np.int64)
    return pl.DataFrame({"t": times, "amount": amounts})


@dataclass(frozen=True)
class TopUpSummary(Row):
    """The figures of one simulated config: ``top_ups``, ``drawn`` and ``fees`` (smallest
    units), ``declined`` spends, ``idle`` (the time-weighted mean balance), ``idle_cost`` (what
    that balance costs at ``idle_rate``, annual), ``gas`` (``gas_per_top_up`` per top-up: each
    is a transaction; 0.01 USDC by default, an L2 transfer's cost), ``cost`` (fees, idle cost
    and gas) and ``min_health_factor`` (at the end: the principal only grows)."""

    top_ups: int
    drawn: int
    fees: int
    declined: int
    idle: float
    idle_cost: float
    gas: int
    cost: float
    min_health_factor: float


@dataclass(frozen=True)
class TopUpRun:
    """One simulated config: every spend (``events``) and its :class:`TopUpSummary`. The first
    row of ``events`` (``t`` 0, no spend) is the top-up made when the operator is enabled."""

    events: pl.DataFrame
    summary: TopUpSummary


def simulate_topups(
    spends: pl.DataFrame,
    *,
    collateral_value: int,
    maintenance_ltv: float,
    ltv: float,
    threshold: int,
    target_balance: int,
    min_health_factor: float = 1.0,
    balance: int = 0,
    principal: int = 0,
    idle_rate: float = 0.05,
    gas_per_top_up: int = 10_000,
    rules: ProductRules = DEFAULT_RULES,
) -> TopUpRun:
    """Replay ``spends`` (``t``, ``amount``) against one auto top-up config (module docstring).

    ``collateral_value`` is the account's collateral in credit units, weighted by
    ``maintenance_ltv`` for the health factor and by ``ltv`` for capacity (fractions).

    Parameters
    ----------
    spends : polars.DataFrame
        Card spends: t (seconds) and amount (smallest units), e.g. spending().
    collateral_value : int
        The account's collateral value in credit units (smallest units).
    maintenance_ltv, ltv : float
        The collateral weights (fractions) for the health factor and for capacity.
    threshold, target_balance : int
        The config: top up below threshold, back to target_balance (smallest units).
    min_health_factor : float
        The health floor a draw may not cross (at least 1).
    balance, principal : int
        The receiver's balance and the account's principal at the start.
    idle_rate : float
        The annual carrying cost of an idle balance (a fraction).
    gas_per_top_up : int
        Each top-up transaction's cost in smallest units.
    rules : ProductRules
        The credit product's fees and rules.

    Returns
    -------
    TopUpRun
        Every spend (events) and the summary figures (TopUpRun).

    Examples
    --------
    >>> spends = pl.DataFrame({"t": [60.0], "amount": [250 * 10**6]})
    >>> run = simulate_topups(spends, collateral_value=10**10, maintenance_ltv=0.925, ltv=0.9,
    ...                       threshold=100 * 10**6, target_balance=300 * 10**6)
    >>> run.events["balance"].to_list(), run.summary.top_ups
    ([300000000, 300000000], 2)
    """
    whole(collateral_value, "collateral_value", minimum=0)
    number(maintenance_ltv, "maintenance_ltv", above=0, maximum=1)
    number(ltv, "ltv", minimum=0, maximum=maintenance_ltv)
    number(min_health_factor, "min_health_factor", minimum=1)
    whole(balance, "balance", minimum=0)
    whole(principal, "principal", minimum=0)
    number(idle_rate, "idle_rate", minimum=0)
    whole(gas_per_top_up, "gas_per_top_up", minimum=0)
    if spends.columns[:2] != ["t", "amount"]:
        raise ArgumentError("spends", "a frame with columns t and amount", spends.columns)
    policy = _Policy(
        whole(threshold, "threshold", minimum=0),
        whole(target_balance, "target_balance", minimum=threshold),
        # the largest debt the config allows: capacity, and the health floor
        min(
            int(collateral_value * ltv),
            int(collateral_value * maintenance_ltv / min_health_factor),
        ),
        rules,
    )
    events, idle = _replay(spends, policy, balance, principal)
    end = float(events["t"][-1])
    idle_cost = idle * idle_rate * end / YEAR
    fees = int(events["fee"].sum())
    top_ups = int((events["draw"] > 0).sum())
    principal = int(events["principal"][-1])
    summary = TopUpSummary(
        top_ups=top_ups,
        drawn=int(events["draw"].sum()),
        fees=fees,
        declined=int(events["declined"].sum()),
        idle=float(idle),
        idle_cost=float(idle_cost),
        gas=top_ups * gas_per_top_up,
        cost=fees + idle_cost + top_ups * gas_per_top_up,
        min_health_factor=(
            collateral_value * maintenance_ltv / principal if principal else float("inf")
        ),
    )
    return TopUpRun(events, summary)


@dataclass(frozen=True)
class _Policy:
    """One config's top-up rule: below ``threshold``, draw back to ``target_balance``
    delivered, the debt kept within ``ceiling``."""

    threshold: int
    target_balance: int
    ceiling: int
    rules: ProductRules

    def top_up(self, balance: int, principal: int) -> tuple[int, int]:
        """The draw (and its fee) the operator makes at ``balance`` with ``principal`` owed."""
        if balance >= self.threshold:
            return 0, 0
        wanted = self.target_balance - balance
        keep = 10_000 - self.rules.origination_fee_bps
        draw = -(-wanted * 10_000 // keep)  # delivered >= wanted
        draw = max(0, min(draw, self.ceiling - principal))
        return draw, self.rules.draw_fee(draw)


def _replay(
    spends: pl.DataFrame, policy: _Policy, balance: int, principal: int
) -> tuple[pl.DataFrame, float]:
    """Every spend against ``policy`` from ``balance`` and ``principal``: the events (row 0
    the top-up at enabling) and the time-weighted mean balance (the last balance when no time
    passes)."""
    rows: list[tuple[float, int, bool, int, int, int, int]] = []
    draw, fee = policy.top_up(balance, principal)  # the operator tops up as soon as enabled
    principal, balance = principal + draw, balance + draw - fee
    rows.append((0.0, 0, False, draw, fee, balance, principal))
    idle_area, last_t = 0.0, 0.0
    for t, amount in spends.select("t", "amount").iter_rows():
        idle_area += balance * (t - last_t)
        last_t = t
        declined = amount > balance
        if not declined:
            balance -= amount
        draw, fee = policy.top_up(balance, principal)
        principal, balance = principal + draw, balance + draw - fee
        rows.append((t, amount, declined, draw, fee, balance, principal))
    events = pl.DataFrame(
        rows,
        schema=["t", "amount", "declined", "draw", "fee", "balance", "principal"],
        orient="row",
    )
    return events, idle_area / last_t if last_t > 0 else float(balance)


def cheapest_config(
    spends: pl.DataFrame,
    *,
    thresholds: Iterable[int],
    targets: Sequence[int],
    collateral_value: int,
    maintenance_ltv: float,
    ltv: float,
    min_health_factor: float = 1.0,
    idle_rate: float = 0.05,
    gas_per_top_up: int = 10_000,
) -> pl.DataFrame:
    """Every (threshold, target) of the grid with its cost and declines, cheapest first among
    the configs that keep the spending funded (no declined spend).

    Parameters
    ----------
    spends : polars.DataFrame
        Card spends: t (seconds) and amount (smallest units), e.g. spending().
    thresholds : iterable of int
        The thresholds to try (smallest units).
    targets : sequence of int
        The target balances to try; pairs with a target below the threshold are skipped.
    collateral_value : int
        The account's collateral value in credit units (smallest units).
    maintenance_ltv, ltv : float
        The collateral weights (fractions) for the health factor and for capacity.
    min_health_factor, idle_rate, gas_per_top_up : float, float, int
        As for simulate_topups.

    Returns
    -------
    polars.DataFrame
        One row per config: ``threshold, target_balance, funded, cost, fees, idle, top_ups,
        declined`` (the run's figures, smallest units), funded ones first, cheapest first.

    Examples
    --------
    >>> spends = spending(rate_per_d=4, median=40 * 10**6, sigma=0.5, span_d=30, seed=1)
    >>> grid = cheapest_config(spends, thresholds=[50 * 10**6, 200 * 10**6],
    ...     targets=[200 * 10**6, 500 * 10**6], collateral_value=10_000 * 10**6,
    ...     maintenance_ltv=0.925, ltv=0.9)
    >>> grid.columns[:4], grid["funded"][0]
    (['threshold', 'target_balance', 'funded', 'cost'], True)
    """
    rows = []
    for threshold in thresholds:
        for target in targets:
            if target < threshold:
                continue
            run = simulate_topups(
                spends,
                collateral_value=collateral_value,
                maintenance_ltv=maintenance_ltv,
                ltv=ltv,
                threshold=threshold,
                target_balance=target,
                min_health_factor=min_health_factor,
                idle_rate=idle_rate,
                gas_per_top_up=gas_per_top_up,
            )
            s = run.summary
            rows.append(
                (threshold, target, s.declined == 0, s.cost, s.fees, s.idle, s.top_ups,
                 s.declined)
            )  # fmt: skip
    frame = pl.DataFrame(
        rows,
        schema=["threshold", "target_balance", "funded", "cost", "fees", "idle", "top_ups",
                "declined"],
        orient="row",
    )  # fmt: skip
    return frame.sort(["funded", "cost"], descending=[True, False])
