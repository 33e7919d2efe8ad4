"""Credit responses: account info, protocol config, operator, auto top-up, collateral."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import pytest

from toolkit.resources import (
    AutoTopUpConfig,
    CollateralDetailsResponse,
    CreditInfoResponse,
    InvalidInput,
    OperatorStatus,
    ProtocolConfig,
    parse,
)

from .conftest import FILLER, PAYER, USDC_BASE

INFO = {
    "debt": "750.25",
    "principal": "737.91",
    "interest": "12.34",
    "healthFactor": "1.85",
    "mHealthFactor": "1.10",
    "liquidationLimit": "900.00",
    "totalCollateralValue": "2500.00",
    "totalCreditCapacity": "2000.00",
    "remainingCreditCapacity": "1249.75",
    "dueDate": "2025-07-15T23:59:59Z",
}
VAULT = "0xeE8F4eC5672F09119b96Ab6fB59C27E1b7e44b61"
PROTOCOL = {
    "chains": {
        "eip155:8453": {
            "creditHubs": {
                "usdc": {
                    "creditHubAddress": PAYER,
                    "creditHubControllerAddress": FILLER,
                    "assetAddress": USDC_BASE,
                }
            },
            "collateral": {
                "erc20:" + VAULT.lower(): {
                    "escrowAddress": FILLER,
                    "symbol": "usdc",
                    "ltv": "7500",
                    "strategy": "vault-one",
                },
                "erc20:" + USDC_BASE.lower(): {
                    "escrowAddress": FILLER,
                    "symbol": "usdc",
                    "ltv": "9000",
                    "strategy": "",
                },
            },
            "strategies": {
                "vault-one": {
                    "name": "Vault One",
                    "curator": "Curator",
                    "protocol": "lending-v1",
                    "vaultAddress": VAULT,
                    "underlyingAddress": USDC_BASE,
                    "vaultType": "erc4626",
                    "type": "Lending",
                    "riskScore": "5",
                }
            },
            "escrowsMetadata": {"controller": PAYER, "helper": FILLER},
            "wrappedNativeAddress": "0x4200000000000000000000000000000000000006",
        }
    }
}


def message(model: Any, data: Any) -> str:
    with pytest.raises(InvalidInput) as caught:
        parse(model, data)
    return str(caught.value)


def test_credit_info_round_trip_and_lookup() -> None:
    response = parse(CreditInfoResponse, {"data": {"USDC": INFO}})
    info = response.for_asset("usdc")
    assert info.health_factor_decimal == Decimal("1.85")
    assert info.remaining_credit_capacity_decimal == Decimal("1249.75")
    assert response.to_wire() == {"data": {"USDC": INFO}}
    assert CreditInfoResponse.model_validate(response.to_wire()) == response
    with pytest.raises(KeyError, match="asset: no credit info for 'eure'"):
        response.for_asset("eure")


def test_credit_info_without_debt() -> None:
    quiet = {**INFO, "debt": "0", "healthFactor": "Infinity", "dueDate": None}
    info = parse(CreditInfoResponse, {"data": {"USDC": quiet}}).data["USDC"]
    assert info.due_date is None
    assert info.health_factor_decimal == Decimal("Infinity")
    # A null dueDate leaves the member out, which the published schema accepts.
    assert "dueDate" not in info.to_wire()


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("debt", "-1.00", "must be a decimal number in a string, e.g. 12.34"),
        ("debt", 750.25, "must be a decimal number in a string, e.g. 12.34"),
        ("healthFactor", "inf", "must be a decimal number in a string, e.g. 1.25, or Infinity"),
        ("dueDate", "2025-07-15", "must be an ISO 8601 date-time with a time zone"),
        ("remainingCreditCapacity", None, "must be a decimal number in a string, e.g. 12.34"),
    ],
)
def test_credit_info_rules(field: str, value: Any, rule: str) -> None:
    assert message(CreditInfoResponse, {"data": {"USDC": {**INFO, field: value}}}) == (
        f"data.USDC.{field}: {rule}"
    )


def test_credit_info_requires_every_figure() -> None:
    partial = {k: v for k, v in INFO.items() if k != "mHealthFactor"}
    assert message(CreditInfoResponse, {"data": {"USDC": partial}}) == (
        "data.USDC.mHealthFactor: is required"
    )


def test_protocol_config_round_trip() -> None:
    config = parse(ProtocolConfig, PROTOCOL)
    chain = config.chains["eip155:8453"]
    assert chain.credit_hubs["usdc"].asset_address == USDC_BASE
    assert chain.strategies["vault-one"].vault_type == "erc4626"
    assert chain.collateral["erc20:" + USDC_BASE.lower()].strategy == ""
    assert config.to_wire() == PROTOCOL
    assert ProtocolConfig.model_validate(config.to_wire()) == config


def test_protocol_config_rules() -> None:
    bad: Any = copy.deepcopy(PROTOCOL)
    chain = bad["chains"]["eip155:8453"]
    chain["collateral"]["erc20:" + VAULT] = chain["collateral"].pop("erc20:" + VAULT.lower())
    assert message(ProtocolConfig, bad) == (
        f"chains.eip155:8453.collateral.erc20:{VAULT} (key): "
        "must be erc20:<lowercase 20-byte hex address>"
    )
    bad = copy.deepcopy(PROTOCOL)
    bad["chains"]["eip155:8453"]["strategies"]["vault-one"]["riskScore"] = "high"
    assert message(ProtocolConfig, bad) == (
        "chains.eip155:8453.strategies.vault-one.riskScore: must be a string of digits"
    )
    bad = copy.deepcopy(PROTOCOL)
    del bad["chains"]["eip155:8453"]["escrowsMetadata"]["helper"]
    assert message(ProtocolConfig, bad) == "chains.eip155:8453.escrowsMetadata.helper: is required"
    bad = {"chains": {"base": PROTOCOL["chains"]["eip155:8453"]}}
    assert message(ProtocolConfig, bad).startswith("chains.base (key): must have the form")


def test_operator_status() -> None:
    wire = {"data": {"operator": FILLER, "receivers": [PAYER]}}
    status = parse(OperatorStatus, wire)
    assert status.to_wire() == wire
    assert message(OperatorStatus, {"data": {"operator": FILLER, "receivers": ["x"]}}) == (
        "data.receivers[0]: must be a 0x-prefixed 20-byte hex address"
    )


def test_auto_top_up_config() -> None:
    wire = {
        "config": {"threshold": "500000000", "targetBalance": "1000000000", "healthFactor": "10000"}
    }
    config = parse(AutoTopUpConfig, wire)
    assert config.to_wire() == wire
    assert AutoTopUpConfig.model_validate(config.to_wire()) == config
    low = {"config": {**wire["config"], "targetBalance": "499999999"}}
    assert message(AutoTopUpConfig, low) == "config.targetBalance: must be at least threshold"
    odd = {"config": {**wire["config"], "healthFactor": "1.0"}}
    assert message(AutoTopUpConfig, odd) == "config.healthFactor: must be a string of digits"


def test_collateral_details() -> None:
    wire = {
        "data": {
            "collateralAddress": VAULT,
            "collateralPriceUsd": 1.023456,
            "earnServiceName": "Curator",
            "isEarnVault": True,
            "apy": 4.56,
            "underlyingAsset": USDC_BASE,
            "underlyingPriceUsd": 1.0,
        }
    }
    details = parse(CollateralDetailsResponse, wire)
    assert details.data.is_earn_vault is True
    assert details.to_wire() == wire
    plain = {
        "collateralAddress": USDC_BASE,
        "collateralPriceUsd": 1,
        "earnServiceName": "",
        "isEarnVault": False,
    }
    assert parse(CollateralDetailsResponse, {"data": plain}).data.apy is None
    assert message(CollateralDetailsResponse, {"data": {**plain, "collateralPriceUsd": -1}}) == (
        "data.collateralPriceUsd: must be at least 0"
    )
