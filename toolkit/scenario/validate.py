"""A built scenario checked: its parts field by field (by the document's own declared models,
through their attributes), then the relations between parts, and the look-up index they yield.

Paths in errors are the TOML key paths (``routes[0].fee_tiers``): the tuples in a scenario keep
the order of the arrays in the file, so an index here is an index there.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from toolkit.scenario.address import check_private_key
from toolkit.scenario.document import PARTS, PRICES, TIERS
from toolkit.scenario.errors import ScenarioError
from toolkit.scenario.fields import check
from toolkit.scenario.model import Auth, Chain, FeeTier, Pool, Pricing, Route, Token, Windows
from toolkit.scenario.rebalancing import Bridge, Rebalancing, check_rebalancing
from toolkit.scenario.secret import Secret

__all__ = ["ScenarioIndex", "ScenarioParts", "check_tiers", "index_scenario"]

_BPS = 10_000


class ScenarioParts(Protocol):
    """What validation reads of a scenario (the fields of ``Scenario``)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def filler(self) -> str: ...
    @property
    def chains(self) -> tuple[Chain, ...]: ...
    @property
    def tokens(self) -> tuple[Token, ...]: ...
    @property
    def pools(self) -> tuple[Pool, ...]: ...
    @property
    def routes(self) -> tuple[Route, ...]: ...
    @property
    def pricing(self) -> Pricing: ...
    @property
    def auth(self) -> Auth: ...
    @property
    def windows(self) -> Windows: ...
    @property
    def rebalancing(self) -> Rebalancing: ...
    @property
    def bridges(self) -> tuple[Bridge, ...]: ...


@dataclass(frozen=True, slots=True)
class ScenarioIndex:
    """Dictionaries built once so that look-ups on a scenario are O(1)."""

    chains: dict[int, Chain]
    tokens: dict[tuple[int, str], Token]
    by_address: dict[tuple[int, str], Token]
    pools: dict[tuple[int, str], tuple[Pool, ...]]
    routes: dict[tuple[int, int, str], Route]
    fill_costs: dict[tuple[int, str], int]


def check_tiers(tiers: object, path: str) -> tuple[FeeTier, ...]:
    """Check a fee schedule: non-empty, each tier well formed, tiers contiguous and ascending.

    >>> check_tiers((FeeTier(5, 0, 10), FeeTier(3, 10, 20)), "routes[0].fee_tiers")[1].fee_bps
    3
    >>> check_tiers((FeeTier(5, 0, 10), FeeTier(3, 11, 20)), "routes[0].fee_tiers")
    Traceback (most recent call last):
    ...
    toolkit.scenario.errors.ScenarioError: routes[0].fee_tiers: tiers must be contiguous
    """
    if not isinstance(tiers, tuple):
        raise ScenarioError(path, "must be a tuple of fee tiers")
    for i, tier in enumerate(tiers):
        if not isinstance(tier, FeeTier):  # a Python caller's mistake: no attributes to check
            raise ScenarioError(f"{path}[{i}]", "must be a fee tier")
    check(TIERS, tiers, path, stored=True)
    return tiers


def _check_chains(chains: tuple[Chain, ...]) -> dict[int, Chain]:
    index: dict[int, Chain] = {}
    names: set[str] = set()
    for i, chain in enumerate(chains):
        if chain.id in index:
            raise ScenarioError(f"chains[{i}].id", f"chain {chain.id} is listed twice")
        if chain.name in names:
            raise ScenarioError(f"chains[{i}].name", f"name {chain.name!r} is used twice")
        index[chain.id] = chain
        names.add(chain.name)
    return index


def _check_tokens(
    tokens: tuple[Token, ...], chains: dict[int, Chain]
) -> tuple[dict[tuple[int, str], Token], dict[tuple[int, str], Token]]:
    by_symbol: dict[tuple[int, str], Token] = {}
    by_address: dict[tuple[int, str], Token] = {}
    for i, token in enumerate(tokens):
        p = f"tokens[{i}]"
        if token.chain not in chains:
            raise ScenarioError(f"{p}.chain", f"chain {token.chain!r} is not in chains")
        key = (token.chain, token.symbol)
        if key in by_symbol:
            raise ScenarioError(f"{p}.symbol", f"{token.symbol} on chain {token.chain} twice")
        akey = (token.chain, token.address.lower())
        if akey in by_address:
            raise ScenarioError(f"{p}.address", "two tokens share this address on one chain")
        by_symbol[key] = token
        by_address[akey] = token
    return by_symbol, by_address


