"""How much capital where, and which rebalancing policy: the least cost for a 404 share ≤ x.

The cost over a horizon ``T`` is the capital's opportunity cost at an annual rate plus what
rebalancing pays (bridge fees and the source transactions' gas); the constraint is the share of
RFQs refused over ``T``, both from the surrogate (:class:`~toolkit.models.inventory.
HoldingModel`). The choices are, per (chain, token) holding, its capital (a geometric grid,
:func:`capital_grid`) and, under ``threshold``, its threshold as a share of its target
(``κ``); and for the whole book the policy: ``none``, ``threshold``, or ``periodic`` at each
period of :attr:`PlacementProblem.periods_s`.

How it is searched, per policy. Given the token totals (which set the overshoot) and the other
holdings' bands (which bound a holding's excess), the holdings are independent: each option
has a cost and an expected count of refused RFQs, and the book must refuse at most ``x`` of its
RFQs. That is a multiple-choice knapsack, solved exactly by dynamic programming over the refusal
budget cut into 4,000 steps (each option's refusals rounded *up* to a step, so the answer is
feasible; the rounding gives up at most ``holdings / 4000`` of the budget). Under ``threshold``
the totals and bands depend on the answer: the search repeats from the answer's totals until
the answer stops changing (a fixed point; ``converged`` says whether it did in 8 rounds).

How we know it is the optimum of the surrogate on the grid: the dynamic programme is exact on
the rounded problem; the Lagrangian bound ``max_λ Σ_h min_o (cost + λ·refused) − λ·budget``
(:attr:`Placement.lower_bound_usd`) is a lower bound on any feasible choice, so
``cost_usd − lower_bound_usd`` bounds what a finer budget could still save; the tests check the
answer against an exhaustive enumeration on a small book and that no single change of one
holding's option (capital or threshold) lowers the cost while feasible. How good the surrogate
is, is for the seeded replays to say (:mod:`toolkit.backtest.placement`).

>>> import numpy as np
>>> from toolkit.models.inventory import Bridging, HoldingDemand
>>> demand = HoldingDemand(10, "USDC", 0.0, 2e6, 20.0, 0.0, 0.001, 20.0,
...     np.random.default_rng(1).lognormal(np.log(5e3), 1.0, 2_000))
>>> problem = PlacementProblem.build([demand, demand], [Bridging((14.0,), 1e-4, 0.05)] * 2,
...     horizon_s=7 * 86_400.0, max_share_404=0.01, capital_rate=0.035)
>>> found = search_placement(problem)
>>> [p.label for p in found][:3], all(p.share_404 <= 0.01 for p in found)
(['none', 'periodic 24h', 'threshold'], True)
"""

from toolkit.models.placement.knapsack import BUDGET_STEPS, choose_options, lagrangian_bound
from toolkit.models.placement.problem import Placement, PlacementProblem, capital_grid
from toolkit.models.placement.search import search_placement, search_policy

__all__ = [
    "BUDGET_STEPS",
    "Placement",
    "PlacementProblem",
    "capital_grid",
    "choose_options",
    "lagrangian_bound",
    "search_placement",
    "search_policy",
]
