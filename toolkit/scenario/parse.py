"""Turn a parsed TOML document (a plain mapping) into a :class:`Scenario`.

Every type error names its key path (``pools[3].balance: must be a positive integer``); unknown
keys are errors too, so a misspelt key never silently falls back to a default.

Amounts may be TOML integers or strings of digits (TOML integers stop at 2**63, and 1000 WETH in
wei does not fit). Decimal figures (USD) may be strings or numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from typing import Any

from toolkit.scenario.address import check_private_key, checksum
from toolkit.scenario.amm import parse_amm
from toolkit.scenario.credit import parse_credit
from toolkit.scenario.errors import ScenarioError
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
from toolkit.scenario.scenario import Scenario
from toolkit.scenario.secret import Secret
from toolkit.scenario.validate import check_tiers

__all__ = ["ContractDefaults", "parse_scenario"]

#: Looks up default ``{"escrow", "output_settler", "oracle"}`` addresses for a chain id.
ContractDefaults = Callable[[int], Mapping[str, str] | None]

_CONTRACTS = ("escrow", "output_settler", "oracle")
_TOP = {
    "name",
    "description",
    "filler",
    "auth",
    "windows",
    "pricing",
    "prices",
    "contracts",
    "chains",
    "tokens",
    "pools",
    "fee_schedules",
    "routes",
    "amm",
    "credit",
}


def _table(value: object, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ScenarioError(path, "must be a table")
    return value


def _array(value: object, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise ScenarioError(path, "must be an array")
    return value


def _keys(table: Mapping[str, Any], path: str, required: set[str], optional: set[str]) -> None:
    for key in table:
        if key not in required and key not in optional:
            where = f"{path}.{key}" if path else key
            raise ScenarioError(where, "unknown key")
    for key in sorted(required):
        if key not in table:
            where = f"{path}.{key}" if path else key
            raise ScenarioError(where, "is required")


def _str(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise ScenarioError(path, "must be a string")
    return value


def _int(value: object, path: str, minimum: int = 0) -> int:
    rule = "must be a positive integer" if minimum > 0 else "must be a non-negative integer"
    if type(value) is not int or value < minimum:
        raise ScenarioError(path, rule)
    return value


def _amount(value: object, path: str, minimum: int = 0) -> int:
    """An amount in smallest units: a TOML integer or a string of digits."""
    if isinstance(value, str):
        if not value.isascii() or not value.isdigit():
            raise ScenarioError(path, "must be an integer or a string of digits")
        value = int(value)
    return _int(value, path, minimum)


def _decimal(value: object, path: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ScenarioError(path, "must be a decimal number (string or number)")
    try:
        # str() first so that a TOML float 0.05 becomes Decimal("0.05"), not its binary value.
        result = Decimal(str(value))
    except InvalidOperation:
        raise ScenarioError(path, "must be a decimal number (string or number)") from None
    if not result.is_finite():
        raise ScenarioError(path, "must be a finite decimal number")
    return result


def _block_time(value: object, path: str) -> float:
    """A block time in seconds: a positive finite number, at most one hour."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError(path, "must be a number of seconds > 0")
    seconds = float(value)
    if not 0 < seconds <= 3600:
        raise ScenarioError(path, "must be a number of seconds > 0 and <= 3600")
    return seconds


def _tiers(value: object, path: str) -> tuple[FeeTier, ...]:
    tiers = []
    for i, item in enumerate(_array(value, path)):
        p = f"{path}[{i}]"
        t = _table(item, p)
        _keys(t, p, {"fee_bps", "min_amount", "max_amount"}, set())
        tiers.append(
            FeeTier(
                fee_bps=_int(t["fee_bps"], f"{p}.fee_bps"),
                min_amount=_amount(t["min_amount"], f"{p}.min_amount"),
                max_amount=_amount(t["max_amount"], f"{p}.max_amount", 1),
            )
        )
    return check_tiers(tuple(tiers), path)


def _chains(doc: Mapping[str, Any], defaults: ContractDefaults | None) -> tuple[Chain, ...]:
    shared = _table(doc.get("contracts", {}), "contracts")
    _keys(shared, "contracts", set(), set(_CONTRACTS))
    chains = []
    for i, item in enumerate(_array(doc["chains"], "chains")):
        p = f"chains[{i}]"
        t = _table(item, p)
        _keys(
            t,
            p,
            {"id", "name", "confirmation_seconds", "fill_seconds", "fill_cost_usd"},
            {*_CONTRACTS, "block_time", "base_fee"},
        )
        chain_id = _int(t["id"], f"{p}.id", 1)
        fallback = defaults(chain_id) if defaults is not None else None
        contracts = {}
        for name in _CONTRACTS:
            value = t.get(name, shared.get(name))
            if value is None and fallback is not None:
                value = fallback.get(name)
            if value is None:
                raise ScenarioError(f"{p}.{name}", "is required (no [contracts] or registry value)")
            contracts[name] = checksum(value, f"{p}.{name}")
        chains.append(
            Chain(
                id=chain_id,
                name=_str(t["name"], f"{p}.name"),
                confirmation_seconds=_int(t["confirmation_seconds"], f"{p}.confirmation_seconds"),
                fill_seconds=_int(t["fill_seconds"], f"{p}.fill_seconds"),
                fill_cost_usd=_decimal(t["fill_cost_usd"], f"{p}.fill_cost_usd"),
                **contracts,
                block_time=_block_time(
                    t.get("block_time", BLOCK_TIMES.get(chain_id, DEFAULT_BLOCK_TIME)),
                    f"{p}.block_time",
                ),
                base_fee=_amount(
                    t.get("base_fee", BASE_FEES.get(chain_id, DEFAULT_BASE_FEE)), f"{p}.base_fee"
                ),
            )
        )
    return tuple(chains)


