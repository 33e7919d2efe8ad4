"""Single moves of the placement search under threshold, where the holdings are coupled: each
choice is scored with the token totals and bands it makes itself (:func:`evaluate`); the search
repairs a choice that refuses too much (:func:`repair`) and takes cost-lowering moves while one
exists (:func:`improve`), so its answer has no improving single move.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from toolkit.models.inventory import THRESHOLD, PolicyShape
from toolkit.models.placement.problem import PlacementProblem

__all__ = ["Memo", "choice", "coupling", "evaluate", "improve", "neighbours", "options", "repair"]

Floats = npt.NDArray[np.float64]
#: Each holding's (cost, refused RFQs) by option and coupling, kept across moves.
Memo = dict[tuple[int, int, float, float], tuple[float, float]]
# Grid steps of capital a single move may take.
_REACH = 3


def options(problem: PlacementProblem, h: int, policy: str) -> tuple[Floats, Floats]:
    """Holding ``h``'s options: capital levels, and under threshold every κ for each."""
    grid = problem.grids[h]
    if policy != THRESHOLD:
        return grid, np.zeros_like(grid)
    caps, kappas = np.meshgrid(grid, np.asarray(problem.kappas), indexing="ij")
    return caps.ravel(), kappas.ravel()


def coupling(
    problem: PlacementProblem, capital: Sequence[float], kappa: Sequence[float]
) -> tuple[dict[str, float], list[float]]:
    """The token totals and, per holding, the other holdings' bands ``Σ (1 − κ)·C``."""
    tokens = [m.demand.token for m in problem.models]
    totals: dict[str, float] = {}
    bands: dict[str, float] = {}
    for token, c, k in zip(tokens, capital, kappa, strict=True):
        totals[token] = totals.get(token, 0.0) + c
        bands[token] = bands.get(token, 0.0) + (1 - k) * c
    others = [bands[t] - (1 - k) * c for t, c, k in zip(tokens, capital, kappa, strict=True)]
    return totals, others


def choice(
    options: list[tuple[Floats, Floats]], picked: list[int]
) -> tuple[list[float], list[float]]:
    capital = [float(options[h][0][o]) for h, o in enumerate(picked)]
    kappa = [float(options[h][1][o]) for h, o in enumerate(picked)]
    return capital, kappa


def evaluate(
    problem: PlacementProblem, shape: PolicyShape, options: list[tuple[Floats, Floats]],
    picked: list[int], memo: Memo | None = None,
) -> tuple[float, float]:  # fmt: skip
    """Cost and refused RFQs of one choice, each holding under the coupling the choice makes
    (``memo`` keeps each holding's figures by option and coupling)."""
    capital, kappa = choice(options, picked)
    totals, others = coupling(problem, capital, kappa)
    known = {} if memo is None else memo
    cost = refused = 0.0
    for h, model in enumerate(problem.models):
        key = (h, picked[h], totals[model.demand.token], others[h])
        if key not in known:
            out = model.outlook(
                shape, np.array([capital[h]]), np.array([kappa[h]]),
                token_total_usd=key[2], others_band_usd=key[3],
                horizon_s=problem.horizon_s, capital_rate=problem.capital_rate,
            )  # fmt: skip
            known[key] = (float(out.cost_usd[0]), float(out.refused_rfqs[0]))
        cost += known[key][0]
        refused += known[key][1]
    return cost, refused


def neighbours(problem: PlacementProblem, policy: str, h: int, o: int) -> list[int]:
    """Options one holding can move to: capital up to 3 grid steps either way, κ one step."""
    n_kappa = len(problem.kappas) if policy == THRESHOLD else 1
    cap, k = divmod(o, n_kappa)
    out = []
    for dc in range(-_REACH, _REACH + 1):
        for dk in (-1, 0, 1):
            c2, k2 = cap + dc, k + dk
            if (dc or dk) and 0 <= c2 < len(problem.grids[h]) and 0 <= k2 < n_kappa:
                out.append(c2 * n_kappa + k2)
    return out


def repair(
    problem: PlacementProblem, shape: PolicyShape, options: list[tuple[Floats, Floats]],
    chosen: list[int], budget: float, memo: Memo,
) -> list[int] | None:  # fmt: skip
    """Single moves that refuse less, the most refusals saved per dollar first, until the
    choice is feasible; None when no move refuses less."""
    cost, refused = evaluate(problem, shape, options, chosen, memo)
    while refused > budget:
        best: tuple[float, list[int], float, float] | None = None
        for h in range(len(chosen)):
            for o in neighbours(problem, shape.policy, h, chosen[h]):
                trial = [*chosen[:h], o, *chosen[h + 1 :]]
                c, r = evaluate(problem, shape, options, trial, memo)
                if r < refused and math.isfinite(c):
                    value = (refused - r) / max(c - cost, 1e-9)
                    if best is None or value > best[0]:
                        best = (value, trial, c, r)
        if best is None:
            return None
        _, chosen, cost, refused = best
    return chosen


def improve(
    problem: PlacementProblem, shape: PolicyShape, options: list[tuple[Floats, Floats]],
    chosen: list[int], budget: float, memo: Memo,
) -> list[int]:  # fmt: skip
    """Single moves (one holding's capital or κ), each scored with the coupling it makes,
    taken while one lowers the cost and stays feasible."""
    best_cost, _ = evaluate(problem, shape, options, chosen, memo)
    improved = True
    while improved:
        improved = False
        for h in range(len(chosen)):
            for o in neighbours(problem, shape.policy, h, chosen[h]):
                trial = [*chosen[:h], o, *chosen[h + 1 :]]
                cost, refused = evaluate(problem, shape, options, trial, memo)
                if refused <= budget and cost < best_cost - 1e-9:
                    chosen, best_cost, improved = trial, cost, True
    return chosen