def _check_pools(
    pools: tuple[Pool, ...], tokens: dict[tuple[int, str], Token]
) -> dict[tuple[int, str], tuple[Pool, ...]]:
    grouped: dict[tuple[int, str], list[Pool]] = {}
    seen: set[str] = set()
    for i, pool in enumerate(pools):
        p = f"pools[{i}]"
        if (pool.chain, pool.token) not in tokens:
            raise ScenarioError(f"{p}.token", f"no token {pool.token!r} on chain {pool.chain!r}")
        if pool.id in seen:
            raise ScenarioError(p, f"pool {pool.id} is listed twice")
        seen.add(pool.id)
        grouped.setdefault((pool.chain, pool.token), []).append(pool)
    return {key: tuple(group) for key, group in grouped.items()}


def _check_routes(
    s: ScenarioParts,
    tokens: dict[tuple[int, str], Token],
    pools: dict[tuple[int, str], tuple[Pool, ...]],
) -> dict[tuple[int, int, str], Route]:
    index: dict[tuple[int, int, str], Route] = {}
    for i, route in enumerate(s.routes):
        p = f"routes[{i}]"
        src = tokens.get((route.src, route.token))
        dst = tokens.get((route.dst, route.token))
        if src is None:
            raise ScenarioError(f"{p}.src", f"no token {route.token!r} on chain {route.src!r}")
        if dst is None:
            raise ScenarioError(f"{p}.dst", f"no token {route.token!r} on chain {route.dst!r}")
        if src.decimals != dst.decimals:
            raise ScenarioError(p, "the token has different decimals on the two chains")
        if (route.dst, route.token) not in pools:
            raise ScenarioError(p, f"no pool holds {route.token} on chain {route.dst}")
        worst = max(t.fee_bps for t in route.fee_tiers) + s.pricing.premium_max_bps
        if worst >= _BPS:
            raise ScenarioError(f"{p}.fee_tiers", "fee plus maximum premium must be below 10000")
        key = (route.src, route.dst, route.token)
        if key in index:
            raise ScenarioError(p, f"route {route.src}->{route.dst} {route.token} is listed twice")
        index[key] = route
    return index


def _check_prices(pricing: Pricing) -> None:
    seen: set[str] = set()
    for symbol, _ in pricing.prices_usd:
        if symbol in seen:
            raise ScenarioError(f"prices.{symbol}", "is listed twice")
        seen.add(symbol)
    check(PRICES, dict(pricing.prices_usd), "prices", stored=True)


def _fill_costs(
    s: ScenarioParts, chains: dict[int, Chain], tokens: dict[tuple[int, str], Token]
) -> dict[tuple[int, str], int]:
    costs: dict[tuple[int, str], int] = {}
    for i, token in enumerate(s.tokens):
        if token.fill_cost is not None:
            costs[(token.chain, token.symbol)] = token.fill_cost
            continue
        usd = chains[token.chain].fill_cost_usd
        if usd == 0:
            costs[(token.chain, token.symbol)] = 0
            continue
        price = s.pricing.price_usd(token.symbol)
        if price is None:
            raise ScenarioError(
                f"tokens[{i}].fill_cost",
                f"is required when [prices] has no {token.symbol} price to convert the chain's "
                "USD fill cost",
            )
        units = usd * Decimal(10) ** token.decimals / price
        # Round up: the fill cost is charged to the user, so rounding favours the service.
        costs[(token.chain, token.symbol)] = int(units.to_integral_value(rounding="ROUND_CEILING"))
    return costs


def _check_auth(auth: Auth) -> None:
    keys = auth.api_keys
    if not isinstance(keys, tuple) or not keys:
        raise ScenarioError("auth.api_keys", "must hold at least one key")
    for i, key in enumerate(keys):
        if not isinstance(key, Secret):
            raise ScenarioError(f"auth.api_keys[{i}]", "must be a Secret")
    if not isinstance(auth.signer_key, Secret):
        raise ScenarioError("auth.signer_key", "must be a Secret")
    check_private_key(auth.signer_key.reveal(), "auth.signer_key")


def index_scenario(s: ScenarioParts) -> ScenarioIndex:
    """Validate ``s`` and return its look-up index; the first fault raises ScenarioError."""
    check(PARTS, s, stored=True)
    chains = _check_chains(s.chains)
    tokens, by_address = _check_tokens(s.tokens, chains)
    pools = _check_pools(s.pools, tokens)
    _check_prices(s.pricing)
    routes = _check_routes(s, tokens, pools)
    costs = _fill_costs(s, chains, tokens)
    check_rebalancing(s, chains, tokens)
    _check_auth(s.auth)
    return ScenarioIndex(chains, tokens, by_address, pools, routes, costs)