def _tokens(doc: Mapping[str, Any]) -> tuple[Token, ...]:
    tokens = []
    for i, item in enumerate(_array(doc["tokens"], "tokens")):
        p = f"tokens[{i}]"
        t = _table(item, p)
        _keys(t, p, {"chain", "symbol", "address", "decimals"}, {"fill_cost"})
        fill_cost = t.get("fill_cost")
        tokens.append(
            Token(
                chain=_int(t["chain"], f"{p}.chain", 1),
                symbol=_str(t["symbol"], f"{p}.symbol"),
                address=checksum(t["address"], f"{p}.address"),
                decimals=_int(t["decimals"], f"{p}.decimals"),
                fill_cost=None if fill_cost is None else _amount(fill_cost, f"{p}.fill_cost"),
            )
        )
    return tuple(tokens)


def _pools(doc: Mapping[str, Any]) -> tuple[Pool, ...]:
    pools = []
    for i, item in enumerate(_array(doc["pools"], "pools")):
        p = f"pools[{i}]"
        t = _table(item, p)
        _keys(t, p, {"chain", "token", "type", "address", "balance"}, set())
        pools.append(
            Pool(
                chain=_int(t["chain"], f"{p}.chain", 1),
                token=_str(t["token"], f"{p}.token"),
                type=_str(t["type"], f"{p}.type"),
                address=checksum(t["address"], f"{p}.address"),
                balance=_amount(t["balance"], f"{p}.balance", 1),
            )
        )
    return tuple(pools)


def _routes(doc: Mapping[str, Any]) -> tuple[Route, ...]:
    schedules_doc = _table(doc.get("fee_schedules", {}), "fee_schedules")
    schedules = {
        name: _tiers(value, f"fee_schedules.{name}") for name, value in schedules_doc.items()
    }
    routes = []
    for i, item in enumerate(_array(doc["routes"], "routes")):
        p = f"routes[{i}]"
        t = _table(item, p)
        _keys(t, p, {"src", "dst", "token", "fee_tiers"}, set())
        tiers_doc = t["fee_tiers"]
        if isinstance(tiers_doc, str):
            if tiers_doc not in schedules:
                raise ScenarioError(f"{p}.fee_tiers", f"no fee schedule named {tiers_doc!r}")
            tiers = schedules[tiers_doc]
        else:
            tiers = _tiers(tiers_doc, f"{p}.fee_tiers")
        routes.append(
            Route(
                src=_int(t["src"], f"{p}.src", 1),
                dst=_int(t["dst"], f"{p}.dst", 1),
                token=_str(t["token"], f"{p}.token"),
                fee_tiers=tiers,
            )
        )
    return tuple(routes)


def _pricing(doc: Mapping[str, Any]) -> Pricing:
    t = _table(doc["pricing"], "pricing")
    _keys(t, "pricing", {"utilization_kink_bps", "premium_max_bps"}, set())
    prices = _table(doc.get("prices", {}), "prices")
    return Pricing(
        utilization_kink_bps=_int(t["utilization_kink_bps"], "pricing.utilization_kink_bps"),
        premium_max_bps=_int(t["premium_max_bps"], "pricing.premium_max_bps"),
        prices_usd=tuple(
            (symbol, _decimal(value, f"prices.{symbol}")) for symbol, value in prices.items()
        ),
    )


def _windows(doc: Mapping[str, Any]) -> Windows:
    t = _table(doc.get("windows", {}), "windows")
    names = set(Windows.__dataclass_fields__)
    _keys(t, "windows", set(), names)
    return Windows(**{name: _int(value, f"windows.{name}") for name, value in t.items()})


def _auth(doc: Mapping[str, Any]) -> Auth:
    t = _table(doc["auth"], "auth")
    _keys(t, "auth", {"signer_key"}, {"api_keys"})
    keys_doc = _array(t.get("api_keys", ["demo-key"]), "auth.api_keys")
    keys = []
    for i, key in enumerate(keys_doc):
        if not isinstance(key, str) or not key:
            raise ScenarioError(f"auth.api_keys[{i}]", "must be a non-empty string")
        keys.append(Secret(key))
    signer = check_private_key(t["signer_key"], "auth.signer_key")
    return Auth(api_keys=tuple(keys), signer_key=Secret(signer))


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
    root = _table(doc, "(document)")
    _keys(
        root, "", {"name", "filler", "auth", "pricing", "chains", "tokens", "pools", "routes"}, _TOP
    )
    tokens = _tokens(root)
    scenario = Scenario(
        name=_str(root["name"], "name"),
        description=_str(root.get("description", ""), "description"),
        filler=checksum(root["filler"], "filler"),
        chains=_chains(root, contract_defaults),
        tokens=tokens,
        pools=_pools(root),
        routes=_routes(root),
        pricing=_pricing(root),
        auth=_auth(root),
        windows=_windows(root),
        credit=parse_credit(root.get("credit"), scenario=_str(root["name"], "name"), tokens=tokens),
    )
    if "amm" not in root:
        return scenario
    # Checked once the rest is valid: the pools refer to its tokens and prices.
    return replace(scenario, amm=parse_amm(root["amm"], scenario.tokens, scenario.pricing))
