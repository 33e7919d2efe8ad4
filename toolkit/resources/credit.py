"""Credit API responses: account info, protocol configuration, operator status, auto top-up
configuration and collateral details."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Final

from pydantic import BeforeValidator, WithJsonSchema, model_validator

from toolkit.resources.base import Resource, RuleError
from toolkit.resources.types import (
    Amount,
    Caip2,
    DateTimeText,
    DecimalText,
    DigitString,
    Flag,
    HealthFactorText,
    HexAddress,
    NonEmptyStr,
    Number,
    at_least,
)

__all__ = [
    "AutoTopUpConfig",
    "AutoTopUpSettings",
    "ChainConfig",
    "CollateralConfig",
    "CollateralDetails",
    "CollateralDetailsResponse",
    "CreditAccountInfo",
    "CreditHub",
    "CreditInfoResponse",
    "EarnStrategy",
    "EscrowsMetadata",
    "OperatorInfo",
    "OperatorStatus",
    "ProtocolConfig",
]

_COLLATERAL_KEY_RE: Final = re.compile(r"erc20:0x[0-9a-f]{40}")


def _collateral_key(value: object) -> str:
    if not isinstance(value, str) or _COLLATERAL_KEY_RE.fullmatch(value) is None:
        raise ValueError("must be erc20:<lowercase 20-byte hex address>")
    return value


CollateralKey = Annotated[
    str,
    BeforeValidator(_collateral_key),
    WithJsonSchema({"type": "string", "pattern": "^erc20:0x[0-9a-f]{40}$"}),
]


class CreditAccountInfo(Resource):
    """One credit asset's position; figures are decimal strings in human units.

    >>> info = CreditAccountInfo(debt="0", principal="0", interest="0", health_factor="Infinity",
    ...     m_health_factor="Infinity", liquidation_limit="0", total_collateral_value="100.5",
    ...     total_credit_capacity="90", remaining_credit_capacity="90")
    >>> info.health_factor_decimal
    Decimal('Infinity')
    """

    debt: DecimalText
    principal: DecimalText
    interest: DecimalText
    health_factor: HealthFactorText
    m_health_factor: HealthFactorText
    liquidation_limit: DecimalText
    total_collateral_value: DecimalText
    total_credit_capacity: DecimalText
    remaining_credit_capacity: DecimalText
    due_date: DateTimeText | None = None

    @property
    def health_factor_decimal(self) -> Decimal:
        """``healthFactor`` as a ``Decimal`` (``Infinity`` when there is no debt)."""
        return Decimal(self.health_factor)

    @property
    def remaining_credit_capacity_decimal(self) -> Decimal:
        """``remainingCreditCapacity`` as a ``Decimal``."""
        return Decimal(self.remaining_credit_capacity)


class CreditInfoResponse(Resource):
    """``{data: {SYMBOL: CreditAccountInfo}}`` (symbols in upper case, e.g. ``USDC``)."""

    data: dict[NonEmptyStr, CreditAccountInfo]

    def for_asset(self, asset: str) -> CreditAccountInfo:
        """The info for a credit asset symbol, in any case (``usdc`` finds ``USDC``)."""
        for symbol, info in self.data.items():
            if symbol.lower() == asset.lower():
                return info
        raise KeyError(f"asset: no credit info for {asset!r}")


class CreditHub(Resource):
    """A credit hub of one credit asset."""

    credit_hub_address: HexAddress
    credit_hub_controller_address: HexAddress
    asset_address: HexAddress


class CollateralConfig(Resource):
    """An accepted collateral token: its escrow, symbol, LTV (basis points) and strategy key."""

    escrow_address: HexAddress
    symbol: NonEmptyStr
    ltv: DigitString
    # Empty when the collateral has no earn strategy.
    strategy: str


class EarnStrategy(Resource):
    """An earn-vault strategy."""

    name: NonEmptyStr
    curator: NonEmptyStr
    protocol: NonEmptyStr
    vault_address: HexAddress
    underlying_address: HexAddress
    vault_type: NonEmptyStr
    type: NonEmptyStr
    risk_score: DigitString


class EscrowsMetadata(Resource):
    """Escrow controller and helper contracts of a chain."""

    controller: HexAddress
    helper: HexAddress


class ChainConfig(Resource):
    """One chain of the credit protocol configuration."""

    credit_hubs: dict[NonEmptyStr, CreditHub]
    collateral: dict[CollateralKey, CollateralConfig]
    strategies: dict[NonEmptyStr, EarnStrategy]
    escrows_metadata: EscrowsMetadata
    wrapped_native_address: HexAddress


class ProtocolConfig(Resource):
    """``GET /credit/protocol``: ``{chains: {CAIP-2: ChainConfig}}``."""

    chains: dict[Caip2, ChainConfig]


class OperatorInfo(Resource):
    """The account's operator and its whitelisted credit receivers."""

    operator: HexAddress
    receivers: list[HexAddress]


class OperatorStatus(Resource):
    """``{data: OperatorInfo}``."""

    data: OperatorInfo


class AutoTopUpSettings(Resource):
    """Auto top-up: refill ``receiver`` to ``targetBalance`` when it falls below ``threshold``.

    >>> AutoTopUpSettings(threshold="5", target_balance="10", health_factor="10000").to_wire()
    {'threshold': '5', 'targetBalance': '10', 'healthFactor': '10000'}
    """

    threshold: Amount
    target_balance: Amount
    health_factor: DigitString

    @model_validator(mode="after")
    def _target_at_least_threshold(self) -> AutoTopUpSettings:
        if int(self.target_balance) < int(self.threshold):
            raise RuleError(("targetBalance",), "must be at least threshold")
        return self


class AutoTopUpConfig(Resource):
    """``{config: AutoTopUpSettings}``."""

    config: AutoTopUpSettings


class CollateralDetails(Resource):
    """Details of a collateral asset: price, earn vault flag and, for vaults, APY and
    underlying."""

    collateral_address: HexAddress
    collateral_price_usd: Annotated[Number, at_least(0)]
    earn_service_name: str
    is_earn_vault: Flag
    apy: Number | None = None
    underlying_asset: HexAddress | None = None
    underlying_price_usd: Annotated[Number, at_least(0)] | None = None


class CollateralDetailsResponse(Resource):
    """``{data: CollateralDetails}``."""

    data: CollateralDetails
