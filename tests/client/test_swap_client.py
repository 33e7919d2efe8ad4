"""The swap API clients: the embedded service by default, HTTP Basic, the one retry policy."""

from __future__ import annotations

import asyncio
import base64
import random

import httpx
import pytest

from toolkit.client import AsyncSwapClient, Attempt, EmbeddedService, RetryPolicy, SwapClient
from toolkit.client.errors import BadRequest, NotFound, ServerError, Unauthorized
from toolkit.clock import VirtualClock
from toolkit.resources import InvalidInput

USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
WETH = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"
RID = "0x" + "cd" * 16
FAST = RetryPolicy(error_base=0.01, error_cap=0.02, rng=random.Random(0))


def test_the_embedded_service_answers_by_default() -> None:
    attempts: list[Attempt] = []
    with EmbeddedService("default", env={}, clock=VirtualClock()) as service:
        client = SwapClient(embedded=service, on_attempt=attempts.append, env={})
        route = client.route("mainnet", amount_in=10**9, token_in=USDC, token_out=WETH)
        assert route.amount_out_int > 0 and route.gas_limit == route.gas_used * 13 // 10
        with pytest.raises(NotFound):
            client.route("mainnet", amount_in=10**9, token_in=USDC, token_out="0x" + "77" * 20)
        wrong = SwapClient(embedded=service, api_key="nope", env={})
        with pytest.raises(Unauthorized):
            wrong.route("base", amount_in=10**9, token_in=USDC, token_out=WETH)
        client.close()
        wrong.close()
    assert [(a.status, a.final) for a in attempts] == [(200, True), (404, True)]


def test_async_client_on_the_embedded_service() -> None:
    async def run() -> str:
        with EmbeddedService("default", env={}, clock=VirtualClock()) as service:
            async with AsyncSwapClient(embedded=service, env={}) as client:
                route = await client.route(
                    "base",
                    amount_in=10**18,
                    token_in="0x" + "00" * 20,
                    token_out="0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
                    slippage_bps=100,
                )
                return route.min_amount_out

    assert int(asyncio.run(run())) > 0


def _mock(statuses: list[int], seen: list[httpx.Request]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        status = statuses.pop(0)
        if status == 200:
            body = {
                "requestId": RID,
                "amountOut": "100",
                "minAmountOut": "99",
                "target": WETH,
                "callData": "0x",
                "gasUsed": 10,
                "gasLimit": 13,
            }
        else:
            body = {"code": status, "requestId": RID, "error": f"status {status}"}
        return httpx.Response(status, json=body, headers={"Request-ID": RID})

    return httpx.MockTransport(handler)


def test_5xx_is_retried_and_the_real_service_needs_only_url_and_credentials() -> None:
    seen: list[httpx.Request] = []
    env = {
        "TOOLKIT_SWAP_URL": "https://swap.example/",
        "TOOLKIT_SWAP_USERNAME": "desk",
        "TOOLKIT_SWAP_API_KEY": "sk_live_1",
    }
    attempts: list[Attempt] = []
    client = SwapClient(
        transport=_mock([503, 500, 200], seen),
        retry=FAST,
        on_attempt=attempts.append,
        clock=VirtualClock(),
        env=env,
    )
    route = client.route("mainnet", amount_in=5, token_in=USDC, token_out=WETH, timeout_ms=20)
    assert route.amount_out == "100"
    assert [a.status for a in attempts] == [503, 500, 200]
    request = seen[0]
    assert str(request.url).startswith("https://swap.example/mainnet/v1/route?")
    assert request.url.params["timeout"] == "20"
    expected = "Basic " + base64.b64encode(b"desk:sk_live_1").decode()
    assert request.headers["authorization"] == expected
    assert "sk_live_1" not in repr(client)


@pytest.mark.parametrize(
    ("status", "error"), [(400, BadRequest), (401, Unauthorized), (404, NotFound)]
)
def test_400_401_404_are_not_retried(status: int, error: type[Exception]) -> None:
    seen: list[httpx.Request] = []
    client = SwapClient(
        "https://swap.example", api_key="k", transport=_mock([status, 200], seen), retry=FAST
    )
    with pytest.raises(error) as caught:
        client.route("base", amount_in=5, token_in=USDC, token_out=WETH)
    assert len(seen) == 1
    assert getattr(caught.value, "request_id", None) == RID


def test_the_error_budget_ends_retries() -> None:
    seen: list[httpx.Request] = []
    client = SwapClient(
        "https://swap.example",
        api_key="k",
        transport=_mock([502] * 10, seen),
        retry=FAST,
        clock=VirtualClock(),
    )
    with pytest.raises(ServerError):
        client.route("base", amount_in=5, token_in=USDC, token_out=WETH)
    assert len(seen) == 1 + FAST.error_retries


def test_bad_arguments_are_refused_before_sending() -> None:
    client = SwapClient("https://swap.example", api_key="k", transport=_mock([], []))
    with pytest.raises(InvalidInput, match="network"):
        client.route("polygon", amount_in=5, token_in=USDC, token_out=WETH)
    with pytest.raises(InvalidInput, match="slippageBps"):
        client.route("base", amount_in=5, token_in=USDC, token_out=WETH, slippage_bps=10_001)
    with pytest.raises(InvalidInput, match="tokenIn"):
        client.route("base", amount_in=5, token_in="0x12", token_out=WETH)
