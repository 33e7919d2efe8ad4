"""The scenario's AMM markets (``[amm]``): the extra tokens the pools trade and the pools.

``[[amm.tokens]]`` lists tokens the intents surface does not onboard (``chain``, ``symbol``,
``address``, ``decimals``, ``price_usd``); a scenario ``[[tokens]]`` entry priced in
``[prices]`` may be traded too. ``[[amm.pools]]`` lists pools: ``chain``, ``kind`` (``v2`` or
``v3``), ``tokens`` (two symbols of that chain), ``fee`` (V3: 100, 500, 3000 or 10000 pips; V2:
30 bps, as Uniswap V2's pairs), ``depth_usd`` (the pool's value) and, for V3, ``shape``
(``volatile``: nested ranges out to ±90 %; ``stable``: out to ±10 %). Errors name the key path.

>>> from toolkit.scenario import load_scenario
>>> amm = load_scenario("default").amm
>>> len(amm.pools), amm.pools[0].tokens, amm.pools[0].fee
(16, ('USDC', 'WETH'), 500)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from toolkit.scenario.address import checksum
from toolkit.scenario.errors import ScenarioError
from toolkit.scenario.model import Pricing, Token

__all__ = ["AMM_FEES", "AmmMarkets", "AmmPool", "AmmToken", "parse_amm"]

#: Fees a pool kind takes: V3 in pips (the factory's tiers), V2 in bps.
AMM_FEES: Final = {"v3": (100, 500, 3000, 10000), "v2": (30,)}
_SHAPES: Final = ("volatile", "stable")


@dataclass(frozen=True, slots=True)
class AmmToken:
    """A token the pools trade beyond the scenario's ``[[tokens]]``."""

    chain: int
    symbol: str
    address: str
    decimals: int
    price_usd: Decimal


@dataclass(frozen=True, slots=True)
class AmmPool:
    """One pool: kind, chain, its two token symbols, fee, value in USD and liquidity shape."""

    chain: int
    kind: str
    tokens: tuple[str, str]
    fee: int
    depth_usd: int
    shape: str = "volatile"


@dataclass(frozen=True, slots=True)
class AmmMarkets:
    """Every ``[[amm.tokens]]`` and ``[[amm.pools]]`` entry (empty without ``[amm]``)."""

    tokens: tuple[AmmToken, ...] = ()
    pools: tuple[AmmPool, ...] = ()


def _keys(t: Any, path: str, required: set[str], optional: set[str]) -> Mapping[str, Any]:
    if not isinstance(t, Mapping):
        raise ScenarioError(path, "must be a table")
    missing = sorted(required - set(t))
    if missing:
        raise ScenarioError(f"{path}.{missing[0]}", "is required")
    unknown = sorted(set(t) - required - optional)
    if unknown:
        raise ScenarioError(f"{path}.{unknown[0]}", "is not a known key")
    return t


def _int(value: object, path: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ScenarioError(path, f"must be an integer >= {minimum}")
    return value


def _array(value: object, path: str) -> Sequence[Any]:
    if not isinstance(value, list):
        raise ScenarioError(path, "must be an array")
    return value


def parse_amm(doc: object, tokens: Sequence[Token], pricing: Pricing) -> AmmMarkets:
    """``[amm]`` checked against the scenario's tokens and prices (None: no markets)."""
    if doc is None:
        return AmmMarkets()
    root = _keys(doc, "amm", set(), {"tokens", "pools"})
    priced: dict[tuple[int, str], str] = {
        (t.chain, t.symbol): t.address for t in tokens if pricing.price_usd(t.symbol) is not None
    }
    extra: list[AmmToken] = []
    for i, raw in enumerate(_array(root.get("tokens", []), "amm.tokens")):
        path = f"amm.tokens[{i}]"
        t = _keys(raw, path, {"chain", "symbol", "address", "decimals", "price_usd"}, set())
        chain = _int(t["chain"], f"{path}.chain", 1)
        symbol = t["symbol"]
        if not isinstance(symbol, str) or not symbol.strip():
            raise ScenarioError(f"{path}.symbol", "must be a non-empty string")
        if (chain, symbol) in priced:
            raise ScenarioError(f"{path}.symbol", f"{symbol} is already a token of chain {chain}")
        try:
            price = Decimal(str(t["price_usd"]))
        except InvalidOperation:
            raise ScenarioError(f"{path}.price_usd", "must be a decimal number") from None
        if isinstance(t["price_usd"], bool) or not price.is_finite() or price <= 0:
            raise ScenarioError(f"{path}.price_usd", "must be a positive decimal number")
        address = checksum(t["address"], f"{path}.address")
        decimals = _int(t["decimals"], f"{path}.decimals", 0)
        if decimals > 36:
            raise ScenarioError(f"{path}.decimals", "must be at most 36")
        priced[(chain, symbol)] = address
        extra.append(AmmToken(chain, symbol, address, decimals, price))
    pools: list[AmmPool] = []
    for i, raw in enumerate(_array(root.get("pools", []), "amm.pools")):
        path = f"amm.pools[{i}]"
        t = _keys(raw, path, {"chain", "kind", "tokens", "fee", "depth_usd"}, {"shape"})
        chain = _int(t["chain"], f"{path}.chain", 1)
        kind = t["kind"]
        if kind not in AMM_FEES:
            raise ScenarioError(f"{path}.kind", "must be v2 or v3")
        pair = _array(t["tokens"], f"{path}.tokens")
        if len(pair) != 2 or pair[0] == pair[1]:
            raise ScenarioError(f"{path}.tokens", "must be two different token symbols")
        for symbol in pair:
            if (chain, symbol) not in priced:
                raise ScenarioError(
                    f"{path}.tokens",
                    f"{symbol!r} is neither a priced [[tokens]] entry nor an [[amm.tokens]] "
                    f"entry of chain {chain}",
                )
        fee = _int(t["fee"], f"{path}.fee", 0)
        if fee not in AMM_FEES[kind]:
            allowed = ", ".join(map(str, AMM_FEES[kind]))
            raise ScenarioError(f"{path}.fee", f"must be one of {allowed} for a {kind} pool")
        depth = _int(t["depth_usd"], f"{path}.depth_usd", 1)
        shape = t.get("shape", "volatile")
        if shape not in _SHAPES:
            raise ScenarioError(f"{path}.shape", "must be volatile or stable")
        pools.append(AmmPool(chain, kind, (pair[0], pair[1]), fee, depth, shape))
    return AmmMarkets(tuple(extra), tuple(pools))
