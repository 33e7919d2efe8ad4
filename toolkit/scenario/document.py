"""The scenario TOML file as declared models: one per table, each field with its rule.

:func:`toolkit.scenario.parse.parse_scenario` validates a parsed document by
:class:`ScenarioDoc` and builds the frozen dataclasses of :mod:`toolkit.scenario.model` from it;
:mod:`toolkit.scenario.validate` checks a built scenario's parts by the same models (through
their attributes), then the relations between parts. The ``[amm]`` and ``[credit]`` tables are
declared beside their builders (:mod:`toolkit.scenario.amm`, :mod:`toolkit.scenario.credit`).

>>> from toolkit.scenario.fields import check
>>> check(TIERS, [{"fee_bps": 5, "min_amount": 0, "max_amount": 10},
...               {"fee_bps": 3, "min_amount": 11, "max_amount": 20}], "routes[0].fee_tiers")
Traceback (most recent call last):
...
toolkit.scenario.errors.ScenarioError: routes[0].fee_tiers: tiers must be contiguous
"""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Annotated, Final

from pydantic import AfterValidator, Field, TypeAdapter, model_validator

from toolkit.resources.base import RuleError
from toolkit.resources.declared import ConfigTable
from toolkit.scenario.amm import AmmDoc
from toolkit.scenario.credit import CreditDoc
from toolkit.scenario.fields import (
    Address,
    Amount,
    BlockTime,
    Count,
    Decimals,
    FeeBps,
    Name,
    NonEmptyText,
    NonNegativeDecimal,
    PoolType,
    Positive,
    PositiveAmount,
    PositiveDecimal,
    PrivateKey,
    Symbol,
    at_least_one,
)
from toolkit.scenario.model import Windows
from toolkit.scenario.rebalancing import BridgeDoc, RebalancingDoc

__all__ = [
    "PARTS",
    "PRICES",
    "SCENARIO",
    "TIERS",
    "AuthDoc",
    "ChainDoc",
    "ContractsDoc",
    "FeeTierDoc",
    "PartsDoc",
    "PoolDoc",
    "PricingDoc",
    "RouteDoc",
    "ScenarioDoc",
    "TokenDoc",
    "WindowsDoc",
]


class FeeTierDoc(ConfigTable):
    """A fee for amounts in ``[min_amount, max_amount)``."""

    fee_bps: FeeBps
    min_amount: Amount
    max_amount: PositiveAmount

    @model_validator(mode="after")
    def _ordered(self) -> FeeTierDoc:
        if self.max_amount <= self.min_amount:
            raise RuleError(("max_amount",), "must be greater than min_amount")
        return self


def _contiguous(tiers: tuple[FeeTierDoc, ...]) -> tuple[FeeTierDoc, ...]:
    for before, after in itertools.pairwise(tiers):
        if after.min_amount != before.max_amount:
            raise ValueError("tiers must be contiguous")
    return tiers


#: A fee schedule: at least one tier, tiers contiguous and ascending.
Tiers = Annotated[tuple[FeeTierDoc, ...], at_least_one("fee tier"), AfterValidator(_contiguous)]


class ContractsDoc(ConfigTable):
    """The escrow-side contracts (``[contracts]``, or a chain's own keys)."""

    escrow: Address | None = None
    output_settler: Address | None = None
    oracle: Address | None = None


class ChainDoc(ContractsDoc):
    """A ``[[chains]]`` entry; block time and base fee default per chain id."""

    id: Positive
    name: Name
    confirmation_s: Count
    fill_s: Count
    fill_cost_usd: NonNegativeDecimal
    block_time_s: BlockTime | None = None
    base_fee: Amount | None = None


class TokenDoc(ConfigTable):
    """A ``[[tokens]]`` entry; ``fill_cost`` (smallest units) overrides the chain's USD cost."""

    chain: Positive
    symbol: Symbol
    address: Address
    decimals: Decimals
    fill_cost: Amount | None = None


class PoolDoc(ConfigTable):
    """A ``[[pools]]`` entry."""

    chain: Positive
    token: str
    type: PoolType
    address: Address
    balance: PositiveAmount


class RouteDoc(ConfigTable):
    """A ``[[routes]]`` entry (a named fee schedule is resolved before validation)."""

    src: Positive
    dst: Positive
    token: str
    fee_tiers: Tiers


class PricingDoc(ConfigTable):
    """``[pricing]``: the utilization premium's kink and ceiling."""

    utilization_kink_bps: FeeBps
    premium_max_bps: Count


_WINDOWS: Final = Windows()


class WindowsDoc(ConfigTable):
    """``[windows]`` in seconds; each key defaults to the spec's value (:class:`Windows`)."""

    quote_s: Positive = _WINDOWS.quote_s
    order_s: Positive = _WINDOWS.order_s
    borrow_quote_s: Positive = _WINDOWS.borrow_quote_s
    exclusive_s: Positive = _WINDOWS.exclusive_s
    open_s: Positive = _WINDOWS.open_s
    same_chain_expiry_buffer_s: Positive = _WINDOWS.same_chain_expiry_buffer_s
    cross_chain_expiry_buffer_s: Positive = _WINDOWS.cross_chain_expiry_buffer_s
    settlement_delay_s: Count = _WINDOWS.settlement_delay_s


class AuthDoc(ConfigTable):
    """``[auth]``: accepted API keys (default ``demo-key``) and the signing key."""

    api_keys: Annotated[tuple[NonEmptyText, ...], at_least_one("key")] = ("demo-key",)
    signer_key: PrivateKey


Chains = Annotated[tuple[ChainDoc, ...], at_least_one("chain")]
Tokens = Annotated[tuple[TokenDoc, ...], at_least_one("token")]
Pools = Annotated[tuple[PoolDoc, ...], at_least_one("pool")]
Routes = Annotated[tuple[RouteDoc, ...], at_least_one("route")]


class PartsDoc(ConfigTable):
    """What a built :class:`~toolkit.scenario.scenario.Scenario` is checked by, field by field."""

    name: Name
    description: str
    filler: Address
    chains: Chains
    tokens: Tokens
    pools: Pools
    routes: Routes
    pricing: PricingDoc
    windows: WindowsDoc
    rebalancing: RebalancingDoc
    bridges: tuple[BridgeDoc, ...]


class ScenarioDoc(ConfigTable):
    """A whole scenario file, in the order its tables are checked."""

    name: Name
    description: str = ""
    filler: Address
    contracts: ContractsDoc = ContractsDoc()
    chains: Chains
    tokens: Tokens
    pools: Pools
    fee_schedules: dict[str, Tiers] = Field(default_factory=dict)
    routes: Routes
    pricing: PricingDoc
    prices: dict[str, PositiveDecimal] = Field(default_factory=dict)
    windows: WindowsDoc = WindowsDoc()
    auth: AuthDoc
    credit: CreditDoc | None = None
    amm: AmmDoc | None = None
    rebalancing: RebalancingDoc | None = None
    bridges: tuple[BridgeDoc, ...] = ()


SCENARIO: Final = TypeAdapter(ScenarioDoc)
PARTS: Final = TypeAdapter(PartsDoc)
TIERS: Final[TypeAdapter[tuple[FeeTierDoc, ...]]] = TypeAdapter(Tiers)
PRICES: Final[TypeAdapter[dict[str, Decimal]]] = TypeAdapter(dict[str, PositiveDecimal])
