"""Liquidity API resources and the liquidity event payloads."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit.resources import (
    BorrowAuthorization,
    BorrowQuote,
    BorrowQuoteQuery,
    BorrowQuoteResponse,
    FeeEvent,
    FeesQuery,
    FeesResponse,
    FeeTier,
    Health,
    InvalidInput,
    LiquidityEvent,
    PoolLiquidityResponse,
    PoolsQuery,
    SignatureBody,
    SignatureResponse,
    SolverQuery,
    SolverResponse,
    TokensResponse,
    parse,
    parse_query,
)

from .conftest import FILLER, PAYER, TX_HASH, USDC_ARBITRUM, USDC_BASE

BORROW_QUOTE = {
    "borrowCost": "150000",
    "duration": 300,
    "estimatedFillDuration": 180,
    "feeBps": 5,
    "id": "qt_a1b2c3d4e5f6",
    "liquidityPool": USDC_BASE,
    "quoteDuration": 60,
    "repaymentChain": 1,
    "repaymentRecipient": FILLER,
    "requiredInput": "100000000",
    "requiredOutput": "99850000",
}
AUTHORIZATION = {
    "borrowAmount": "99850000",
    "borrowCost": "150000",
    "borrowToken": USDC_ARBITRUM,
    "liquidityPool": USDC_BASE,
    "nonce": "12",
    "signature": "0x" + "11" * 65,
    "deadline": "1750000000",
}


def message(model: Any, data: Any, query: bool = False) -> str:
    with pytest.raises(InvalidInput) as caught:
        if query:
            parse_query(model, data)
        else:
            parse(model, data)
    return str(caught.value)


def test_tokens_response() -> None:
    wire = {"data": {"USDC": {"address": USDC_BASE, "decimals": 6}}}
    response = parse(TokensResponse, wire)
    assert response.data["USDC"].decimals == 6
    assert response.to_wire() == wire
    assert message(TokensResponse, {"data": {"USDC": {"address": USDC_BASE, "decimals": 256}}}) == (
        "data.USDC.decimals: must be between 0 and 255"
    )
    assert message(TokensResponse, {"data": {"": {"address": USDC_BASE, "decimals": 6}}}) == (
        'data."" (key): must not be empty'
    )


def test_pools_query_and_response() -> None:
    query = parse_query(PoolsQuery, {"chain": "eip155:8453", "tokenSymbol": "USDC"})
    assert (query.chain_id, query.token_symbol) == (8453, "USDC")
    assert message(PoolsQuery, {"chain": "eip155:8453"}, query=True) == "tokenSymbol: is required"
    response = parse(PoolLiquidityResponse, {"data": {"address": USDC_BASE, "balance": "5"}})
    assert response.data.balance_int == 5
    assert message(PoolLiquidityResponse, {"data": {"address": USDC_BASE, "balance": 5}}) == (
        "data.balance: must be a string of digits"
    )


def test_fees_query() -> None:
    params = {"srcChain": "eip155:1", "dstChain": "eip155:10", "srcToken": "USDC", "dstToken": "x"}
    assert parse_query(FeesQuery, params).src_token == "USDC"
    assert message(FeesQuery, {**params, "dstToken": ""}, query=True) == (
        "dstToken: must not be empty"
    )


def test_fee_tiers() -> None:
    wire = {
        "data": [
            {"feeBps": 5, "minAmount": 0, "maxAmount": 100_000_000_000},
            {"feeBps": 3.5, "minAmount": 100_000_000_000, "maxAmount": 1_000_000_000_000},
        ]
    }
    response = parse(FeesResponse, wire)
    assert response.data[1].fee_bps == 3.5
    assert FeesResponse.model_validate(response.to_wire()) == response
    bad = {"feeBps": 5, "minAmount": 10, "maxAmount": 9}
    assert message(FeeTier, bad) == "maxAmount: must be at least minAmount"
    assert message(FeeTier, {**bad, "feeBps": -1, "maxAmount": 10}) == "feeBps: must be at least 0"
    assert message(FeeTier, {**bad, "minAmount": "10"}) == "maxAmount: must be at least minAmount"
    assert message(FeeTier, {**bad, "minAmount": 1.5}) == "minAmount: must be an integer"


def test_solver_query_and_response() -> None:
    params = {
        "amount": "250",
        "sourceChainId": "eip155:1",
        "destinationChainId": "eip155:8453",
        "sourceToken": "USDC",
        "destinationToken": USDC_BASE,
    }
    assert parse_query(SolverQuery, params).amount == 250
    assert message(SolverQuery, {**params, "amount": "-1"}, query=True) == (
        "amount: must be at least 0"
    )
    response = parse(SolverResponse, {"solver": FILLER, "duration": 30})
    assert response.to_wire() == {"solver": FILLER, "duration": 30}


def test_health() -> None:
    assert parse(Health, {"status": "ok"}).to_wire() == {"status": "ok"}
    assert message(Health, {"status": ""}) == "status: must not be empty"


def test_borrow_quote_query() -> None:
    params = {"dstChain": "eip155:42161", "amount": "100", "token": USDC_ARBITRUM}
    query = parse_query(BorrowQuoteQuery, {**params, "exclusive": "true", "pool": USDC_BASE})
    assert query.exclusive is True and query.amount_int == 100
    assert query.to_wire()["exclusive"] == "true"
    assert parse_query(BorrowQuoteQuery, {**params, "exclusive": "false"}).exclusive is False
    assert parse_query(BorrowQuoteQuery, params).exclusive is None
    assert message(BorrowQuoteQuery, {**params, "exclusive": "1"}, query=True) == (
        "exclusive: must be true or false"
    )
    assert message(BorrowQuoteQuery, {**params, "amount": "0"}, query=True) == (
        "amount: must be greater than 0"
    )
    assert message(BorrowQuoteQuery, {**params, "network": "eip155:1"}, query=True) == (
        "network: is not a known parameter"
    )


def test_borrow_quote_response() -> None:
    response = parse(BorrowQuoteResponse, {"data": BORROW_QUOTE})
    quote = response.data
    assert (quote.borrow_cost_int, quote.required_input_int, quote.required_output_int) == (
        150_000,
        100_000_000,
        99_850_000,
    )
    assert response.to_wire() == {"data": BORROW_QUOTE}
    assert BorrowQuoteResponse.model_validate(response.to_wire()) == response
    without_id = {k: v for k, v in BORROW_QUOTE.items() if k != "id"}
    assert parse(BorrowQuote, without_id).id is None
    assert message(BorrowQuote, {**BORROW_QUOTE, "repaymentChain": 0}) == (
        "repaymentChain: must be at least 1"
    )
    assert message(BorrowQuote, {**BORROW_QUOTE, "feeBps": 2.5}) == "feeBps: must be an integer"


def test_signature_body() -> None:
    wire = {
        "caller": PAYER,
        "input": "0xabcdef",
        "quoteId": "qt_1",
        "txHash": TX_HASH,
        "metadata": {"srcChain": "eip155:8453"},
    }
    body = parse(SignatureBody, wire)
    assert body.metadata is not None and body.metadata.src_chain == "eip155:8453"
    assert body.to_wire() == wire
    assert SignatureBody.model_validate(body.to_wire()) == body
    assert message(SignatureBody, {**wire, "txHash": "0x1234"}) == (
        "txHash: must be 0x followed by 64 hex digits"
    )
    assert message(SignatureBody, {**wire, "metadata": {"srcChain": "1"}}) == (
        "metadata.srcChain: must have the form <namespace>:<reference>, e.g. eip155:8453"
    )
    assert message(SignatureBody, {**wire, "input": "abc"}) == (
        "input: must be 0x-prefixed hex with an even number of digits"
    )


def test_signature_metadata_keeps_other_protocol_members() -> None:
    wire = {
        "caller": PAYER,
        "input": "0x",
        "quoteId": "q",
        "txHash": TX_HASH,
        "metadata": {"depositId": "42"},
    }
    assert parse(SignatureBody, wire).to_wire()["metadata"] == {"depositId": "42"}


def test_signature_response() -> None:
    response = parse(SignatureResponse, {"data": AUTHORIZATION})
    assert response.data.borrow_amount_int == 99_850_000
    assert response.to_wire() == {"data": AUTHORIZATION}
    no_deadline = {k: v for k, v in AUTHORIZATION.items() if k != "deadline"}
    assert parse(BorrowAuthorization, no_deadline).deadline is None
    assert message(BorrowAuthorization, {**AUTHORIZATION, "nonce": "0x1"}) == (
        "nonce: must be a string of digits"
    )


LIQUIDITY_EVENT = {
    "chain": "eip155:8453",
    "token": "USDC",
    "poolType": "usdc_v2",
    "address": USDC_BASE,
    "balance": "900",
    "reserved": "100",
    "outstanding": "0",
    "reason": "reservation_created",
}


def test_liquidity_event() -> None:
    event = parse(LiquidityEvent, LIQUIDITY_EVENT)
    assert event.chain_id == 8453
    assert event.to_wire() == LIQUIDITY_EVENT
    assert LiquidityEvent.model_validate(event.to_wire()) == event
    assert message(LiquidityEvent, {**LIQUIDITY_EVENT, "poolType": "aave_v3"}).startswith(
        "poolType: must be 'aave', 'aave_v2', 'usdc', 'usdc_v2', 'aave_long_term'"
    )
    assert message(LiquidityEvent, {**LIQUIDITY_EVENT, "reserved": "-5"}) == (
        "reserved: must be a string of digits"
    )


def test_fee_event() -> None:
    wire = {
        "srcChain": "eip155:1",
        "dstChain": "eip155:8453",
        "token": "USDC",
        "tiers": [{"feeBps": 5.0, "minAmount": 0, "maxAmount": 10}],
    }
    event = parse(FeeEvent, wire)
    assert event.to_wire() == wire
    assert (
        message(FeeEvent, {**wire, "tiers": [{"feeBps": 1}]}) == "tiers[0].minAmount: is required"
    )
