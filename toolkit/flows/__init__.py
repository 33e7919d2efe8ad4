"""Flow contracts, written once: the schemas, seeded generators and checks of the three flows
the backtests replay and the traffic plays on a live service.

- **Intents (RFQ) flows**: :data:`FLOW_SCHEMA` (:data:`FLOW_COLUMNS` required),
  :func:`generate_flow` (Poisson arrivals with a daily profile, route mix, log-normal sizes
  clipped to each route's fee tiers, quote types, conversions) and :func:`check_flow`.
- **Swap flows**: :data:`SWAP_FLOW_SCHEMA`, :func:`generate_swap_flow` and :func:`check_swaps`.
- **Credit flows**: :data:`CREDIT_FLOW_SCHEMA`, the borrowers' :data:`CREDIT_ACTIONS`,
  :func:`generate_credit_flow` and :func:`check_credit`.

The package is pure (no I/O, no clock: randomness comes from the ``seed`` arguments) and sits
below ``backtest`` and ``collect`` in the layer contract, so both, and ``simulate`` above them,
read the same column lists instead of keeping copies.

>>> flow = generate_flow("default", span_h=0.1, rate_per_s=1.0, seed=3)
>>> flow.schema == FLOW_SCHEMA, tuple(flow.columns[1:]) == FLOW_COLUMNS
(True, True)
"""

from toolkit.flows.activity import (
    DEFAULT_DRAW_RATE_PER_H,
    DEFAULT_SWAP_PAIRS,
    generate_credit_flow,
    generate_swap_flow,
)
from toolkit.flows.checks import (
    FlowColumns,
    check_credit,
    check_flow,
    check_swaps,
    checked_frame,
)
from toolkit.flows.distributions import (
    Constant,
    DelayModel,
    Exponential,
    Fixed,
    LogNormal,
    SizeModel,
    Uniform,
)
from toolkit.flows.intents import DEFAULT_PROFILE, default_sizes, generate_flow, poisson_arrivals
from toolkit.flows.schema import (
    CREDIT_ACTIONS,
    CREDIT_FLOW_COLUMNS,
    CREDIT_FLOW_SCHEMA,
    EXACT_INPUT,
    EXACT_OUTPUT,
    FLOW_COLUMNS,
    FLOW_SCHEMA,
    SWAP_FLOW_COLUMNS,
    SWAP_FLOW_SCHEMA,
)

__all__ = [
    "CREDIT_ACTIONS",
    "CREDIT_FLOW_COLUMNS",
    "CREDIT_FLOW_SCHEMA",
    "DEFAULT_DRAW_RATE_PER_H",
    "DEFAULT_PROFILE",
    "DEFAULT_SWAP_PAIRS",
    "EXACT_INPUT",
    "EXACT_OUTPUT",
    "FLOW_COLUMNS",
    "FLOW_SCHEMA",
    "SWAP_FLOW_COLUMNS",
    "SWAP_FLOW_SCHEMA",
    "Constant",
    "DelayModel",
    "Exponential",
    "Fixed",
    "FlowColumns",
    "LogNormal",
    "SizeModel",
    "Uniform",
    "check_credit",
    "check_flow",
    "check_swaps",
    "checked_frame",
    "default_sizes",
    "generate_credit_flow",
    "generate_flow",
    "generate_swap_flow",
    "poisson_arrivals",
]
