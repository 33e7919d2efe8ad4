"""The simulation on a virtual clock: card accounts and swipes drawn at random, answered just in
time by an :class:`~toolkit.models.cards.authorizer.Authorizer`, and the run's report."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from toolkit.arguments import ArgumentError, fraction, number, whole
from toolkit.credit import DEFAULT_RULES, ProductRules, figures
from toolkit.models.cards.authorizer import REASONS, Authorizer, Decision, card_receiver
from toolkit.models.cards.backend import CardBackend, Position, SimulatedBackend
from toolkit.models.cards.settings import Budget, Latencies
from toolkit.models.health.results import Row

__all__ = [
    "CardRun",
    "CardSummary",
    "card_accounts",
    "card_run",
    "card_swipes",
    "simulate_cards",
]

USD = 10**6


def card_accounts(
    n: int,
    *,
    seed: int = 0,
    median_collateral: int = 2_000 * USD,
    rules: ProductRules = DEFAULT_RULES,
) -> dict[str, Position]:
    """``n`` card accounts ``acct-0000``…: one or two collateral assets of the product worth
    about ``median_collateral`` (log-normal, log-sd 0.6), drawn to 0–85 % of their capacity, so
    the health factors spread from about 1.2 upwards and some swipes meet the 1.3 rule.

    >>> accounts = card_accounts(3, seed=0)
    >>> sorted(accounts)[0], all(p.figures().total_collateral_value > 0 for p in accounts.values())
    ('acct-0000', True)
    """
    whole(n, "n", minimum=0)
    whole(median_collateral, "median_collateral", minimum=1)
    rng = np.random.default_rng(whole(seed, "seed", minimum=0))
    assets = sorted(rules.collateral)
    accounts = {}
    for i in range(n):
        held = rng.choice(len(assets), size=int(rng.integers(1, 3)), replace=False)
        total = median_collateral * float(rng.lognormal(0.0, 0.6))
        shares = rng.dirichlet(np.ones(len(held)))
        values = {assets[j]: max(1, int(total * s)) for j, s in zip(held, shares, strict=True)}
        capacity = figures(values, rules=rules).total_credit_capacity
        principal = int(capacity * float(rng.uniform(0.0, 0.85)))
        accounts[f"acct-{i:04d}"] = Position(values, principal=principal)
    return accounts


def card_swipes(
    accounts: Mapping[str, Position] | Sequence[str],
    *,
    rate_per_h: float = 0.5,
    median: int = 25 * USD,
    sigma: float = 0.9,
    span_h: float = 24.0,
    retry_share: float = 0.02,
    retry_after: tuple[float, float] = (0.5, 4.0),
    seed: int = 0,
) -> pl.DataFrame:
    """Swipes on ``accounts``: Poisson arrivals at ``rate_per_h`` each over ``span_h``,
    log-normal amounts around ``median`` (smallest units; log-sd ``sigma``: a 25 USD median with
    a long tail of larger purchases), and a ``retry_share`` of them sent again with the same
    authorization id ``retry_after`` seconds later (uniform between the two bounds: the network
    retries while the first may still be in flight). Columns ``auth_id``, ``account``, ``t``
    (seconds from the start), ``amount``, ``retry``; sorted by ``t``.

    Parameters
    ----------
    accounts : mapping of str to Position, or sequence of str
        The accounts swiping (card_accounts, or names).
    rate_per_h : float
        Swipes per hour per account.
    median : int
        Median amount in smallest units.
    sigma : float
        Log-sd of the amounts.
    span_h : float
        The span in hours.
    retry_share : float
        The share of swipes the network sends again (0 to 1).
    retry_after : tuple of float
        The bounds (seconds) of a retry's delay.
    seed : int
        The random seed.

    Returns
    -------
    polars.DataFrame
        auth_id, account, t, amount, retry; sorted by t.

    Examples
    --------
    >>> swipes = card_swipes(["a", "b"], rate_per_h=10, span_h=1, seed=2)
    >>> swipes.columns, swipes["t"].is_sorted()
    (['auth_id', 'account', 't', 'amount', 'retry'], True)
    """
    names = list(accounts)
    rate = number(rate_per_h, "rate_per_h", above=0)
    whole(median, "median", minimum=1)
    number(sigma, "sigma", minimum=0)
    span = number(span_h, "span_h", above=0) * 3_600
    share = fraction(retry_share, "retry_share")
    low = number(retry_after[0], "retry_after[0]", minimum=0)
    high = number(retry_after[1], "retry_after[1]", minimum=low)
    rng = np.random.default_rng(whole(seed, "seed", minimum=0))
    counts = rng.poisson(rate * span_h, len(names))
    owners = np.repeat(np.arange(len(names)), counts)
    times = rng.uniform(0.0, span, owners.size)
    order = np.argsort(times, kind="stable")
    owners, times = owners[order], times[order]
    amounts = np.maximum(1, np.rint(median * rng.lognormal(0.0, sigma, owners.size))).astype(
        np.int64
    )
    ids = np.array([f"auth-{i:07d}" for i in range(owners.size)], dtype=object)
    again = np.flatnonzero(rng.random(owners.size) < share)
    frame = pl.DataFrame(
        {
            "auth_id": np.concatenate([ids, ids[again]]).tolist(),
            "account": [names[o] for o in np.concatenate([owners, owners[again]])],
            "t": np.concatenate([times, times[again] + rng.uniform(low, high, again.size)]),
            "amount": np.concatenate([amounts, amounts[again]]),
            "retry": np.concatenate([np.zeros(owners.size, bool), np.ones(again.size, bool)]),
        },
        schema={
            "auth_id": pl.String,
            "account": pl.String,
            "t": pl.Float64,
            "amount": pl.Int64,
            "retry": pl.Boolean,
        },
    )
    return frame.sort("t", maintain_order=True)


def check_swipes(swipes: pl.DataFrame) -> None:
    needed = ["auth_id", "account", "t", "amount"]
    missing = [c for c in needed if c not in swipes.columns]
    if missing:
        raise ArgumentError(
            "swipes", "a frame with columns auth_id, account, t, amount", swipes.columns
        )
    if swipes.height and (swipes["amount"].min() <= 0 or not swipes["t"].is_sorted()):  # type: ignore[operator]
        raise ArgumentError("swipes", "positive amounts, sorted by t", "a row that is not")


@dataclass(frozen=True)
class CardSummary(Row):
    """The figures of a card run: ``swipes`` answered, ``approved`` and ``approval_share`` of
    them (NaN with no swipes); the answers' latency ``p50_ms``, ``p99_ms`` and ``max_ms``;
    ``over_budget_share`` (answers past the budget: 0 when failing closed works);
    ``path_p99_ms`` (the path to the draw's block, budget or not); ``budget_ms``; ``drawn``
    and ``fees`` (origination) in the credit asset's smallest units; ``draws`` (transactions)
    and ``late_draws`` (landed after a declined answer).

    >>> CardSummary(2, 1, 0.5, 900.0, 1_900.0, 1_950.0, 0.0, 2_100.0, 2_000.0, 10, 0, 1, 0
    ...             ).to_frame()["approval_share"].to_list()
    [0.5]
    """

    swipes: int
    approved: int
    approval_share: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    over_budget_share: float
    path_p99_ms: float
    budget_ms: float
    drawn: int
    fees: int
    draws: int
    late_draws: int


@dataclass(frozen=True)
class CardRun:
    """A simulated run: every answer (``decisions``, one row per swipe in order; ``latency_ms``
    to the answer, ``path_ms`` to the draw's block when one was seen, even past the budget), the
    ``backend`` as it ended, and its :class:`CardSummary`."""

    decisions: pl.DataFrame
    backend: CardBackend
    summary: CardSummary

    def reasons(self) -> pl.DataFrame:
        """Answers by reason (:data:`REASONS` order), with their share of all swipes.

        >>> accounts = {"a": Position({"usdc": 10**9})}
        >>> run = simulate_cards(card_swipes(accounts, span_h=1, seed=0), accounts)
        >>> run.reasons().columns
        ['reason', 'swipes', 'share']
        """
        counts = self.decisions.group_by("reason").len("swipes")
        order = pl.DataFrame({"reason": list(REASONS), "rank": range(len(REASONS))})
        total = max(1, self.decisions.height)
        return (
            counts.join(order, on="reason", how="left")
            .sort("rank")
            .drop("rank")
            .with_columns((pl.col("swipes") / total).alias("share"))
        )


def _frame(decisions: Sequence[Decision]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "auth_id": [d.auth_id for d in decisions],
            "account": [d.account for d in decisions],
            "t": [d.arrived for d in decisions],
            "amount": [d.amount for d in decisions],
            "approved": [d.approved for d in decisions],
            "reason": [d.reason for d in decisions],
            "latency_ms": [d.latency * 1_000 for d in decisions],
            "path_ms": [
                ((d.seen if d.seen is not None and not d.replay else d.answered) - d.arrived)
                * 1_000
                for d in decisions
            ],
            "drawn": [d.drawn for d in decisions],
            "fee": [d.fee for d in decisions],
            "late": [d.late for d in decisions],
            "replay": [d.replay for d in decisions],
            "health_factor": [
                None if d.health_factor is None else float(d.health_factor) for d in decisions
            ],
        },
        schema={
            "auth_id": pl.String,
            "account": pl.String,
            "t": pl.Float64,
            "amount": pl.Int64,
            "approved": pl.Boolean,
            "reason": pl.String,
            "latency_ms": pl.Float64,
            "path_ms": pl.Float64,
            "drawn": pl.Int64,
            "fee": pl.Int64,
            "late": pl.Boolean,
            "replay": pl.Boolean,
            "health_factor": pl.Float64,
        },
    )


def latency_summary(latency_ms: np.ndarray, budget: Budget) -> dict[str, float]:
    """``p50_ms``, ``p99_ms``, ``max_ms`` of ``latency_ms`` (NaN when empty) and
    ``over_budget``, the share of them past ``budget``'s total."""
    if latency_ms.size == 0:
        return {"p50_ms": math.nan, "p99_ms": math.nan, "max_ms": math.nan, "over_budget": 0.0}
    return {
        "p50_ms": float(np.percentile(latency_ms, 50)),
        "p99_ms": float(np.percentile(latency_ms, 99)),
        "max_ms": float(latency_ms.max()),
        "over_budget": float((latency_ms > budget.total * 1_000 + 1e-6).mean()),
    }


def simulate_cards(
    swipes: pl.DataFrame,
    accounts: Mapping[str, Position],
    *,
    latencies: Latencies | None = None,
    budget: Budget | None = None,
    min_health_factor: float = 1.3,
    rules: ProductRules = DEFAULT_RULES,
    seed: int = 0,
    backend: CardBackend | None = None,
    receiver: Callable[[str], str] = card_receiver,
) -> CardRun:
    """Answer ``swipes`` (:func:`card_swipes`' columns) just in time: each through ``/info``,
    ``draw`` and the chain (module docstring). ``backend`` defaults to a
    :class:`SimulatedBackend` over ``accounts`` with ``latencies``; pass another (the loopback
    one, :class:`toolkit.client.cards.ServiceCardBackend`) to run the same authorizer against
    it, with ``receiver`` naming each account's card receiver there (an address).

    Parameters
    ----------
    swipes : polars.DataFrame
        card_swipes' columns (retry optional).
    accounts : mapping of str to Position
        Each account's position.
    latencies : Latencies, optional
        The simulated backend's step latencies.
    budget : Budget, optional
        The per-step and total time budgets (2 s in all by default).
    min_health_factor : float
        The health rule's floor (1.3).
    rules : ProductRules
        The credit product's fees and rules.
    seed : int
        The random seed of the simulated backend.
    backend : CardBackend, optional
        Another backend (e.g. toolkit.client.cards.ServiceCardBackend).
    receiver : callable
        Each account's card receiver (an address on a real backend).

    Returns
    -------
    CardRun
        Every decision (decisions), the latencies and the summary figures.

    Examples
    --------
    >>> accounts = {"a": Position({"usdc": 1_000 * 10**6}, principal=600 * 10**6)}
    >>> swipes = pl.DataFrame({"auth_id": ["x", "y"], "account": ["a", "a"], "t": [0.0, 60.0],
    ...                        "amount": [10 * 10**6, 200 * 10**6]})
    >>> simulate_cards(swipes, accounts, seed=4).decisions["reason"].to_list()
    ['approved', 'health']
    """
    check_swipes(swipes)
    lat = latencies or Latencies()
    budget = budget or Budget()
    chosen = (
        backend if backend is not None else SimulatedBackend(accounts, lat, seed=seed, rules=rules)
    )
    authorizer = Authorizer(
        chosen,
        min_health_factor=min_health_factor,
        budget=budget,
        pre=lat.pre,
        receiver=receiver,
        rules=rules,
        seed=whole(seed, "seed", minimum=0) + 1,
    )
    decisions = [
        authorizer.authorize(auth_id, account, amount, t)
        for auth_id, account, t, amount in swipes.select(
            "auth_id", "account", "t", "amount"
        ).iter_rows()
    ]
    return card_run(decisions, chosen, budget)


def card_run(decisions: Sequence[Decision], backend: CardBackend, budget: Budget) -> CardRun:
    """The :class:`CardRun` of ``decisions`` (in arrival order) answered through ``backend``
    under ``budget``: how :func:`simulate_cards` reports, and a run that drives
    :class:`Authorizer` s itself (one per account, concurrently) reports the same way.

    >>> backend = SimulatedBackend({"a": Position({"usdc": 10**9})}, seed=0)
    >>> auth = Authorizer(backend, seed=0)
    >>> run = card_run([auth.authorize("x", "a", 10**6, at=0.0)], backend, Budget())
    >>> run.summary.approved, run.summary.draws
    (1, 1)
    """
    frame = _frame(decisions)
    approved = int(frame["approved"].sum())
    latency = latency_summary(frame["latency_ms"].to_numpy(), budget)
    summary = CardSummary(
        swipes=frame.height,
        approved=approved,
        approval_share=approved / frame.height if frame.height else math.nan,
        p50_ms=latency["p50_ms"],
        p99_ms=latency["p99_ms"],
        max_ms=latency["max_ms"],
        over_budget_share=latency["over_budget"],
        path_p99_ms=float(np.percentile(frame["path_ms"].to_numpy(), 99))
        if frame.height
        else math.nan,
        budget_ms=budget.total * 1_000,
        drawn=int(frame["drawn"].sum()),
        fees=int(frame["fee"].sum()),
        draws=int((frame["drawn"] > 0).sum()),
        late_draws=int(frame["late"].sum()),
    )
    return CardRun(frame, backend, summary)
