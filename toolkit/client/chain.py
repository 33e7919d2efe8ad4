"""web3.py over httpx: to any node, or in-process to the embedded service's simulated chains
(``POST /rpc/{chainId}``) with no socket.

:func:`chain_web3` picks the endpoint of a chain: ``url`` when given, else the ``embedded``
service when given, else the configured target's ``$TOOLKIT_RPC_URL_<chainId>``; with none of
them it raises naming that variable. :func:`async_chain_web3` is the same for ``AsyncWeb3``.
Node URLs often carry an API key in their path (``/v2/<key>``): :attr:`ChainProvider.public_url`
and the providers' reprs show them as :func:`toolkit.urls.redact_url` does (``/v2/***``).

>>> from toolkit.client import EmbeddedService
>>> service = EmbeddedService("single-pool", env={})
>>> w3 = chain_web3(8453, embedded=service)
>>> w3.eth.chain_id
8453
>>> service.close()
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx
from web3 import AsyncWeb3, Web3
from web3.providers.async_base import AsyncJSONBaseProvider
from web3.providers.base import JSONBaseProvider
from web3.types import RPCEndpoint, RPCResponse

from toolkit.arguments import whole
from toolkit.client.config import DEFAULT_TIMEOUT
from toolkit.client.embedded import EmbeddedService
from toolkit.client.jsonrpc import RpcAttempts, operation_name
from toolkit.client.retry import AttemptHook
from toolkit.client.target import RPC_URL_ENV, Target
from toolkit.clock import WALL, Clock, sleep_async
from toolkit.resources.retry import RetryPolicy
from toolkit.urls import shown_url

__all__ = [
    "RPC_URL_ENV",
    "AsyncChainProvider",
    "ChainProvider",
    "async_chain_web3",
    "chain_provider",
    "chain_web3",
    "rpc_url",
]


def rpc_url(chain_id: int, env: Mapping[str, str] | None = None) -> str | None:
    """Chain ``chain_id``'s JSON-RPC URL of the configured :class:`~toolkit.client.Target`
    (``$TOOLKIT_RPC_URL_<chainId>`` or the profile), else None.

    >>> rpc_url(8453, {"TOOLKIT_RPC_URL_8453": "http://node:8545"}), rpc_url(1, {})
    ('http://node:8545', None)
    """
    chain_id = whole(chain_id, "chain_id", minimum=1)
    return Target.load(env=env).rpc_urls.get(chain_id)


_HEADERS = {"Content-Type": "application/json"}


class ChainProvider(JSONBaseProvider):
    """JSON-RPC over one ``httpx.Client`` (pass ``transport`` for an in-process app).

    The URL is the node's JSON-RPC endpoint (for the embedded service
    ``{base_url}/rpc/{chainId}``); batches go as one JSON array. Rate limits (HTTP 429 or a
    node's rate-limit error), 5xx answers, garbled bodies, timeouts and dropped connections are
    retried as the one :class:`RetryPolicy` says, its ``max_rps`` paces every attempt, and
    waits (``Retry-After`` included) run on ``clock`` (:mod:`toolkit.client.jsonrpc` has the
    rules). JSON-RPC methods are retried whole: reads are idempotent, and a resent raw
    transaction is refused by its nonce. Every attempt goes to ``on_attempt`` as an
    :class:`~toolkit.client.Attempt`. ``service`` is an embedded service the provider owns and
    closes with itself.
    """

    def __init__(
        self,
        url: str,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        on_attempt: AttemptHook | None = None,
        clock: Clock | None = None,
        service: EmbeddedService | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.url = url
        self._retry = RetryPolicy() if retry is None else retry
        self._on_attempt = on_attempt
        self._clock: Clock = WALL if clock is None else clock
        self._client = httpx.Client(transport=transport, timeout=timeout)
        self._service = service

    @property
    def public_url(self) -> str:
        """The endpoint as :func:`toolkit.urls.redact_url` shows it (what a run records)."""
        return shown_url(self.url)

    def _post(self, body: bytes) -> Any:
        attempts = RpcAttempts(
            self._retry, self.public_url, operation_name(json.loads(body)), self._on_attempt
        )
        while True:
            wait = self._retry.pace(self._clock())
            if wait > 0:
                self._clock.sleep(wait)
            attempts.start()
            result: httpx.Response | httpx.TransportError
            try:
                result = self._client.post(self.url, content=body, headers=_HEADERS)
            except httpx.TransportError as exc:
                result = exc
            answer, wait_again = attempts.outcome(result)
            if wait_again is None:
                return answer
            self._clock.sleep(wait_again)

    def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        answer: RPCResponse = self._post(self.encode_rpc_request(method, params))
        return answer

    def make_batch_request(
        self, requests: list[tuple[RPCEndpoint, Any]]
    ) -> list[RPCResponse] | RPCResponse:
        answer = self._post(self.encode_batch_rpc_request(requests))
        if isinstance(answer, list):
            return sorted(answer, key=lambda item: item.get("id") or 0)
        result: RPCResponse = answer
        return result

    def close(self) -> None:
        """Close the HTTP client (and the embedded service the provider owns)."""
        self._client.close()
        if self._service is not None:
            self._service.close()

    def __repr__(self) -> str:
        return f"ChainProvider({self.public_url!r})"


class AsyncChainProvider(AsyncJSONBaseProvider):
    """:class:`ChainProvider` for ``AsyncWeb3``, over one ``httpx.AsyncClient``.

    >>> import asyncio
    >>> from toolkit.client import EmbeddedService
    >>> service = EmbeddedService("single-pool", env={})
    >>> async def chain_id() -> int:
    ...     w3 = async_chain_web3(8453, embedded=service)
    ...     try:
    ...         return await w3.eth.chain_id
    ...     finally:
    ...         await w3.provider.disconnect()
    >>> asyncio.run(chain_id())
    8453
    >>> service.close()
    """

    def __init__(
        self,
        url: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        on_attempt: AttemptHook | None = None,
        clock: Clock | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.url = url
        self._retry = RetryPolicy() if retry is None else retry
        self._on_attempt = on_attempt
        self._clock: Clock = WALL if clock is None else clock
        self._client = httpx.AsyncClient(transport=transport, timeout=timeout)

    @property
    def public_url(self) -> str:
        """The endpoint as :func:`toolkit.urls.redact_url` shows it."""
        return shown_url(self.url)

    async def _post(self, body: bytes) -> Any:
        attempts = RpcAttempts(
            self._retry, self.public_url, operation_name(json.loads(body)), self._on_attempt
        )
        while True:
            wait = self._retry.pace(self._clock())
            if wait > 0:
                await sleep_async(self._clock, wait)
            attempts.start()
            result: httpx.Response | httpx.TransportError
            try:
                result = await self._client.post(self.url, content=body, headers=_HEADERS)
            except httpx.TransportError as exc:
                result = exc
            answer, wait_again = attempts.outcome(result)
            if wait_again is None:
                return answer
            await sleep_async(self._clock, wait_again)

    async def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        answer: RPCResponse = await self._post(self.encode_rpc_request(method, params))
        return answer

    async def make_batch_request(
        self, requests: list[tuple[RPCEndpoint, Any]]
    ) -> list[RPCResponse] | RPCResponse:
        answer = await self._post(self.encode_batch_rpc_request(requests))
        if isinstance(answer, list):
            return sorted(answer, key=lambda item: item.get("id") or 0)
        result: RPCResponse = answer
        return result

    async def disconnect(self) -> None:
        """Close the HTTP client."""
        await self._client.aclose()

    def __repr__(self) -> str:
        return f"AsyncChainProvider({self.public_url!r})"


def chain_provider(service: EmbeddedService, chain_id: int, **options: Any) -> ChainProvider:
    """A provider for chain ``chain_id`` of an embedded service, in-process."""
    return ChainProvider(
        f"{service.base_url}/rpc/{chain_id}", transport=service.sync_transport(), **options
    )


def chain_web3(
    chain_id: int,
    *,
    embedded: EmbeddedService | None = None,
    url: str | None = None,
    env: Mapping[str, str] | None = None,
    **options: Any,
) -> Web3:
    """``Web3`` on chain ``chain_id``: ``url``, else ``embedded``, else the configured
    target's ``$TOOLKIT_RPC_URL_<chainId>``; with none of them a
    :class:`~toolkit.client.TargetError` naming that variable (never a silent simulator).

    ``options`` (``timeout``, ``retry``, ``on_attempt``, ``clock``) go to :class:`ChainProvider`.
    """
    chain_id = whole(chain_id, "chain_id", minimum=1)
    if url is not None and embedded is not None:
        raise ValueError("url: give a url or an embedded service, not both")
    if embedded is None:
        return Web3(ChainProvider(url or Target.load(env=env).rpc(chain_id), **options))
    return Web3(chain_provider(embedded, chain_id, **options))


def async_chain_web3(
    chain_id: int,
    *,
    embedded: EmbeddedService | None = None,
    url: str | None = None,
    env: Mapping[str, str] | None = None,
    **options: Any,
) -> AsyncWeb3[Any]:
    """``AsyncWeb3`` on chain ``chain_id``, resolved as :func:`chain_web3`."""
    chain_id = whole(chain_id, "chain_id", minimum=1)
    if url is not None and embedded is not None:
        raise ValueError("url: give a url or an embedded service, not both")
    if embedded is None:
        return AsyncWeb3(AsyncChainProvider(url or Target.load(env=env).rpc(chain_id), **options))
    return AsyncWeb3(
        AsyncChainProvider(
            f"{embedded.base_url}/rpc/{chain_id}", transport=embedded.async_transport(), **options
        )
    )
