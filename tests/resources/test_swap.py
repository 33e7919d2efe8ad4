"""Swap route query and result."""

from __future__ import annotations

import pytest

from toolkit.resources import InvalidInput, RouteQuery, RouteResult, parse, parse_query

from .conftest import USDC_BASE

WETH = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"
RESULT = {
    "requestId": "0x" + "1f" * 16,
    "amountOut": "99850000",
    "minAmountOut": "99350000",
    "target": USDC_BASE,
    "callData": "0x12345678",
    "gasUsed": 180000,
    "gasLimit": 234000,
}


def query_error(params: dict[str, str]) -> str:
    with pytest.raises(InvalidInput) as caught:
        parse_query(RouteQuery, params)
    return str(caught.value)


BASE = {"amountIn": "5000000000", "tokenIn": USDC_BASE, "tokenOut": WETH}


def test_route_query_defaults_and_round_trip() -> None:
    query = parse_query(RouteQuery, BASE)
    assert (query.slippage_bps, query.timeout, query.amount_in_int) == (50, None, 5_000_000_000)
    full = parse_query(RouteQuery, {**BASE, "slippageBps": "0", "timeout": "250"})
    assert full.to_wire() == {**BASE, "slippageBps": 0, "timeout": 250}
    assert parse_query(RouteQuery, {k: str(v) for k, v in full.to_wire().items()}) == full


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"amountIn": "1e9"}, "amountIn: must be a string of digits"),
        ({"tokenIn": "ETH"}, "tokenIn: must be a 0x-prefixed 20-byte hex address"),
        ({"slippageBps": "10001"}, "slippageBps: must be between 0 and 10000"),
        ({"slippageBps": "-1"}, "slippageBps: must be between 0 and 10000"),
        ({"slippageBps": "0.5"}, "slippageBps: must be an integer"),
        ({"timeout": "0"}, "timeout: must be between 1 and 2147483647"),
        ({"slippage": "0.5"}, "slippage: is not a known parameter"),
    ],
)
def test_route_query_rules(changes: dict[str, str], message: str) -> None:
    assert query_error({**BASE, **changes}) == message


def test_route_result_round_trip() -> None:
    result = parse(RouteResult, RESULT)
    assert (result.amount_out_int, result.min_amount_out_int) == (99_850_000, 99_350_000)
    assert result.to_wire() == RESULT
    assert RouteResult.model_validate(result.to_wire()) == result


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"requestId": "0x" + "1f" * 17}, "requestId: must be 0x followed by 32 hex digits"),
        ({"minAmountOut": "99850001"}, "minAmountOut: must not exceed amountOut"),
        ({"gasUsed": -1}, "gasUsed: must be between 0 and 18446744073709551615"),
        ({"callData": "1234"}, "callData: must be 0x-prefixed hex with an even number of digits"),
        ({"target": None}, "target: must be a 0x-prefixed 20-byte hex address"),
    ],
)
def test_route_result_rules(changes: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse(RouteResult, {**RESULT, **changes})
    assert str(caught.value) == message
