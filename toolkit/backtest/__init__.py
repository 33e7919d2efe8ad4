"""Backtests: seeded order flows replayed on the reservation engine under a virtual clock.

What would a change of pool size, fee tiers or reservation windows have done to past flow?

- :func:`generate_flow` (from :mod:`toolkit.flows`, where every flow contract lives) builds a
  seeded flow frame (Poisson arrivals with a daily profile,
  route mix, log-normal sizes clipped to each route's fee tiers, quote types, conversions).
- :func:`generate_swap_flow` and :func:`generate_credit_flow` build seeded swap and credit
  activity (swaps on the AMM markets; borrowers that lock, draw, repay and unlock), which
  :class:`toolkit.simulate.Traffic` plays on a live embedded service beside an order flow.
- :func:`replay` runs a flow through the same engine that backs the embedded service: RFQ →
  transaction → escrow → fill → settlement, with optional client retries after a 404
  (:class:`toolkit.client.RetryPolicy`). It returns a :class:`BacktestResult` with a request
  frame, pool and inventory time series, the rebalancing transfers and a summary that names
  the rebalancing policy its figures assume (the scenario's; ``overrides={"rebalancing.policy":
  ...}`` compares others on the same flow); :meth:`BacktestResult.to_store` writes it to
  DuckDB.
- :func:`sweep` replays one flow over a grid of scenario variants (pool size, fee and window
  overrides) through any ``concurrent.futures.Executor``.
- :func:`replay_credit` runs a credit book (:func:`generate_book`: the
  :class:`~toolkit.models.health.CreditBook` the risk models take) over days of price paths:
  draws, repayments, overdue interest, exact liquidations, bad debt; :func:`credit_sweep` runs it
  over LTV and bonus settings through the same executors.
- :func:`calibrate` builds a scenario and a flow model from what the collectors stored, so a
  backtest asks its what-if questions of real observations.
- :func:`sweep_seeds` sweeps a fresh flow per seed and :func:`bands` reports each metric's mean
  with a Student-t confidence interval: seeds, not a seed.
- :func:`whole_flow` runs every surface on one world and clock (card spenders, solvers
  borrowing, cross-chain users choosing intents or swaps, liquidators selling into the pools);
  :func:`whole_flow_seeds` runs it shocked, shocked with the liquidators off, and unshocked,
  over seeds.
- :func:`griefing` measures a quote-only bot (:func:`attack_flow`): the capacity it holds, the
  404s honest users see, and what per-key rate limits or shorter quote windows buy back.

Everything here is pure: time is virtual and randomness comes from the ``seed`` arguments, so
a backtest gives identical frames on every run and machine.

>>> from toolkit.backtest import generate_flow, replay
>>> flow = generate_flow("default", span_h=1.0, rate_per_s=0.5, seed=7)
>>> result = replay(flow, "default", seed=7)
>>> result.summary.requests == flow.height, result.summary.no_capacity
(True, 0)
"""

from toolkit.backtest.calibrate import Calibration, calibrate
from toolkit.backtest.credit import (
    CreditBehaviour,
    CreditResult,
    CreditSummary,
    credit_sweep,
    default_market,
    generate_book,
    replay_credit,
)
from toolkit.backtest.griefing import attack_flow, griefing
from toolkit.backtest.loop import OUTCOMES
from toolkit.backtest.replay import replay
from toolkit.backtest.result import BacktestResult
from toolkit.backtest.scenarios import OVERRIDE_KEYS, apply_overrides
from toolkit.backtest.seeds import bands, sweep_seeds
from toolkit.backtest.summary import BacktestSummary
from toolkit.backtest.sweep import sweep
from toolkit.backtest.wholeflow import (
    WHOLE_FLOW_METRICS,
    WholeFlow,
    WholeFlowResult,
    WholeFlowSummary,
    interactions,
    whole_flow,
    whole_flow_seeds,
)

# The flow contracts live in toolkit.flows (below backtest); the generators and checks are
# re-exported here because a backtest starts from them.
from toolkit.flows import (
    CREDIT_ACTIONS,
    CREDIT_FLOW_SCHEMA,
    DEFAULT_PROFILE,
    DEFAULT_SWAP_PAIRS,
    FLOW_COLUMNS,
    FLOW_SCHEMA,
    SWAP_FLOW_SCHEMA,
    Constant,
    DelayModel,
    Exponential,
    Fixed,
    LogNormal,
    SizeModel,
    Uniform,
    check_flow,
    default_sizes,
    generate_credit_flow,
    generate_flow,
    generate_swap_flow,
    poisson_arrivals,
)

__all__ = [
    "CREDIT_ACTIONS",
    "CREDIT_FLOW_SCHEMA",
    "DEFAULT_PROFILE",
    "DEFAULT_SWAP_PAIRS",
    "FLOW_COLUMNS",
    "FLOW_SCHEMA",
    "OUTCOMES",
    "OVERRIDE_KEYS",
    "SWAP_FLOW_SCHEMA",
    "WHOLE_FLOW_METRICS",
    "BacktestResult",
    "BacktestSummary",
    "Calibration",
    "Constant",
    "CreditBehaviour",
    "CreditResult",
    "CreditSummary",
    "DelayModel",
    "Exponential",
    "Fixed",
    "LogNormal",
    "SizeModel",
    "Uniform",
    "WholeFlow",
    "WholeFlowResult",
    "WholeFlowSummary",
    "apply_overrides",
    "attack_flow",
    "bands",
    "calibrate",
    "check_flow",
    "credit_sweep",
    "default_market",
    "default_sizes",
    "generate_book",
    "generate_credit_flow",
    "generate_flow",
    "generate_swap_flow",
    "griefing",
    "interactions",
    "poisson_arrivals",
    "replay",
    "replay_credit",
    "sweep",
    "sweep_seeds",
    "whole_flow",
    "whole_flow_seeds",
]
