"""Scenarios: TOML files loaded into frozen, validated dataclasses.

The scenarios shipped with the package live in ``toolkit/scenario/scenarios/`` (package data);
your own are TOML files anywhere, given by path.

A scenario configures the reservation engine (:mod:`toolkit.engine`) and the simulated world
(:mod:`toolkit.world`): chains (timings, fill cost, escrow-side contracts), tokens per chain,
liquidity pools per (chain, token) with their pool type, address and balance, onboarded routes
with fee tiers, the utilization-premium pricing rule and token prices, the reservation and order
windows, the filler address, the accepted API keys and the borrow-authorization signing key.

>>> from toolkit.scenario import load_scenario
>>> scenario = load_scenario("default")
>>> scenario.route(1, 8453, "USDC").fee_tiers[0].fee_bps
5
>>> scenario.auth.signer_key
Secret('***')

Each table is a declared model (:mod:`toolkit.scenario.document`, ``[amm]`` and ``[credit]``
beside their builders), so errors name the TOML key path and the rule, e.g.
``pools[3].balance: must be a positive integer``.

``load_scenario(name, env=os.environ)`` is the only place that reads the environment
(``TOOLKIT_API_KEY``, ``TOOLKIT_SIGNER_KEY``), and only when given it: by default it, like
``read_scenario`` and ``parse_scenario``, is pure.

File layout (see ``scenarios/default.toml``): top-level ``name``, ``description``,
``filler``; tables ``[auth]``, ``[windows]``, ``[pricing]``, ``[prices]``, ``[contracts]``,
``[fee_schedules]``, ``[rebalancing]`` (how inventory moves between chains: policy ``none``
without the table; :mod:`toolkit.scenario.rebalancing`); arrays of tables ``[[chains]]``,
``[[tokens]]``, ``[[pools]]``, ``[[routes]]``, ``[[bridges]]``. A route's ``fee_tiers`` is an
inline list of ``{fee_bps, min_amount, max_amount}`` or the name of a fee schedule.
"""

from toolkit.scenario.drawdown import drawdown, with_collateral_prices
from toolkit.scenario.errors import ScenarioError
from toolkit.scenario.load import (
    API_KEY_ENV,
    SCENARIO_DIR,
    SIGNER_KEY_ENV,
    apply_environment,
    load_scenario,
    read_scenario,
    scenario_names,
    scenario_path,
)
from toolkit.scenario.model import (
    BASE_FEES,
    BLOCK_TIMES,
    POOL_TYPES,
    Auth,
    Chain,
    FeeTier,
    Pool,
    Pricing,
    Route,
    Token,
    Windows,
)
from toolkit.scenario.parse import parse_scenario
from toolkit.scenario.rebalancing import POLICIES, Bridge, RebalanceTarget, Rebalancing
from toolkit.scenario.scenario import REPAYMENT_CHAINS, Scenario
from toolkit.scenario.secret import Secret
from toolkit.scenario.validate import check_tiers

__all__ = [
    "API_KEY_ENV",
    "BASE_FEES",
    "BLOCK_TIMES",
    "POLICIES",
    "POOL_TYPES",
    "REPAYMENT_CHAINS",
    "SCENARIO_DIR",
    "SIGNER_KEY_ENV",
    "Auth",
    "Bridge",
    "Chain",
    "FeeTier",
    "Pool",
    "Pricing",
    "RebalanceTarget",
    "Rebalancing",
    "Route",
    "Scenario",
    "ScenarioError",
    "Secret",
    "Token",
    "Windows",
    "apply_environment",
    "check_tiers",
    "drawdown",
    "load_scenario",
    "parse_scenario",
    "read_scenario",
    "scenario_names",
    "scenario_path",
    "with_collateral_prices",
]
