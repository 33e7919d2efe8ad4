"""Queries of the credit and earn endpoints, and the earn results."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit.resources import (
    AutoTopUpQuery,
    ClaimQuery,
    CreditAsset,
    DrawQuery,
    InvalidInput,
    LockQuery,
    ReceiverQuery,
    RepayQuery,
    UnlockQuery,
    UnwrapQuery,
    UnwrapResult,
    WrapQuery,
    WrapResult,
    parse,
    parse_query,
    parse_value,
)

from .conftest import FILLER, PAYER, USDC_BASE

CALL = {"chain": "8453", "to": USDC_BASE, "data": "0x", "value": "0"}


def query_error(model: Any, params: dict[str, str]) -> str:
    with pytest.raises(InvalidInput) as caught:
        parse_query(model, params)
    return str(caught.value)


def round_trips(model: Any, params: dict[str, str]) -> Any:
    query = parse_query(model, params)
    text = {
        k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in query.to_wire().items()
    }
    assert parse_query(model, text) == query
    return query


def test_credit_asset_path_parameter() -> None:
    assert parse_value(CreditAsset, "eure", "asset") == "eure"
    with pytest.raises(InvalidInput, match=r"^asset: must be 'usdc' or 'eure'$"):
        parse_value(CreditAsset, "USDC", "asset")


def test_lock_query() -> None:
    query = round_trips(LockQuery, {"amount": "5", "earnAsset": USDC_BASE, "earn": "vault-one"})
    assert query.earn == "vault-one"
    assert round_trips(LockQuery, {"amount": "5", "earnAsset": USDC_BASE}).earn is None
    assert query_error(LockQuery, {"amount": "5"}) == "earnAsset: is required"
    assert query_error(LockQuery, {"amount": "5", "earnAsset": USDC_BASE, "asset": "usdc"}) == (
        "asset: is not a known parameter"
    )


def test_unlock_query() -> None:
    params = {"amount": "5", "collateral": USDC_BASE, "unwrap": "true"}
    assert round_trips(UnlockQuery, params).unwrap is True
    assert query_error(UnlockQuery, {**params, "unwrap": "maybe"}) == (
        "unwrap: must be true or false"
    )
    assert query_error(UnlockQuery, {**params, "amount": "0"}) == "amount: must be greater than 0"


def test_draw_and_repay_queries() -> None:
    assert round_trips(DrawQuery, {"amount": "1000000", "receiver": FILLER}).amount_int == 10**6
    assert query_error(DrawQuery, {"amount": "1.5", "receiver": FILLER}) == (
        "amount: must be a string of digits"
    )
    assert round_trips(RepayQuery, {"amount": "7"}).amount_int == 7
    assert query_error(RepayQuery, {}) == "amount: is required"


def test_auto_top_up_query() -> None:
    params = {"receiver": FILLER, "threshold": "500", "targetBalance": "1000"}
    assert round_trips(AutoTopUpQuery, params).health_factor is None
    assert round_trips(AutoTopUpQuery, {**params, "healthFactor": "12000"}).health_factor == "12000"
    assert round_trips(AutoTopUpQuery, {**params, "targetBalance": "500"}).target_balance == "500"
    assert query_error(AutoTopUpQuery, {**params, "targetBalance": "499"}) == (
        "targetBalance: must be at least threshold"
    )
    assert query_error(AutoTopUpQuery, {**params, "healthFactor": "1.2"}) == (
        "healthFactor: must be a string of digits"
    )


def test_receiver_query() -> None:
    assert round_trips(ReceiverQuery, {"receiver": FILLER.lower()}).receiver == FILLER
    assert query_error(ReceiverQuery, {"receiver": "me"}) == (
        "receiver: must be a 0x-prefixed 20-byte hex address"
    )


def test_wrap_query_and_result() -> None:
    params = {"account": PAYER, "amount": "10", "token": USDC_BASE, "chain": "eip155:8453"}
    assert round_trips(WrapQuery, params).earn is None
    assert query_error(WrapQuery, {**params, "chain": "8453"}).startswith(
        "chain: must have the form"
    )
    wire = {"amountOut": "9", "calls": [CALL], "tokenOut": FILLER}
    result = parse(WrapResult, wire)
    assert result.to_wire() == wire
    assert WrapResult.model_validate(result.to_wire()) == result


def test_unwrap_query() -> None:
    params = {
        "owner": PAYER,
        "receiver": PAYER,
        "amount": "10",
        "asset": FILLER,
        "chain": "eip155:8453",
    }
    assert round_trips(UnwrapQuery, params).slippage == 0.3
    assert round_trips(UnwrapQuery, {**params, "slippage": "0.5"}).slippage == 0.5
    assert round_trips(UnwrapQuery, {**params, "slippage": "100"}).slippage == 100
    assert query_error(UnwrapQuery, {**params, "slippage": "-0.1"}) == (
        "slippage: must be between 0 and 100"
    )
    assert query_error(UnwrapQuery, {**params, "slippage": "half"}) == "slippage: must be a number"


def test_unwrap_result() -> None:
    wire = {"amountOut": "1000000", "minAmountOut": "997000", "tokenOut": USDC_BASE, "calls": []}
    result = parse(UnwrapResult, wire)
    assert result.to_wire() == wire
    with pytest.raises(InvalidInput, match=r"^minAmountOut: must not exceed amountOut$"):
        parse(UnwrapResult, {**wire, "minAmountOut": "1000001"})


def test_claim_query() -> None:
    params = {
        "owner": PAYER,
        "receiver": PAYER,
        "asset": FILLER,
        "chain": "eip155:8453",
        "claimRequestId": "17",
    }
    assert round_trips(ClaimQuery, params).claim_request_id == "17"
    assert query_error(ClaimQuery, {**params, "claimRequestId": ""}) == (
        "claimRequestId: must not be empty"
    )
