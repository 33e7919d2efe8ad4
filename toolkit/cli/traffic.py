"""Other users' activity as ``toolkit demo`` and ``toolkit serve --traffic`` replay it: the flows
of the scenario's rates, described and summed up in one line each.

The flows come from the backtests' generators (:func:`toolkit.backtest.generate_flow`,
:func:`toolkit.backtest.generate_swap_flow` and :func:`toolkit.backtest.generate_credit_flow`);
:class:`toolkit.simulate.Traffic` plays them against a service.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import polars as pl

    from toolkit.scenario import Scenario

__all__ = [
    "BORROWERS",
    "RFQ_RATE",
    "SWAP_RATE",
    "Flows",
    "background_flows",
    "describe_flows",
    "traffic_summary",
]

#: Other users' RFQs per second (before the hourly profile).
RFQ_RATE = 1.0
#: Other users' swaps per second on the AMM pools (before the hourly profile).
SWAP_RATE = 0.1
#: Borrowers of the background traffic (development accounts 0, 1, ...).
BORROWERS = 4


class Flows(NamedTuple):
    """The three flows a :class:`toolkit.simulate.Traffic` replays; None where the scenario has
    no such surface (no AMM market, no credit product)."""

    intents: pl.DataFrame
    swaps: pl.DataFrame | None
    credit: pl.DataFrame | None


def background_flows(
    scenario: Scenario, *, span_h: float, seed: int = 0, scale: float = 1.0
) -> Flows:
    """``span_h`` hours of other users' RFQs, swaps and credit actions on ``scenario``, at its rates
    times ``scale`` (RFQs and swaps per second, draws per borrower and hour).

    >>> from toolkit.scenario import load_scenario
    >>> flows = background_flows(load_scenario("default"), span_h=0.1, scale=2.0)
    >>> flows.intents.height > 0, flows.swaps is not None, flows.credit is not None
    (True, True, True)
    >>> background_flows(load_scenario("single-pool"), span_h=0.1).swaps is None
    True
    """
    from toolkit.backtest import generate_credit_flow, generate_flow, generate_swap_flow
    from toolkit.flows import DEFAULT_DRAW_RATE_PER_H
    from toolkit.world.evm.markets import MARKET_CHAINS, market_for

    intents = generate_flow(scenario, span_h=span_h, rate_per_s=RFQ_RATE * scale, seed=seed)
    swaps = None
    if any(market_for(scenario, chain) is not None for chain in MARKET_CHAINS):
        swaps = generate_swap_flow(scenario, span_h=span_h, rate_per_s=SWAP_RATE * scale, seed=seed)
    credit = None
    if scenario.credit is not None:
        credit = generate_credit_flow(
            scenario,
            span_h=span_h,
            borrowers=BORROWERS,
            draw_rate_per_h=DEFAULT_DRAW_RATE_PER_H * scale,
            seed=seed,
        )
    return Flows(intents, swaps, credit)


def describe_flows(flows: Flows) -> str:
    """What ``flows`` hold, for people.

    >>> from toolkit.scenario import load_scenario
    >>> flows = background_flows(load_scenario("single-pool"), span_h=0.1)
    >>> describe_flows(flows)  # doctest: +ELLIPSIS
    '... RFQs of other users (converting quotes opened on chain, filled and settled), ...'
    """
    parts = [
        f"{flows.intents.height:,} RFQs of other users (converting quotes opened on chain, "
        "filled and settled)"
    ]
    if flows.swaps is not None:
        parts.append(f"{flows.swaps.height:,} swaps on the AMM pools")
    if flows.credit is not None:
        parts.append(f"{flows.credit.height:,} credit actions of {BORROWERS} borrowers")
    return ", ".join(parts)


def traffic_summary(counts: Mapping[str, int]) -> str:
    """What background traffic did, in one line.

    >>> print(traffic_summary({"rfq": 3, "quoted": 2, "opened": 1, "swap_quoted": 4,
    ...     "swap_sent": 4, "credit_draw": 2, "credit_repay": 1, "credit_calls": 5}))
    ... # doctest: +NORMALIZE_WHITESPACE
    3 RFQs, 2 quoted, 1 orders opened on chain; 4 swap routes quoted, 4 swaps sent, 0 reverted;
    0 locks, 2 draws, 1 repayments, 0 unlocks in 5 credit calls, 0 reverted
    """
    c = Counter(counts)
    return (
        f"{c['rfq']:,} RFQs, {c['quoted']:,} quoted, {c['opened']:,} orders opened on chain; "
        f"{c['swap_quoted']:,} swap routes quoted, {c['swap_sent']:,} swaps sent, "
        f"{c['swap_reverted']:,} reverted; {c['credit_lock']:,} locks, {c['credit_draw']:,} "
        f"draws, {c['credit_repay']:,} repayments, {c['credit_unlock']:,} unlocks in "
        f"{c['credit_calls']:,} credit calls, {c['credit_reverted']:,} reverted"
    )
