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

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Final

from pydantic import PlainValidator, TypeAdapter, model_validator

from toolkit.resources.base import RuleError
from toolkit.resources.declared import ConfigTable, choice_rule
from toolkit.scenario.errors import ScenarioError
from toolkit.scenario.fields import (
    Address,
    Count,
    Decimals,
    NonEmptyText,
    Positive,
    PositiveDecimal,
    check,
)
from toolkit.scenario.model import Pricing, Token

__all__ = ["AMM_FEES", "AmmDoc", "AmmMarkets", "AmmPool", "AmmToken", "parse_amm"]

#: Fees a pool kind takes: V3 in pips (the factory's tiers), V2 in bps.
AMM_FEES: Final = {"v3": (100, 500, 3000, 10000), "v2": (30,)}


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


def _pair(value: object) -> tuple[str, str]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, str) for v in value)
        or value[0] == value[1]
    ):
        raise ValueError("must be two different token symbols")
    return value[0], value[1]


class AmmTokenDoc(ConfigTable):
    """An ``[[amm.tokens]]`` entry."""

    chain: Positive
    symbol: NonEmptyText
    address: Address
    decimals: Decimals
    price_usd: PositiveDecimal


class AmmPoolDoc(ConfigTable):
    """An ``[[amm.pools]]`` entry; its fee must be one its kind takes."""

    chain: Positive
    kind: Annotated[str, choice_rule("must be v2 or v3", *AMM_FEES)]
    tokens: Annotated[tuple[str, str], PlainValidator(_pair)]
    fee: Count
    depth_usd: Positive
    shape: Annotated[str, choice_rule("must be volatile or stable", "volatile", "stable")] = (
        "volatile"
    )

    @model_validator(mode="after")
    def _fee_of_kind(self) -> AmmPoolDoc:
        if self.fee not in AMM_FEES[self.kind]:
            allowed = ", ".join(map(str, AMM_FEES[self.kind]))
            raise RuleError(("fee",), f"must be one of {allowed} for a {self.kind} pool")
        return self


class AmmDoc(ConfigTable):
    """``[amm]``: its tokens and pools."""

    tokens: tuple[AmmTokenDoc, ...] = ()
    pools: tuple[AmmPoolDoc, ...] = ()


_AMM: Final = TypeAdapter(AmmDoc)


def parse_amm(doc: object, tokens: Sequence[Token], pricing: Pricing) -> AmmMarkets:
    """``[amm]`` checked against the scenario's tokens and prices (None: no markets)."""
    if doc is None:
        return AmmMarkets()
    amm = doc if isinstance(doc, AmmDoc) else check(_AMM, doc, "amm")
    priced: dict[tuple[int, str], str] = {
        (t.chain, t.symbol): t.address for t in tokens if pricing.price_usd(t.symbol) is not None
    }
    extra: list[AmmToken] = []
    for i, t in enumerate(amm.tokens):
        if (t.chain, t.symbol) in priced:
            raise ScenarioError(
                f"amm.tokens[{i}].symbol", f"{t.symbol} is already a token of chain {t.chain}"
            )
        priced[(t.chain, t.symbol)] = t.address
        extra.append(AmmToken(t.chain, t.symbol, t.address, t.decimals, t.price_usd))
    pools: list[AmmPool] = []
    for i, p in enumerate(amm.pools):
        for symbol in p.tokens:
            if (p.chain, symbol) not in priced:
                raise ScenarioError(
                    f"amm.pools[{i}].tokens",
                    f"{symbol!r} is neither a priced [[tokens]] entry nor an [[amm.tokens]] "
                    f"entry of chain {p.chain}",
                )
        pools.append(AmmPool(p.chain, p.kind, p.tokens, p.fee, p.depth_usd, p.shape))
    return AmmMarkets(tuple(extra), tuple(pools))
