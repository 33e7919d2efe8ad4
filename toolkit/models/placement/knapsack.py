"""The multiple-choice knapsack behind the placement search: one option per holding, the least
total cost with the refused RFQs within a budget; and its Lagrangian lower bound.

>>> costs = [np.array([1.0, 2.0, 4.0]), np.array([1.0, 3.0])]
>>> refused = [np.array([5.0, 2.0, 0.0]), np.array([4.0, 0.0])]
>>> choose_options(costs, refused, 6.5), round(float(lagrangian_bound(costs, refused, 6.5)), 3)
([1, 0], 2.823)
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["BUDGET_STEPS", "choose_options", "lagrangian_bound"]

Floats = npt.NDArray[np.float64]

#: Steps the refusal budget is cut into by the dynamic programme.
BUDGET_STEPS = 4000


def choose_options(costs: list[Floats], refused: list[Floats], budget: float) -> list[int] | None:
    """One option per holding with the least total cost and total refusals within ``budget``.

    Exact dynamic programming on the budget cut into :data:`BUDGET_STEPS` steps, each option's
    refusals rounded *up* to a step: the answer is feasible, and what the rounding gives up is
    at most ``holdings / BUDGET_STEPS`` of the budget.

    Parameters
    ----------
    costs, refused : list of numpy.ndarray
        Per holding, each option's cost (``inf``: not allowed) and expected refusals.
    budget : float
        The largest total refusals.

    Returns
    -------
    list of int or None
        The option of each holding; None when no choice fits.

    Examples
    --------
    See the module docstring.
    """
    steps = BUDGET_STEPS
    best = np.zeros(steps + 1)
    picks: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]] = []
    for cost, ref in zip(costs, refused, strict=True):
        weight = (
            np.ceil(ref / budget * steps - 1e-9) if budget > 0 else np.where(ref > 0, steps + 1, 0)
        )
        usable = np.flatnonzero(np.isfinite(cost) & (weight <= steps))
        new = np.full(steps + 1, np.inf)
        pick = np.full(steps + 1, -1, dtype=np.int64)
        for o in usable[np.argsort(cost[usable], kind="stable")]:
            w = int(weight[o])
            candidate = best[: steps + 1 - w] + cost[o]
            better = candidate < new[w:]
            new[w:] = np.where(better, candidate, new[w:])
            pick[w:] = np.where(better, o, pick[w:])
        picks.append((pick, weight.astype(np.int64)))
        best = new
    if not np.isfinite(best[steps]):
        return None
    chosen, m = [], steps
    for pick, weight in reversed(picks):
        o = int(pick[m])
        chosen.append(o)
        m -= int(weight[o])
    return chosen[::-1]


def lagrangian_bound(costs: list[Floats], refused: list[Floats], budget: float) -> float:
    """A lower bound on the cost of any feasible choice: ``max_λ Σ_h min_o (cost + λ·refused)
    − λ·budget`` (weak duality: a bound at every ``λ ≥ 0``; the largest over 0 and a log grid
    from 1e-6 to 1e9 is kept).

    Parameters
    ----------
    costs, refused : list of numpy.ndarray
        As for :func:`choose_options`.
    budget : float
        The largest total refusals.

    Returns
    -------
    float
        The bound.

    Examples
    --------
    See the module docstring.
    """
    finite = [(c[np.isfinite(c)], r[np.isfinite(c)]) for c, r in zip(costs, refused, strict=True)]
    bound = -math.inf
    for lam in np.concatenate([[0.0], np.geomspace(1e-6, 1e9, 301)]):
        value = sum(float(np.min(c + lam * r)) for c, r in finite) - lam * budget
        bound = max(bound, value)
    return bound
