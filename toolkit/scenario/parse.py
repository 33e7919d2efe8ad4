"""Turn a parsed TOML document (a plain mapping) into a :class:`Scenario`.

The document is validated by the declared models of :mod:`toolkit.scenario.document` (every
fault named by its key path, ``pools[3].balance: must be a positive integer``; unknown keys are
errors too); what is left here is what the models cannot know alone: a route's named fee
schedule, a chain's contracts from ``[contracts]`` or the chain registry, and the per-chain
block time and base fee defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from toolkit.scenario.amm import parse_amm
from toolkit.scenario.credit import parse_credit
from toolkit.scenario.document import SCENARIO, ChainDoc, ContractsDoc, ScenarioDoc
from toolkit.scenario.errors import ScenarioError
from toolkit.scenario.fields import check
from toolkit.scenario.model import (
    BASE_FEES,
    BLOCK_TIMES,
    DEFAULT_BASE_FEE,
    DEFAULT_BLOCK_TIME,
    Auth,
    Chain,
    FeeTier,
    Pool,
    Pricing,
    Route,
    Token,
    Windows,
)
from toolkit.scenario.rebalancing import parse_bridges, parse_rebalancing
from toolkit.scenario.scenario import Scenario
from toolkit.scenario.secret import Secret

__all__ = ["ContractDefaults", "parse_scenario"]

#: Looks up default ``{"escrow", "output_settler", "oracle"}`` addresses for a chain id.
ContractDefaults = Callable[[int], Mapping[str, str] | None]

_CONTRACTS = ("escrow", "output_settler", "oracle")


def _named_schedules(doc: object) -> object:
    """The document with each route's named fee schedule replaced by its tiers (the schedule is
    validated under its own key, ``fee_schedules.NAME``, which is checked first)."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("routes"), list):
        return doc
    schedules = doc.get("fee_schedules", {})
    routes = []
    for i, route in enumerate(doc["routes"]):
        name = route.get("fee_tiers") if isinstance(route, Mapping) else None
        if isinstance(name, str):
            if not isinstance(schedules, Mapping) or name not in schedules:
                raise ScenarioError(f"routes[{i}].fee_tiers", f"no fee schedule named {name!r}")
            route = {**route, "fee_tiers": schedules[name]}
        routes.append(route)
    return {**doc, "routes": routes}


def _chain(i: int, c: ChainDoc, shared: ContractsDoc, defaults: ContractDefaults | None) -> Chain:
    fallback = defaults(c.id) if defaults is not None else None
    contracts = {}
    for name in _CONTRACTS:
        value = getattr(c, name) or getattr(shared, name)
        if value is None and fallback is not None:
            value = fallback.get(name)
        if value is None:
            raise ScenarioError(
                f"chains[{i}].{name}", "is required (no [contracts] or registry value)"
            )
        contracts[name] = value
    return Chain(
        id=c.id,
        name=c.name,
        confirmation_s=c.confirmation_s,
        fill_s=c.fill_s,
        fill_cost_usd=c.fill_cost_usd,
        **contracts,
        block_time_s=BLOCK_TIMES.get(c.id, DEFAULT_BLOCK_TIME)
        if c.block_time_s is None
        else c.block_time_s,
        base_fee=BASE_FEES.get(c.id, DEFAULT_BASE_FEE) if c.base_fee is None else c.base_fee,
    )


def _routes(d: ScenarioDoc) -> tuple[Route, ...]:
    return tuple(
        Route(
            src=r.src,
            dst=r.dst,
            token=r.token,
            fee_tiers=tuple(FeeTier(t.fee_bps, t.min_amount, t.max_amount) for t in r.fee_tiers),
        )
        for r in d.routes
    )


def parse_scenario(
    doc: Mapping[str, Any], *, contract_defaults: ContractDefaults | None = None
) -> Scenario:
    """Build a scenario from a parsed TOML document.

    ``contract_defaults`` supplies a chain's escrow, output settler and oracle addresses when
    neither the chain entry nor the ``[contracts]`` table gives them.

    >>> import tomllib
    >>> from toolkit.scenario import scenario_path
    >>> escrow = "0x000025c3226C00B2Cdc200005a1600509f4e00C0"
    >>> contracts = {"escrow": escrow, "output_settler": escrow, "oracle": escrow}
    >>> with open(scenario_path("single-pool"), "rb") as f:
    ...     parse_scenario(tomllib.load(f), contract_defaults=lambda chain: contracts).name
    'single-pool'
    """
    d = check(SCENARIO, _named_schedules(doc))
    tokens = tuple(Token(t.chain, t.symbol, t.address, t.decimals, t.fill_cost) for t in d.tokens)
    pricing = Pricing(
        utilization_kink_bps=d.pricing.utilization_kink_bps,
        premium_max_bps=d.pricing.premium_max_bps,
        prices_usd=tuple(d.prices.items()),
    )
    scenario = Scenario(
        name=d.name,
        description=d.description,
        filler=d.filler,
        chains=tuple(_chain(i, c, d.contracts, contract_defaults) for i, c in enumerate(d.chains)),
        tokens=tokens,
        pools=tuple(Pool(p.chain, p.token, p.type, p.address, p.balance) for p in d.pools),
        routes=_routes(d),
        pricing=pricing,
        auth=Auth(
            api_keys=tuple(Secret(k) for k in d.auth.api_keys),
            signer_key=Secret(d.auth.signer_key),
        ),
        windows=Windows(**d.windows.model_dump()),
        credit=parse_credit(d.credit, scenario=d.name, tokens=tokens),
        rebalancing=parse_rebalancing(d.rebalancing),
        bridges=parse_bridges(d.bridges),
    )
    if d.amm is None:
        return scenario
    # Checked once the rest is valid: the pools refer to its tokens and prices.
    return replace(scenario, amm=parse_amm(d.amm, scenario.tokens, scenario.pricing))
