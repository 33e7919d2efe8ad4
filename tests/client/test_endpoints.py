"""Each endpoint is defined once: the sync and async clients of a surface have the same methods,
with the same signatures and documentation, and send the same request."""

from __future__ import annotations

import asyncio
import inspect

import httpx
import pytest

from toolkit.client import (
    AsyncCreditClient,
    AsyncServiceClient,
    AsyncSwapClient,
    CreditClient,
    ServiceClient,
    SwapClient,
)
from toolkit.client.endpoints import endpoint
from toolkit.resources import InvalidInput

PAIRS = [
    (ServiceClient, AsyncServiceClient),
    (SwapClient, AsyncSwapClient),
    (CreditClient, AsyncCreditClient),
]


def _endpoints(cls: type) -> dict[str, endpoint]:
    return {
        name: value
        for klass in cls.__mro__
        for name, value in vars(klass).items()
        if isinstance(value, endpoint)
    }


@pytest.mark.parametrize(("sync", "async_"), PAIRS)
def test_sync_and_async_clients_share_one_definition_per_endpoint(sync: type, async_: type) -> None:
    ours, theirs = _endpoints(sync), _endpoints(async_)
    assert ours and ours.keys() == theirs.keys()
    for name in ours:
        assert ours[name] is theirs[name]  # one object, not two copies
        assert (getattr(sync, name).__doc__ or "").strip()


def test_service_endpoints_are_the_ones_people_call() -> None:
    names = set(_endpoints(ServiceClient))
    assert names == {
        "rfq", "transaction", "tokens", "pool", "fees", "solver", "health", "borrow_quote",
        "authorize",
    }  # fmt: skip
    client = ServiceClient("https://svc.example", env={})
    assert list(inspect.signature(client.fees).parameters) == [
        "src_chain", "dst_chain", "src_token", "dst_token"
    ]  # fmt: skip
    client.close()


def _recorder(seen: list[httpx.Request]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"status": "ok"})

    return httpx.MockTransport(answer)


def test_sync_and_async_send_the_same_request() -> None:
    sync_seen: list[httpx.Request] = []
    async_seen: list[httpx.Request] = []
    with ServiceClient("https://svc.example", api_key="k", transport=_recorder(sync_seen)) as c:
        assert c.health().status == "ok"

    async def run() -> str:
        transport = _recorder(async_seen)
        async with AsyncServiceClient("https://svc.example", api_key="k", transport=transport) as a:
            pending = a.health()
            assert inspect.iscoroutine(pending)
            return (await pending).status

    assert asyncio.run(run()) == "ok"
    assert [(r.method, str(r.url)) for r in sync_seen] == [
        (r.method, str(r.url)) for r in async_seen
    ]


def test_bad_input_is_refused_before_anything_is_sent_on_either_side() -> None:
    seen: list[httpx.Request] = []
    with ServiceClient("https://svc.example", env={}, transport=_recorder(seen)) as client:
        with pytest.raises(InvalidInput, match="srcChain"):
            client.rfq(src_chain="nope", dst_chain=1, amount=5, token="0x", user="0x")
        credit = CreditClient(client)
        with pytest.raises(InvalidInput, match="asset: must be one of usdc, eure"):
            credit.operator("0x" + "11" * 20, asset="dai")

    async def run() -> None:
        async with AsyncServiceClient(
            "https://svc.example", env={}, transport=_recorder(seen)
        ) as a:
            with pytest.raises(InvalidInput, match="srcChain"):
                await a.rfq(src_chain="nope", dst_chain=1, amount=5, token="0x", user="0x")

    asyncio.run(run())
    assert seen == []
