"""chain_web3 / async_chain_web3: where they point, in-process reads, retries, no secrets."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from toolkit.client import (
    AsyncChainProvider,
    ChainProvider,
    EmbeddedService,
    NoTarget,
    RetryPolicy,
    TargetError,
    async_chain_web3,
    chain_web3,
    rpc_url,
)

#: Retries without waiting: the tests' fault injection needs no real backoff.
QUICK = RetryPolicy(error_base=0.0, error_cap=0.0)


def test_an_explicit_url_wins_and_the_environment_comes_next() -> None:
    env = {"TOOLKIT_RPC_URL_8453": " https://node.example/v2/k3y "}
    assert rpc_url(8453, env) == "https://node.example/v2/k3y"
    assert rpc_url(8453, {"TOOLKIT_RPC_URL_8453": "  "}) is None
    w3 = chain_web3(8453, env=env)
    assert isinstance(w3.provider, ChainProvider)
    assert w3.provider.url == "https://node.example/v2/k3y"
    assert repr(w3.provider) == "ChainProvider('https://node.example/v2/***')"  # no key in the repr
    w3 = chain_web3(8453, url="http://other:8545", env=env)
    assert w3.provider.url == "http://other:8545"  # type: ignore[attr-defined]
    aw3 = async_chain_web3(8453, env=env)
    assert isinstance(aw3.provider, AsyncChainProvider)
    assert aw3.provider.url == "https://node.example/v2/k3y"
    with pytest.raises(ValueError, match="url: give a url or an embedded service"):
        chain_web3(8453, url="http://x", embedded=EmbeddedService("single-pool", env={}))


def test_without_url_nor_variable_nothing_starts_and_the_message_says_how_to_choose() -> None:
    with pytest.raises(NoTarget, match="TOOLKIT_RPC_URL_8453: no target is configured") as caught:
        chain_web3(8453, env={})
    assert "TOOLKIT_BASE_URL" in str(caught.value) and "--embedded" in str(caught.value)
    # Another surface configured, this chain not: an error naming the chain's variable.
    with pytest.raises(TargetError, match="TOOLKIT_RPC_URL_8453: not set, while") as partial:
        async_chain_web3(8453, env={"TOOLKIT_BASE_URL": "https://svc.example"})
    assert not isinstance(partial.value, NoTarget)


def test_async_reads_in_process() -> None:
    service = EmbeddedService("single-pool", env={})

    async def read() -> tuple[int, int]:
        w3 = async_chain_web3(8453, embedded=service)
        try:
            accounts = await w3.eth.accounts
            return await w3.eth.chain_id, await w3.eth.get_balance(accounts[0])
        finally:
            await w3.provider.disconnect()

    try:
        chain, balance = asyncio.run(read())
    finally:
        service.close()
    assert chain == 8453 and balance > 0


def test_5xx_and_timeouts_are_retried_then_raised() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            raise httpx.ReadTimeout("slow", request=request)
        if len(calls) == 2:
            return httpx.Response(503)
        body = json.loads(request.content)
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": "0x2105"})

    provider = ChainProvider("http://node", transport=httpx.MockTransport(handler), retry=QUICK)
    assert provider.make_request("eth_chainId", [])["result"] == "0x2105"  # type: ignore[arg-type]
    assert len(calls) == 3
    failing = ChainProvider(
        "http://node",
        transport=httpx.MockTransport(lambda request: httpx.Response(502)),
        retry=RetryPolicy(error_retries=2, error_base=0.0, error_cap=0.0),
    )
    with pytest.raises(httpx.HTTPStatusError):
        failing.make_request("eth_chainId", [])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="error_retries"):
        ChainProvider("http://node", retry=RetryPolicy(error_retries=-1))
