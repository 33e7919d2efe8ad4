"""How much capital where, and which rebalancing policy: the search on the surrogate, then the
best candidates replayed on the engine over seeds.

:func:`plan_capital` answers "the least cost for a 404 share ≤ x over a horizon":

1. estimate what the flow asks of each holding from a long seeded flow (``estimate_days``, a
   seed of its own): net flow with its 95 % interval (:func:`toolkit.models.netflow.net_flow`),
   the RFQs, their sizes and holds (:func:`toolkit.backtest.placement.holding_demands`);
2. search every policy on the surrogate (:func:`toolkit.models.placement.search_placement`);
3. replay the ``top`` cheapest candidates on the engine over ``seeds`` (fresh flows, the same
   flows for every candidate: common random numbers) and report the 404 share and the cost
   measured, each with its mean and 95 % Student-t interval over the seeds
   (:func:`verify_placements`);
4. (``refine``) search each replayed policy again with the bound divided by the surrogate's
   bias measured on its replays (measured over predicted 404 share), and replay that answer
   too: one step of correcting the surrogate by the simulation it stands for.

The cost is the same in both: the capital's opportunity cost at ``capital_rate`` a year over
the span, plus rebalancing (bridge fees and gas). A candidate is *verified* when the upper end
of its measured 404 share's interval is within the bound.

>>> plan = plan_capital("default", horizon_h=24.0, max_share_404=0.02, estimate_days=7,
...     seeds=(1, 2), top=1, refine=False)
>>> plan.verified.select("label", "seeds").row(0)[1]
2
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from toolkit.arguments import number, whole
from toolkit.backtest.placement import (
    holding_bridgings,
    holding_demands,
    holding_keys,
    placement_scenario,
    token_usd,
)
from toolkit.backtest.replay import replay
from toolkit.backtest.seeds import bands
from toolkit.flows import generate_flow
from toolkit.models.inventory import THRESHOLD, YEAR_S
from toolkit.models.netflow import net_flow, requested_orders
from toolkit.models.placement import (
    Placement,
    PlacementProblem,
    search_placement,
    search_policy,
)
from toolkit.scenario import Scenario, load_scenario

__all__ = ["CapitalPlan", "placement_capital", "plan_capital", "verify_placements"]

#: The annual opportunity rate of capital: Aave v3 USDC on Ethereum, one-year average supply
#: APR 3.54 % (aavescan.com, ethereum-v3 USDC, read March 2026).
DEFAULT_CAPITAL_RATE = 0.035
_METRICS = ("share_404", "cost_usd", "rebalancing_cost_usd", "transfers", "net_return_pct")


@dataclass(frozen=True)
class CapitalPlan:
    """What :func:`plan_capital` found: every policy's best candidate on the surrogate
    (``candidates``, cheapest first), the replays of the best (``verified``: one row per
    candidate, metrics' means and 95 % intervals over ``seeds``), the net flow per holding the
    surrogate drained with (``net_flow``: with intervals, over the estimation flow) and the
    search's CPU seconds."""

    candidates: tuple[Placement, ...]
    verified: pl.DataFrame
    net_flow: pl.DataFrame
    search_s: float

    def best(self) -> Placement | None:
        """The cheapest verified candidate (None when no replayed candidate verified)."""
        ok = self.verified.filter(pl.col("verified")).sort("cost_usd_mean")
        if ok.height == 0:
            return None
        label = ok["label"][0]
        return next(p for p in self.candidates if p.label == label)


def placement_capital(scenario: Scenario, placement: Placement) -> dict[tuple[int, str], int]:
    """A placement's capital per holding in smallest units (rounded down; at least one unit per
    pool, which :func:`~toolkit.backtest.placement.placement_scenario` needs).

    >>> import polars as pl
    >>> from toolkit.models.placement import Placement
    >>> p = Placement("none", None, pl.DataFrame({"chain": [8453], "token": ["WETH"],
    ...     "capital_usd": [1500.0]}), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, True)
    >>> placement_capital(load_scenario("default"), p)
    {(8453, 'WETH'): 500000000000000000}
    """
    out = {}
    for chain, token, usd in placement.holdings.select("chain", "token", "capital_usd").rows():
        pools = sum(1 for p in scenario.pools if (p.chain, p.token) == (chain, token))
        out[(chain, token)] = max(pools, math.floor(usd / token_usd(scenario, token)))
    return out


def _variant(scenario: Scenario, placement: Placement) -> Scenario:
    kappa = None
    if placement.policy == THRESHOLD:
        kappa = dict(
            zip(
                zip(placement.holdings["chain"], placement.holdings["token"], strict=True),
                placement.holdings["threshold_fraction"],
                strict=True,
            )
        )
    period = None if placement.period_s is None else int(placement.period_s)
    return placement_scenario(
        scenario,
        placement_capital(scenario, placement),
        policy=placement.policy,
        threshold_fraction=kappa,
        period_s=period,
    )


def verify_placements(
    scenario: Scenario | str,
    placements: Sequence[Placement],
    *,
    max_share_404: float,
    span_h: float,
    seeds: Sequence[int],
    rate_per_s: float = 0.03,
    capital_rate: float = DEFAULT_CAPITAL_RATE,
    flow: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """Replay each placement on the engine over ``seeds`` and measure it.

    Every seed draws one flow (:func:`toolkit.flows.generate_flow` with ``rate_per_s`` and the
    ``flow`` keyword arguments, e.g. ``routes``) replayed on every placement. Per placement:
    ``label``, ``policy``, the surrogate's ``predicted_share_404`` and ``predicted_cost_usd``,
    ``capital_usd`` (as placed), ``seeds``, and per metric (``share_404``, ``cost_usd``,
    ``rebalancing_cost_usd``, ``transfers``, ``net_return_pct``: fee revenue less rebalancing
    over capital, annualised) its ``_mean``, ``_sd``, ``_low`` and ``_high`` (95 % Student t
    over the seeds; lower ends of figures that cannot be negative cut at 0); ``verified`` when
    ``share_404_high`` is within ``max_share_404``.
    """
    base = load_scenario(scenario)
    span = number(span_h, "span_h", above=0)
    if not seeds:
        raise ValueError("seeds: give at least one seed")
    variants = [(p, _variant(base, p)) for p in placements]
    rows = []
    for seed in seeds:
        drawn = generate_flow(
            base, span_h=span, rate_per_s=rate_per_s, seed=whole(seed, "seed", minimum=0),
            **dict(flow or {}),
        )  # fmt: skip
        for placement, variant in variants:
            s = replay(drawn, variant, seed=seed, interval_s=600.0).summary
            capital_cost = capital_rate * s.capital_usd * s.end_s / YEAR_S
            rows.append(
                {
                    "label": placement.label,
                    "seed": seed,
                    "capital_usd": s.capital_usd,
                    "share_404": s.rfq_404_share,
                    "cost_usd": capital_cost + s.rebalancing_cost_usd,
                    "rebalancing_cost_usd": s.rebalancing_cost_usd,
                    "transfers": float(s.transfers),
                    "net_return_pct": s.net_annualised_return_pct,
                }
            )
    measured = bands(pl.DataFrame(rows), ["label", "capital_usd"], list(_METRICS))
    predicted = pl.DataFrame(
        {
            "label": [p.label for p in placements],
            "policy": [p.policy for p in placements],
            "predicted_share_404": [p.share_404 for p in placements],
            "predicted_cost_usd": [p.cost_usd for p in placements],
        }
    )
    # None of the figures can be negative: a Student-t interval's lower end is cut at 0.
    floors = [pl.col(f"{m}_low").clip(lower_bound=0.0) for m in _METRICS if m != "net_return_pct"]
    return (
        predicted.join(measured, on="label", how="left", maintain_order="left")
        .with_columns(*floors)
        .with_columns((pl.col("share_404_high") <= max_share_404).alias("verified"))
    )


def plan_capital(
    scenario: Scenario | str,
    *,
    horizon_h: float,
    max_share_404: float,
    capital_rate: float = DEFAULT_CAPITAL_RATE,
    rate_per_s: float = 0.03,
    flow: Mapping[str, Any] | None = None,
    estimate_days: float | None = None,
    estimate_seed: int = 0,
    seeds: Sequence[int] = (1, 2, 3, 4, 5),
    top: int = 3,
    periods_s: Sequence[float] = (3600.0, 4 * 3600.0, 86_400.0),
    refine: bool = True,
) -> CapitalPlan:
    """Search capital and policy for ``scenario``'s flow, then verify the ``top`` candidates.

    ``horizon_h``: the span the 404 share and the cost are over; ``max_share_404``: the bound;
    ``rate_per_s`` and ``flow`` (keyword arguments of :func:`toolkit.flows.generate_flow`, e.g.
    ``routes`` for a directional mix) describe the flow; ``estimate_days`` (default eight
    horizons, at least 28 days) of it, drawn with ``estimate_seed``, feed the surrogate. The
    scenario's ``overshoot_share`` and ``min_transfer_usd`` are kept. With ``refine``, each
    replayed candidate's policy is searched once more with the bound corrected by the
    surrogate's bias on its replays, and replayed too (labels ``..., refined``).
    """
    base = load_scenario(scenario)
    horizon = number(horizon_h, "horizon_h", above=0)
    days = max(28.0, 8 * horizon / 24) if estimate_days is None else estimate_days
    number(days, "estimate_days", above=0)
    started = time.process_time()
    sample = generate_flow(
        base, span_h=24 * days, rate_per_s=rate_per_s, seed=estimate_seed, **dict(flow or {})
    )
    keys = holding_keys(base)
    bridgings = holding_bridgings(base)
    missing = [k for k in keys if k not in bridgings]
    if missing:
        raise ValueError(f"bridges: no bridge reaches the holdings {missing}")
    problem = PlacementProblem.build(
        holding_demands(base, sample, span_s=24 * 3600 * days),
        [bridgings[k] for k in keys],
        horizon_s=horizon * 3600,
        max_share_404=max_share_404,
        capital_rate=capital_rate,
        start_usd=[
            sum(p.balance for p in base.pools if (p.chain, p.token) == k) * token_usd(base, k[1])
            for k in keys
        ],
        overshoot_share=float(base.rebalancing.overshoot_share),
        min_transfer_usd=float(base.rebalancing.min_transfer_usd),
        periods_s=periods_s,
    )
    candidates = tuple(search_placement(problem))
    search_s = time.process_time() - started
    replayed = candidates[: whole(top, "top", minimum=1)]

    def measure(placements: Sequence[Placement]) -> pl.DataFrame:
        return verify_placements(
            base, placements, max_share_404=max_share_404, span_h=horizon, seeds=seeds,
            rate_per_s=rate_per_s, capital_rate=capital_rate, flow=flow,
        )  # fmt: skip

    verified = measure(replayed)
    if refine:
        again = _refined(problem, replayed, verified, max_share_404)
        if again:
            candidates += tuple(again)
            verified = pl.concat([verified, measure(again)])
    converted = requested_orders(sample.filter(pl.col("converts")))
    return CapitalPlan(candidates, verified, net_flow(converted, span_s=24 * 3600 * days), search_s)


def _refined(
    problem: PlacementProblem,
    placements: Sequence[Placement],
    verified: pl.DataFrame,
    max_share_404: float,
) -> list[Placement]:
    """Each placement's policy searched again with the bound divided by the surrogate's bias
    on its replays (measured mean over predicted 404 share, kept within 1/4 to 4): one step of
    correcting a surrogate by the simulation it stands for."""
    out = []
    measured = dict(verified.select("label", "share_404_mean").rows())
    for placement in placements:
        seen = measured.get(placement.label)
        if not seen or not placement.share_404 > 0:
            continue
        bias = min(4.0, max(0.25, seen / placement.share_404))
        bound = min(max_share_404 / bias, 0.5)
        found = search_policy(
            dataclasses.replace(problem, max_share_404=bound), placement.policy, placement.period_s
        )
        if found is not None:
            out.append(dataclasses.replace(found, refined=True))
    return out
