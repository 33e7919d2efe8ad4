"""A credit scenario's collateral (``[[credit.collateral]]``): the entries as declared models, the
published default list, and the :class:`CreditCollateral` each entry builds.

An entry whose symbol the product knows (:data:`toolkit.credit.DEFAULT_RULES`) takes that rule's
values for the keys it leaves out; any other symbol must give them all.

>>> from toolkit.scenario import load_scenario
>>> [c.symbol for c in load_scenario("default").credit.collateral]
['USDC', 'gtUSDCp', 'superUSDC', 'yoUSD', 'yoBTC']
"""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Annotated, Final

from pydantic import AfterValidator, BeforeValidator

from toolkit.credit import DEFAULT_RULES, CollateralRule
from toolkit.resources.declared import ConfigTable
from toolkit.scenario.credit_settings import CBBTC, CreditCollateral, VaultYield, derive_address
from toolkit.scenario.errors import ScenarioError
from toolkit.scenario.fields import Address, Amount, NonNegativeDecimal, TickerSymbol
from toolkit.scenario.model import Token

__all__ = [
    "CollateralDoc",
    "Collaterals",
    "PricePath",
    "UnderlyingDoc",
    "VaultDoc",
    "build_collateral",
    "default_collateral",
]

_DAY: Final = 86_400
_POINTS: Final = "must be a non-empty array of [unix seconds, USD] points"


def _point(value: object) -> object:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ValueError("must be a [unix seconds, USD] pair")
    return value


def _points(value: object) -> object:
    if not isinstance(value, list | tuple) or not value:
        raise ValueError(_POINTS)
    return value


def _increasing(points: tuple[tuple[int, Decimal], ...]) -> tuple[tuple[int, Decimal], ...]:
    if any(b[0] <= a[0] for a, b in itertools.pairwise(points)):
        raise ValueError("times must increase strictly")
    return points


Point = Annotated[tuple[Amount, NonNegativeDecimal], BeforeValidator(_point)]
#: ``[[unix seconds, USD], ...]``: linear in between, flat outside.
PricePath = Annotated[tuple[Point, ...], BeforeValidator(_points), AfterValidator(_increasing)]


class UnderlyingDoc(ConfigTable):
    """A vault's own underlying token."""

    symbol: TickerSymbol
    address: Address
    decimals: Amount = 18


class VaultDoc(ConfigTable):
    """A vault over the credit asset (or ``underlying``); with ``redeem_delay_s``, an
    ERC-7540 vault."""

    apy_bps: Amount = 0
    epoch: Amount = 0
    redeem_delay_s: Amount | None = None
    underlying: UnderlyingDoc | None = None


class CollateralDoc(ConfigTable):
    """A ``[[credit.collateral]]`` entry; a rule key the product knows fills the rule's gaps."""

    symbol: TickerSymbol
    kind: str | None = None
    decimals: Amount | None = None
    ltv_bps: Amount | None = None
    maintenance_ltv_bps: Amount | None = None
    liquidation_bonus_bps: Amount | None = None
    address: Address | None = None
    prices: PricePath | None = None
    vault: VaultDoc | None = None


def _collaterals(value: object) -> object:
    if not isinstance(value, list | tuple) or not value:
        raise ValueError("must be a non-empty array of tables")
    return value


#: ``[[credit.collateral]]``: given, it replaces the default list, so it holds at least one entry.
Collaterals = Annotated[tuple[CollateralDoc, ...], BeforeValidator(_collaterals)]


def default_collateral(scenario: str, asset: Token) -> tuple[CreditCollateral, ...]:
    rules = DEFAULT_RULES.collateral
    one = ((0, Decimal(1)),)
    epoch = 1_760_000_000
    return (
        CreditCollateral("USDC", rules["usdc"], asset.address, asset.decimals, one),
        CreditCollateral(
            "gtUSDCp",
            rules["gtusdcp"],
            derive_address(scenario, "vault:gtusdcp"),
            18,
            vault=VaultYield(apy_bps=500, epoch=epoch),
        ),
        CreditCollateral(
            "superUSDC",
            rules["superusdc"],
            derive_address(scenario, "vault:superusdc"),
            6,
            vault=VaultYield(apy_bps=550, epoch=epoch, redeem_delay_s=_DAY),
        ),
        CreditCollateral(
            "yoUSD",
            rules["yousd"],
            derive_address(scenario, "vault:yousd"),
            6,
            vault=VaultYield(apy_bps=600, epoch=epoch, redeem_delay_s=_DAY),
        ),
        CreditCollateral(
            "yoBTC",
            rules["yobtc"],
            derive_address(scenario, "vault:yobtc"),
            8,
            ((0, Decimal(60_000)),),
            VaultYield(
                apy_bps=150,
                epoch=epoch,
                redeem_delay_s=_DAY,
                underlying=("cbBTC", CBBTC, 8),
            ),
        ),
    )


def _rule(entry: CollateralDoc, path: str) -> CollateralRule:
    """The entry's collateral rule; a key the product knows fills the keys the entry leaves out."""
    key = entry.symbol.lower()
    default = DEFAULT_RULES.collateral.get(key)
    missing = "must be a non-negative integer (no product default for this symbol)"

    def given(name: str) -> int:
        value = getattr(entry, name)
        if value is None:
            if default is None:
                raise ScenarioError(f"{path}.{name}", missing)
            value = getattr(default, name)
        assert isinstance(value, int)
        return value

    kind = entry.kind if entry.kind is not None else (default.kind if default else "")
    ltv, maintenance, bonus = (
        given(n) for n in ("ltv_bps", "maintenance_ltv_bps", "liquidation_bonus_bps")
    )
    try:
        return CollateralRule(key, kind, ltv, maintenance, bonus)
    except ValueError as exc:  # ArgumentError names the field and the rule
        raise ScenarioError(path, str(exc)) from None


def _one_collateral(
    entry: CollateralDoc, path: str, scenario: str, asset: Token
) -> CreditCollateral:
    rule = _rule(entry, path)
    is_asset = entry.symbol.lower() == asset.symbol.lower()
    decimals = asset.decimals if is_asset else (18 if entry.decimals is None else entry.decimals)
    if entry.address is not None:
        address = entry.address
    else:
        role = "vault" if entry.vault is not None else "token"
        key = entry.symbol.lower()
        address = asset.address if is_asset else derive_address(scenario, f"{role}:{key}")
    default_path = ((0, Decimal(1)),)
    prices = default_path if entry.prices is None else entry.prices
    v = entry.vault
    if v is None:
        return CreditCollateral(entry.symbol, rule, address, decimals, prices)
    u = v.underlying
    underlying = None if u is None else (u.symbol, u.address, u.decimals)
    vault = VaultYield(v.apy_bps, v.epoch, v.redeem_delay_s, underlying)
    if decimals < (asset.decimals if u is None else u.decimals):
        raise ScenarioError(f"{path}.decimals", "a vault's must be >= its asset's")
    # A vault over the credit asset is priced by its share price, not a path.
    return CreditCollateral(
        entry.symbol, rule, address, decimals, () if u is None else prices, vault
    )


def build_collateral(
    entries: tuple[CollateralDoc, ...], scenario: str, asset: Token
) -> tuple[CreditCollateral, ...]:
    out = tuple(
        _one_collateral(entry, f"credit.collateral[{i}]", scenario, asset)
        for i, entry in enumerate(entries)
    )
    keys = [c.key for c in out]
    if len(set(keys)) != len(keys):
        raise ScenarioError("credit.collateral", "symbols must be distinct")
    return out
