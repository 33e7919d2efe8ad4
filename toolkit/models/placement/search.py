"""The placement search per policy (see :mod:`toolkit.models.placement`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import polars as pl

from toolkit.models.inventory import NONE, PERIODIC, THRESHOLD, Outlook, PolicyShape
from toolkit.models.placement.knapsack import choose_options, lagrangian_bound
from toolkit.models.placement.moves import (
    Memo,
    choice,
    coupling,
    evaluate,
    improve,
    options,
    repair,
)
from toolkit.models.placement.problem import Placement, PlacementProblem

__all__ = ["search_placement", "search_policy"]

Floats = npt.NDArray[np.float64]

_ROUNDS = 12


def _shape(problem: PlacementProblem, policy: str, period_s: float | None) -> PolicyShape:
    return PolicyShape(policy, period_s, problem.overshoot_share, problem.min_transfer_usd)


def _tables(
    problem: PlacementProblem, shape: PolicyShape, totals: dict[str, float], others: list[float]
) -> list[Outlook]:
    out = []
    for h, model in enumerate(problem.models):
        caps, kappas = options(problem, h, shape.policy)
        out.append(
            model.outlook(
                shape, caps, kappas, token_total_usd=totals[model.demand.token],
                others_band_usd=others[h], horizon_s=problem.horizon_s,
                capital_rate=problem.capital_rate,
            )
        )  # fmt: skip
    return out


def search_policy(
    problem: PlacementProblem, policy: str, period_s: float | None = None
) -> Placement | None:
    """The least-cost choice for one policy (see the module docstring); None when no choice on
    the grid keeps the 404 share within the bound.

    Parameters
    ----------
    problem : PlacementProblem
        The book.
    policy : str
        ``none``, ``threshold`` or ``periodic``.
    period_s : float, optional
        The period (``periodic``).

    Returns
    -------
    Placement or None
        The answer.

    Examples
    --------
    See the module docstring.
    """
    shape = _shape(problem, policy, period_s)
    budget = _budget(problem)
    choices = [options(problem, h, policy) for h in range(len(problem.models))]
    totals, others = coupling(problem, list(problem.start_usd), [0.5] * len(problem.models))
    seen: list[list[int]] = []
    for _ in range(_ROUNDS if policy == THRESHOLD else 1):
        tables = _tables(problem, shape, totals, others)
        picked = choose_options(
            [o.cost_usd for o in tables], [o.refused_rfqs for o in tables], budget
        )
        if picked is None:
            return None
        if picked in seen:
            break
        seen.append(picked)
        # Damped: halfway from the coupling assumed to the one the pick makes.
        new_totals, new_others = coupling(problem, *choice(choices, picked))
        totals = {k: 0.5 * (v + new_totals[k]) for k, v in totals.items()}
        others = [0.5 * (a + b) for a, b in zip(others, new_others, strict=True)]
    memo: Memo = {}
    scored = [(evaluate(problem, shape, choices, c, memo), c) for c in seen]
    feasible = [(cost, c) for (cost, refused), c in scored if refused <= budget]
    if feasible:
        chosen = min(feasible, key=lambda pair: pair[0])[1]
    else:  # every pick refuses too much under the coupling it makes: repair the closest
        repaired = repair(problem, shape, choices, min(scored)[1], budget, memo)
        if repaired is None:
            return None
        chosen = repaired
    if policy == THRESHOLD:
        chosen = improve(problem, shape, choices, chosen, budget, memo)
    totals, others = coupling(problem, *choice(choices, chosen))
    tables = _tables(problem, shape, totals, others)
    costs, refused = [o.cost_usd for o in tables], [o.refused_rfqs for o in tables]
    converged = policy != THRESHOLD or choose_options(costs, refused, budget) == chosen
    bound = lagrangian_bound(costs, refused, budget)
    return _placement(problem, shape, tables, chosen, converged, bound)


def _budget(problem: PlacementProblem) -> float:
    rfqs = sum(m.demand.rfq_per_s for m in problem.models) * problem.horizon_s
    return problem.max_share_404 * rfqs


def _placement(
    problem: PlacementProblem, shape: PolicyShape, tables: list[Outlook], chosen: list[int],
    converged: bool, bound: float,
) -> Placement:  # fmt: skip
    rows = []
    for h, (model, table, o) in enumerate(zip(problem.models, tables, chosen, strict=True)):
        caps, kappas = options(problem, h, shape.policy)
        rows.append(
            {
                "chain": model.demand.chain,
                "token": model.demand.token,
                "capital_usd": float(caps[o]),
                "threshold_fraction": float(kappas[o]) if shape.policy == THRESHOLD else None,
                "refused_share": float(table.refused_share[o]),
                "refused_rfqs": float(table.refused_rfqs[o]),
                "rfqs": model.demand.rfq_per_s * problem.horizon_s,
                "transfers": float(table.transfers[o]),
                "rebalanced_usd": float(table.rebalanced_usd[o]),
                "rebalancing_cost_usd": float(table.rebalancing_cost_usd[o]),
                "capital_cost_usd": float(table.capital_cost_usd[o]),
            }
        )
    frame = pl.DataFrame(rows, schema_overrides={"threshold_fraction": pl.Float64})
    rfqs = float(frame["rfqs"].sum())
    capital_cost = float(frame["capital_cost_usd"].sum())
    rebalancing = float(frame["rebalancing_cost_usd"].sum())
    return Placement(
        policy=shape.policy,
        period_s=shape.period_s,
        holdings=frame,
        share_404=float(frame["refused_rfqs"].sum()) / rfqs if rfqs else 0.0,
        cost_usd=capital_cost + rebalancing,
        capital_usd=float(frame["capital_usd"].sum()),
        capital_cost_usd=capital_cost,
        rebalancing_cost_usd=rebalancing,
        lower_bound_usd=min(bound, capital_cost + rebalancing),
        converged=converged,
        target_share_404=problem.max_share_404,
    )


def search_placement(problem: PlacementProblem) -> list[Placement]:
    """The best choice for every policy the problem searches (``none``, ``threshold`` and
    ``periodic`` at each of its periods), cheapest first; policies that cannot keep the 404
    share within the bound on the grid are left out.

    Parameters
    ----------
    problem : PlacementProblem
        The book.

    Returns
    -------
    list of Placement
        Cheapest first.

    Examples
    --------
    >>> import numpy as np
    >>> from toolkit.models.inventory import Bridging, HoldingDemand
    >>> d = HoldingDemand(1, "USDC", 0.0, 1e6, 10.0, 0.0, 0.001, 20.0, np.full(100, 5e3))
    >>> problem = PlacementProblem.build([d, d], [Bridging((14.0,), 1e-4, 0.05)] * 2,
    ...     horizon_s=86_400.0, max_share_404=0.01, capital_rate=0.035, periods_s=(3600.0,))
    >>> sorted(p.label for p in search_placement(problem))
    ['none', 'periodic 1h', 'threshold']
    """
    found = [search_policy(problem, NONE), search_policy(problem, THRESHOLD)]
    found += [search_policy(problem, PERIODIC, p) for p in problem.periods_s]
    return sorted((p for p in found if p is not None), key=lambda p: p.cost_usd)
