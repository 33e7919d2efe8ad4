"""The placement search: its knapsack against enumeration, its bound, its answer against an
exhaustive grid on a small book, no improving single move under threshold; and the surrogate's
limits (Erlang-B at a constant capacity, monotone in capital, infeasible bands)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from toolkit.models.capacity import erlang_b, kaufman_roberts, kaufman_roberts_curve
from toolkit.models.inventory import Bridging, HoldingDemand, HoldingModel, PolicyShape
from toolkit.models.levels import level_curves
from toolkit.models.placement import (
    PlacementProblem,
    choose_options,
    lagrangian_bound,
    search_placement,
    search_policy,
)
from toolkit.models.placement.moves import evaluate, neighbours, options

SIZES = np.random.default_rng(3).lognormal(math.log(5e3), 1.0, 3_000)
CCTP = Bridging((10.0, 14.0, 20.0), 1e-4, 0.05)


def _demand(chain: int, token: str = "USDC", drain: float = 0.0) -> HoldingDemand:
    return HoldingDemand(chain, token, drain, 2e6, 20.0, 5e3, 0.002, 20.0, SIZES)


def _enumerated(costs: list[np.ndarray], refused: list[np.ndarray], budget: float) -> float:
    best = math.inf
    for combo in itertools.product(*(range(len(c)) for c in costs)):
        if sum(refused[h][o] for h, o in enumerate(combo)) <= budget:
            best = min(best, sum(costs[h][o] for h, o in enumerate(combo)))
    return best


def test_knapsack_matches_enumeration_on_random_books() -> None:
    rng = np.random.default_rng(11)
    for _ in range(40):
        costs = [rng.uniform(1, 10, 4) for _ in range(3)]
        refused = [rng.uniform(0, 5, 4) for _ in range(3)]
        budget = float(rng.uniform(3, 12))
        best = _enumerated(costs, refused, budget)
        # Refusals rounded up to 1/4000 of the budget lose at most 3/4000 of it.
        tight = _enumerated(costs, refused, budget * (1 - 3 / 4000))
        chosen = choose_options(costs, refused, budget)
        if chosen is None:
            assert tight == math.inf
            continue
        assert sum(refused[h][o] for h, o in enumerate(chosen)) <= budget
        cost = sum(costs[h][o] for h, o in enumerate(chosen))
        assert best - 1e-9 <= cost <= tight + 1e-9
        assert lagrangian_bound(costs, refused, budget) <= best + 1e-9


def test_kaufman_roberts_curve_is_the_recursion_at_every_capacity() -> None:
    for loads, sizes, top in [
        ([2.0, 1.0], [1, 2], 12),
        ([0.05, 0.01, 0.001], [3, 40, 400], 900),
        ([25.0, 3.0], [1, 4], 60),  # past the FFT's 20 erlangs: the recursion
    ]:
        curve = kaufman_roberts_curve(loads, sizes, top)
        weights = np.array(loads) / sum(loads)
        for c in (0, 1, top // 3, top):
            expected = float(np.dot(weights, kaufman_roberts(c, loads, sizes)))
            assert curve[c] == pytest.approx(expected, abs=1e-12)


def test_the_instant_free_limit_is_erlang_b() -> None:
    # One size of one unit held for the RFQ-to-settlement time at a capacity that never moves:
    # the surrogate's level curve is Erlang's loss formula.
    unit = 1_000.0
    demand = HoldingDemand(1, "USDC", 0.0, 0.0, 0.0, 0.0, 0.5, 22.0, np.full(10, unit))
    curve = level_curves(demand, 30 * unit, units=30)
    for servers in (5, 11, 20):
        assert curve.at(servers * unit) == pytest.approx(erlang_b(servers, 11.0), abs=1e-12)


def test_more_capital_refuses_less_and_costs_more_without_rebalancing() -> None:
    model = HoldingModel(_demand(1), CCTP, 5e6)
    caps = np.geomspace(2e4, 3e6, 12)
    out = model.outlook(
        PolicyShape("none"), caps, 0.5, token_total_usd=4e6, others_band_usd=0.0,
        horizon_s=7 * 86_400.0, capital_rate=0.035,
    )  # fmt: skip
    assert np.all(np.diff(out.refused_share) <= 1e-12)
    assert np.all(np.diff(out.cost_usd) > 0)
    assert out.transfers.sum() == 0


def test_a_threshold_band_below_the_minimum_transfer_is_infeasible() -> None:
    model = HoldingModel(_demand(1), CCTP, 5e6)
    shape = PolicyShape("threshold", overshoot_share=0.0, min_transfer_usd=50_000.0)
    out = model.outlook(shape, np.array([60_000.0, 60_000.0]), np.array([0.5, 0.1]),
                        token_total_usd=2e5, others_band_usd=1e5, horizon_s=86_400.0,
                        capital_rate=0.035)  # fmt: skip
    # A band of 30,000 is never topped up; one of 54,000 is.
    assert math.isinf(out.cost_usd[0]) and math.isfinite(out.cost_usd[1])


def _small_problem() -> PlacementProblem:
    demands = [_demand(1), _demand(10, drain=0.5), _demand(8453, drain=-0.5)]
    return PlacementProblem.build(
        demands, [CCTP] * 3, horizon_s=7 * 86_400.0, max_share_404=0.01, capital_rate=0.035,
        overshoot_share=0.02, min_transfer_usd=1000.0, periods_s=(4 * 3600.0,), ratio=1.6,
    )  # fmt: skip


def test_none_search_equals_an_exhaustive_grid() -> None:
    problem = _small_problem()
    found = search_policy(problem, "none")
    assert found is not None
    tables = [
        m.outlook(PolicyShape("none"), g, 0.0, token_total_usd=1.0, others_band_usd=0.0,
                  horizon_s=problem.horizon_s, capital_rate=problem.capital_rate)
        for m, g in zip(problem.models, problem.grids, strict=True)
    ]  # fmt: skip
    budget = 0.01 * sum(m.demand.rfq_per_s for m in problem.models) * problem.horizon_s
    best = math.inf
    for combo in itertools.product(*(range(len(g)) for g in problem.grids)):
        if sum(t.refused_rfqs[o] for t, o in zip(tables, combo, strict=True)) <= budget:
            best = min(best, sum(t.cost_usd[o] for t, o in zip(tables, combo, strict=True)))
    assert found.cost_usd == pytest.approx(best, rel=1e-9)
    assert found.lower_bound_usd <= found.cost_usd


def test_threshold_answer_has_no_improving_single_move() -> None:
    problem = _small_problem()
    found = search_policy(problem, "threshold")
    assert found is not None and found.share_404 <= 0.01
    shape = PolicyShape("threshold", None, 0.02, 1000.0)
    choices = [options(problem, h, "threshold") for h in range(3)]
    chosen = [
        int(np.flatnonzero((choices[h][0] == c) & (np.isclose(choices[h][1], k)))[0])
        for h, (c, k) in enumerate(
            found.holdings.select("capital_usd", "threshold_fraction").rows()
        )
    ]
    budget = 0.01 * sum(m.demand.rfq_per_s for m in problem.models) * problem.horizon_s
    cost, refused = evaluate(problem, shape, choices, chosen)
    assert cost == pytest.approx(found.cost_usd) and refused <= budget
    for h in range(3):
        for o in neighbours(problem, "threshold", h, chosen[h]):
            trial = [*chosen[:h], o, *chosen[h + 1 :]]
            c, r = evaluate(problem, shape, choices, trial)
            assert r > budget or c >= cost - 1e-9


def test_search_gives_every_policy_cheapest_first() -> None:
    found = search_placement(_small_problem())
    assert [p.label for p in found] == sorted(
        (p.label for p in found),
        key=lambda label: next(p.cost_usd for p in found if p.label == label),
    )
    assert {p.policy for p in found} == {"none", "threshold", "periodic"}
    assert all(p.share_404 <= 0.01 + 1e-12 for p in found)


def test_bad_problem_input_is_named() -> None:
    with pytest.raises(ValueError, match="bridgings"):
        PlacementProblem.build([_demand(1)], [], horizon_s=1.0, max_share_404=0.1, capital_rate=0.0)
    with pytest.raises(ValueError, match="max_share_404"):
        PlacementProblem.build([_demand(1)], [CCTP], horizon_s=1.0, max_share_404=1.5,
                               capital_rate=0.0)  # fmt: skip
    with pytest.raises(ValueError, match="policy"):
        PolicyShape("instant-free")
