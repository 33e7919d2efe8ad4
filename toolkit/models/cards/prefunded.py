"""Just in time against pre-funded: the same swipes answered from a receiver kept funded by auto
top-up (:mod:`toolkit.models.topup`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from toolkit.arguments import number, whole
from toolkit.credit import BPS, DEFAULT_RULES, ProductRules
from toolkit.models.cards.backend import Position
from toolkit.models.cards.settings import Budget, Latencies
from toolkit.models.cards.simulation import (
    USD,
    CardSummary,
    check_swipes,
    latency_summary,
    simulate_cards,
)
from toolkit.models.topup import simulate_topups

__all__ = ["compare_prefunded"]


def compare_prefunded(
    swipes: pl.DataFrame,
    accounts: Mapping[str, Position],
    *,
    threshold: int = 100 * USD,
    target_balance: int = 250 * USD,
    latencies: Latencies | None = None,
    budget: Budget | None = None,
    min_health_factor: float = 1.3,
    idle_rate: float = 0.05,
    gas_per_transaction: int = 10_000,
    rules: ProductRules = DEFAULT_RULES,
    seed: int = 0,
) -> pl.DataFrame:
    """The same swipes answered just in time (:func:`simulate_cards`) and from a receiver
    pre-funded by auto top-up (:func:`toolkit.models.topup.simulate_topups` per account with
    (``threshold``, ``target_balance``, ``min_health_factor``)): the pre-funded path only checks
    the program's signature and reads the receiver's balance (``latencies.pre`` and
    ``.balance``, failing closed like the other), approving when the balance covers the amount.
    The top-ups draw within the health rule; a retry answers from the idempotency store.

    One row per approach: ``swipes``, ``approved``, ``approval_share``, latency ``p50_ms`` and
    ``p99_ms``, ``over_budget``, ``draws`` (transactions), ``drawn``, ``fees`` (origination),
    ``gas`` (``gas_per_transaction`` each, 0.01 USDC by default), ``idle_cost`` (the pre-funded
    balance's carrying cost at ``idle_rate`` a year) and ``cost``, amounts in smallest units.

    Parameters
    ----------
    swipes : polars.DataFrame
        card_swipes' columns.
    accounts : mapping of str to Position
        Each account's position.
    threshold, target_balance : int
        The pre-funded receiver's top-up config (smallest units).
    latencies, budget, min_health_factor, rules, seed
        As for simulate_cards.
    idle_rate : float
        The annual carrying cost of the pre-funded balance.
    gas_per_transaction : int
        Each draw transaction's cost in smallest units.

    Returns
    -------
    polars.DataFrame
        One row per approach (just-in-time, pre-funded) with the columns above.

    Examples
    --------
    >>> from toolkit.models.cards import card_accounts, card_swipes
    >>> accounts = card_accounts(10, seed=2)
    >>> table = compare_prefunded(card_swipes(accounts, span_h=4, seed=2), accounts, seed=2)
    >>> table["approach"].to_list()
    ['just-in-time', 'pre-funded']
    """
    check_swipes(swipes)
    config = _Config(
        whole(threshold, "threshold", minimum=0),
        whole(target_balance, "target_balance", minimum=threshold),
        min_health_factor,
        number(idle_rate, "idle_rate", minimum=0),
        whole(gas_per_transaction, "gas_per_transaction", minimum=0),
        rules,
    )
    lat = latencies or Latencies()
    budget = budget or Budget()
    jit = simulate_cards(
        swipes,
        accounts,
        latencies=lat,
        budget=budget,
        min_health_factor=min_health_factor,
        rules=rules,
        seed=seed,
    )
    rows = [
        _jit_row(jit.summary, gas_per_transaction),
        _prefunded(swipes, accounts, lat, budget, config, seed),
    ]
    table = pl.DataFrame(rows)
    return table.with_columns((pl.col("fees") + pl.col("gas") + pl.col("idle_cost")).alias("cost"))


@dataclass(frozen=True)
class _Config:
    """The pre-funded receiver's top-up config and what its draws cost."""

    threshold: int
    target_balance: int
    min_health_factor: float
    idle_rate: float
    gas: int
    rules: ProductRules


def _jit_row(s: CardSummary, gas: int) -> dict[str, Any]:
    """The just-in-time row of the comparison, from its run's summary."""
    return {
        "approach": "just-in-time",
        "swipes": s.swipes,
        "approved": s.approved,
        "approval_share": s.approval_share,
        "p50_ms": s.p50_ms,
        "p99_ms": s.p99_ms,
        "over_budget": s.over_budget_share,
        "draws": s.draws,
        "drawn": s.drawn,
        "fees": s.fees,
        "gas": s.draws * gas,
        "idle_cost": 0.0,
    }


def _prefunded(
    swipes: pl.DataFrame,
    accounts: Mapping[str, Position],
    lat: Latencies,
    budget: Budget,
    config: _Config,
    seed: int,
) -> dict[str, Any]:
    """The pre-funded row: each swipe checked and answered from the receiver's balance."""
    frame, latency = _checks(swipes, lat, budget, seed)
    first = frame.unique("auth_id", keep="first", maintain_order=True)
    offered = first.filter(pl.col("reason") == "")
    reasons = dict(zip(first["row"].to_list(), first["reason"].to_list(), strict=True))
    totals = _top_ups(offered, accounts, config, reasons)
    by_id = {
        auth_id: reasons[row] for auth_id, row in zip(first["auth_id"], first["row"], strict=True)
    }
    answers = [by_id[a] for a in frame["auth_id"].to_list()]
    approved = sum(r == "approved" for r in answers)
    n = swipes.height
    lat_summary = latency_summary(latency * 1_000, budget)
    return {
        "approach": "pre-funded",
        "swipes": n,
        "approved": approved,
        "approval_share": approved / n if n else math.nan,
        "p50_ms": lat_summary["p50_ms"],
        "p99_ms": lat_summary["p99_ms"],
        "over_budget": lat_summary["over_budget"],
        "draws": totals["draws"],
        "drawn": totals["drawn"],
        "fees": totals["fees"],
        "gas": totals["draws"] * config.gas,
        "idle_cost": totals["idle_cost"],
    }


def _checks(
    swipes: pl.DataFrame, lat: Latencies, budget: Budget, seed: int
) -> tuple[pl.DataFrame, np.ndarray]:
    """The pre-funded path's checks (signature, then the receiver's balance read, failing
    closed): the swipes with the ``reason`` a check refused them for (empty: passed) and their
    ``row``, and each answer's latency in seconds."""
    rng = np.random.default_rng(seed + 2)
    n = swipes.height
    pre = lat.pre.sample(rng, n)
    read = lat.balance.sample(rng, n)
    error = rng.random(n) < lat.balance_error
    timeout = read > budget.balance
    latency = np.minimum(pre + np.minimum(read, budget.balance), budget.total)  # fail closed
    reason = np.where(error & ~timeout, "balance_error", np.where(timeout, "balance_timeout", ""))
    frame = swipes.select("auth_id", "account", "t", "amount").with_columns(
        pl.Series("reason", reason), pl.int_range(pl.len()).alias("row")
    )
    return frame, latency


def _top_ups(
    offered: pl.DataFrame,
    accounts: Mapping[str, Position],
    config: _Config,
    reasons: dict[int, str],
) -> dict[str, Any]:
    """Run each account's auto top-up over the spends that passed the checks, setting each
    one's reason in ``reasons`` (approved, or receiver_balance); the top-ups' totals."""
    totals: dict[str, Any] = {"draws": 0, "drawn": 0, "fees": 0, "idle_cost": 0.0}
    for (account,), spends in offered.group_by(["account"], maintain_order=True):
        position = accounts.get(str(account), Position({}))  # unknown: nothing to draw on
        value = sum(position.values.values())
        maintenance = _weighted(position, config.rules, "maintenance_ltv_bps")
        if value == 0 or maintenance == 0:  # nothing to draw on: no top-up, every spend fails
            for row in spends["row"].to_list():
                reasons[row] = "receiver_balance"
            continue
        run = simulate_topups(
            spends.select("t", "amount"),
            collateral_value=value,
            maintenance_ltv=maintenance / value,
            ltv=min(_weighted(position, config.rules, "ltv_bps"), maintenance) / value,
            threshold=config.threshold,
            target_balance=config.target_balance,
            min_health_factor=config.min_health_factor,
            principal=position.principal + position.interest,
            idle_rate=config.idle_rate,
            gas_per_top_up=config.gas,
            rules=config.rules,
        )
        declined = run.events["declined"].to_list()[1:]  # row 0: the top-up at enabling
        for row, no in zip(spends["row"].to_list(), declined, strict=True):
            reasons[row] = "receiver_balance" if no else "approved"
        totals["draws"] += run.summary.top_ups
        totals["drawn"] += run.summary.drawn
        totals["fees"] += run.summary.fees
        totals["idle_cost"] += run.summary.idle_cost
    return totals


def _weighted(position: Position, rules: ProductRules, attribute: str) -> float:
    return sum(v * getattr(rules.rule(a), attribute) / BPS for a, v in position.values.items())
