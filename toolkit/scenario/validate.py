"""Semantic checks of a scenario's parts, taken together, and the look-up index they yield.

Paths in errors are the TOML key paths (``routes[0].fee_tiers``): the tuples in a scenario keep
the order of the arrays in the file, so an index here is an index there.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Protocol

from toolkit.scenario.address import check_private_key, checksum
from toolkit.scenario.errors import ScenarioError
from toolkit.scenario.model import (
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
from toolkit.scenario.secret import Secret

__all__ = ["ScenarioIndex", "ScenarioParts", "check_tiers", "index_scenario"]

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_SYMBOL = re.compile(r"^[A-Z][A-Z0-9.]{0,15}$")
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


@dataclass(frozen=True, slots=True)
class ScenarioIndex:
    """Dictionaries built once so that look-ups on a scenario are O(1)."""

    chains: dict[int, Chain]
    tokens: dict[tuple[int, str], Token]
    by_address: dict[tuple[int, str], Token]
    pools: dict[tuple[int, str], tuple[Pool, ...]]
    routes: dict[tuple[int, int, str], Route]
    fill_costs: dict[tuple[int, str], int]


def _int(value: object, path: str, minimum: int, rule: str) -> int:
    if type(value) is not int or value < minimum:
        raise ScenarioError(path, rule)
    return value


def _address(value: object, path: str) -> None:
    if checksum(value, path) != value:
        raise ScenarioError(path, "must be stored in EIP-55 checksummed form")


def check_tiers(tiers: object, path: str) -> tuple[FeeTier, ...]:
    """Check a fee schedule: non-empty, each tier well formed, tiers contiguous and ascending.

    >>> check_tiers((FeeTier(5, 0, 10), FeeTier(3, 10, 20)), "routes[0].fee_tiers")[1].fee_bps
    3
    >>> check_tiers((FeeTier(5, 0, 10), FeeTier(3, 11, 20)), "routes[0].fee_tiers")
    Traceback (most recent call last):
    ...
    toolkit.scenario.errors.ScenarioError: routes[0].fee_tiers: tiers must be contiguous
    """
    if not isinstance(tiers, tuple) or not tiers:
        raise ScenarioError(path, "must hold at least one fee tier")
    for i, tier in enumerate(tiers):
        where = f"{path}[{i}]"
        if not isinstance(tier, FeeTier):
            raise ScenarioError(where, "must be a fee tier")
        _int(tier.fee_bps, f"{where}.fee_bps", 0, "must be an integer from 0 to 9999")
        if tier.fee_bps >= _BPS:
            raise ScenarioError(f"{where}.fee_bps", "must be an integer from 0 to 9999")
        _int(tier.min_amount, f"{where}.min_amount", 0, "must be a non-negative integer")
        _int(tier.max_amount, f"{where}.max_amount", 1, "must be a positive integer")
        if tier.max_amount <= tier.min_amount:
            raise ScenarioError(f"{where}.max_amount", "must be greater than min_amount")
    for before, after in itertools.pairwise(tiers):
        if after.min_amount != before.max_amount:
            raise ScenarioError(path, "tiers must be contiguous")
    return tiers


def _check_chains(chains: tuple[Chain, ...]) -> dict[int, Chain]:
    if not isinstance(chains, tuple) or not chains:
        raise ScenarioError("chains", "must hold at least one chain")
    index: dict[int, Chain] = {}
    names: set[str] = set()
    for i, chain in enumerate(chains):
        p = f"chains[{i}]"
        _int(chain.id, f"{p}.id", 1, "must be a positive integer")
        if chain.id in index:
            raise ScenarioError(f"{p}.id", f"chain {chain.id} is listed twice")
        if not isinstance(chain.name, str) or not _NAME.match(chain.name):
            raise ScenarioError(f"{p}.name", "must be a lower-case name")
        if chain.name in names:
            raise ScenarioError(f"{p}.name", f"name {chain.name!r} is used twice")
        rule = "must be a non-negative integer number of seconds"
        _int(chain.confirmation_seconds, f"{p}.confirmation_seconds", 0, rule)
        _int(chain.fill_seconds, f"{p}.fill_seconds", 0, rule)
        cost = chain.fill_cost_usd
        if not isinstance(cost, Decimal) or not cost.is_finite() or cost < 0:
            raise ScenarioError(f"{p}.fill_cost_usd", "must be a non-negative decimal")
        for name in ("escrow", "output_settler", "oracle"):
            _address(getattr(chain, name), f"{p}.{name}")
        index[chain.id] = chain
        names.add(chain.name)
    return index


def _check_tokens(
    tokens: tuple[Token, ...], chains: dict[int, Chain]
) -> tuple[dict[tuple[int, str], Token], dict[tuple[int, str], Token]]:
    if not isinstance(tokens, tuple) or not tokens:
        raise ScenarioError("tokens", "must hold at least one token")
    by_symbol: dict[tuple[int, str], Token] = {}
    by_address: dict[tuple[int, str], Token] = {}
    for i, token in enumerate(tokens):
        p = f"tokens[{i}]"
        if token.chain not in chains:
            raise ScenarioError(f"{p}.chain", f"chain {token.chain!r} is not in chains")
        if not isinstance(token.symbol, str) or not _SYMBOL.match(token.symbol):
            raise ScenarioError(f"{p}.symbol", "must be an upper-case symbol such as USDC")
        _address(token.address, f"{p}.address")
        _int(token.decimals, f"{p}.decimals", 0, "must be an integer from 0 to 36")
        if token.decimals > 36:
            raise ScenarioError(f"{p}.decimals", "must be an integer from 0 to 36")
        if token.fill_cost is not None:
            _int(token.fill_cost, f"{p}.fill_cost", 0, "must be a non-negative integer")
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
    if not isinstance(pools, tuple) or not pools:
        raise ScenarioError("pools", "must hold at least one pool")
    grouped: dict[tuple[int, str], list[Pool]] = {}
    seen: set[str] = set()
    for i, pool in enumerate(pools):
        p = f"pools[{i}]"
        if (pool.chain, pool.token) not in tokens:
            raise ScenarioError(f"{p}.token", f"no token {pool.token!r} on chain {pool.chain!r}")
        if pool.type not in POOL_TYPES:
            raise ScenarioError(f"{p}.type", f"must be one of {', '.join(POOL_TYPES)}")
        _address(pool.address, f"{p}.address")
        _int(pool.balance, f"{p}.balance", 1, "must be a positive integer")
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
    if not isinstance(s.routes, tuple) or not s.routes:
        raise ScenarioError("routes", "must hold at least one route")
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
        check_tiers(route.fee_tiers, f"{p}.fee_tiers")
        worst = max(t.fee_bps for t in route.fee_tiers) + s.pricing.premium_max_bps
        if worst >= _BPS:
            raise ScenarioError(f"{p}.fee_tiers", "fee plus maximum premium must be below 10000")
        key = (route.src, route.dst, route.token)
        if key in index:
            raise ScenarioError(p, f"route {route.src}->{route.dst} {route.token} is listed twice")
        index[key] = route
    return index


def _check_pricing(s: ScenarioParts) -> None:
    pricing = s.pricing
    kink = pricing.utilization_kink_bps
    if type(kink) is not int or not 0 <= kink < _BPS:
        raise ScenarioError("pricing.utilization_kink_bps", "must be an integer from 0 to 9999")
    _int(pricing.premium_max_bps, "pricing.premium_max_bps", 0, "must be a non-negative integer")
    seen: set[str] = set()
    for symbol, price in pricing.prices_usd:
        p = f"prices.{symbol}"
        if not isinstance(price, Decimal) or not price.is_finite() or price <= 0:
            raise ScenarioError(p, "must be a positive decimal")
        if symbol in seen:
            raise ScenarioError(p, "is listed twice")
        seen.add(symbol)


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


def _check_windows(s: ScenarioParts) -> None:
    w = s.windows
    for name in (f.name for f in fields(w)):
        minimum = 0 if name == "settlement_delay_seconds" else 1
        rule = "must be a non-negative integer" if minimum == 0 else "must be a positive integer"
        _int(getattr(w, name), f"windows.{name}", minimum, rule)


def _check_auth(s: ScenarioParts) -> None:
    keys = s.auth.api_keys
    if not isinstance(keys, tuple) or not keys:
        raise ScenarioError("auth.api_keys", "must hold at least one key")
    for i, key in enumerate(keys):
        if not isinstance(key, Secret):
            raise ScenarioError(f"auth.api_keys[{i}]", "must be a Secret")
    if not isinstance(s.auth.signer_key, Secret):
        raise ScenarioError("auth.signer_key", "must be a Secret")
    check_private_key(s.auth.signer_key.reveal(), "auth.signer_key")


def index_scenario(s: ScenarioParts) -> ScenarioIndex:
    """Validate ``s`` and return its look-up index; the first fault raises ScenarioError."""
    if not isinstance(s.name, str) or not _NAME.match(s.name):
        raise ScenarioError("name", "must be a lower-case name (letters, digits, - and _)")
    if not isinstance(s.description, str):
        raise ScenarioError("description", "must be a string")
    _address(s.filler, "filler")
    chains = _check_chains(s.chains)
    tokens, by_address = _check_tokens(s.tokens, chains)
    pools = _check_pools(s.pools, tokens)
    _check_pricing(s)
    routes = _check_routes(s, tokens, pools)
    costs = _fill_costs(s, chains, tokens)
    _check_windows(s)
    _check_auth(s)
    return ScenarioIndex(chains, tokens, by_address, pools, routes, costs)
