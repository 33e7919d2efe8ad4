"""Clients of the swap API, sync and async: ``GET {swap_url}/{network}/v1/route``.

``swap_url`` is the real service's (``TOOLKIT_SWAP_URL`` of the :class:`~toolkit.client.Target`,
e.g. ``https://swap.example/``, networks ``mainnet`` and ``base`` below it) or, named with
``embedded``, the embedded service's ``{base_url}/swap`` in-process; with neither it raises
(:class:`~toolkit.client.NoTarget`, or a :class:`~toolkit.client.TargetError` naming
``TOOLKIT_SWAP_URL`` when the main interface is configured but the swap URL is not).
Authentication is HTTP Basic: a username (``username``, the URL's userinfo or
``TOOLKIT_SWAP_USERNAME``, default ``toolkit``) and an API key as password (``api_key``, the
URL's userinfo or ``TOOLKIT_SWAP_API_KEY``; the embedded service's key by default). Neither
is ever shown: reprs and messages carry the URL without them. The retry policy is the one
:class:`~toolkit.client.RetryPolicy` of the other clients: transport errors, timeouts and 5xx
are retried with its backoff and error budget; 400, 401 and 404 are not. Every attempt goes to
``on_attempt`` as an :class:`~toolkit.client.Attempt`. Errors are the typed errors of
:mod:`toolkit.client.errors` (:class:`~toolkit.client.errors.NotFound` for no route), their
text the swap body's ``error`` and their ``request_id`` its ``requestId``.

>>> import httpx
>>> rid = "0x" + "ab" * 16
>>> def handler(request):
...     assert request.headers["authorization"].startswith("Basic ")
...     body = {"code": 404, "requestId": rid, "error": "no path"}
...     return httpx.Response(404, json=body, headers={"Request-ID": rid})
>>> mock = httpx.MockTransport(handler)
>>> client = SwapClient("https://swap.example", api_key="k", transport=mock)
>>> try:
...     client.route("mainnet", amount_in=5, token_in="0x" + "11" * 20, token_out="0x" + "22" * 20)
... except Exception as exc:
...     print(type(exc).__name__, exc.request_id == rid, exc.status)
NotFound True 404
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final

import httpx

from toolkit.client import operations as ops
from toolkit.client.core import AsyncLifecycle, AttemptHook, ClientCore, Endpoint, SyncLifecycle
from toolkit.client.embedded import EmbeddedService
from toolkit.client.endpoints import Call, endpoint
from toolkit.client.errors import (
    BadRequest,
    NotFound,
    ServerError,
    ServiceError,
    Unauthorized,
)
from toolkit.client.retry import retry_after_s
from toolkit.client.runner import AsyncRunner, SyncRunner
from toolkit.client.target import ENV
from toolkit.clock import Clock
from toolkit.resources import ErrorBody, InvalidInput, RouteQuery, RouteResult, SwapErrorBody, parse
from toolkit.resources.retry import RetryPolicy
from toolkit.scenario.secret import Secret
from toolkit.urls import shown_url

__all__ = [
    "NETWORKS",
    "SWAP_API_KEY_ENV",
    "SWAP_URL_ENV",
    "SWAP_USERNAME_ENV",
    "AsyncSwapClient",
    "SwapClient",
    "route_operation",
]

SWAP_URL_ENV: Final = ENV["swap_url"]
SWAP_USERNAME_ENV: Final = ENV["swap_username"]
SWAP_API_KEY_ENV: Final = ENV["swap_api_key"]
#: The swap API's networks.
NETWORKS: Final = ("mainnet", "base")
_SNIPPET: Final = 200


def _swap_error(
    operation: ops.Operation[Any], response: httpx.Response, secret: str | None
) -> ServiceError:
    """The typed error of a non-2xx swap answer (``{code, requestId, error}``)."""
    status = response.status_code
    request_id = response.headers.get("request-id")
    detail: str | None = None
    body: ErrorBody | None = None
    try:
        swap = parse(SwapErrorBody, response.content)
    except InvalidInput:
        detail = response.text[:_SNIPPET].strip() or None
    else:
        text = swap.error.replace(secret, "***") if secret else swap.error
        body = ErrorBody(error=text)
        request_id = request_id or swap.request_id
    kind: type[ServiceError] = {400: BadRequest, 401: Unauthorized, 404: NotFound}.get(
        status, ServerError if status >= 500 else ServiceError
    )
    return kind(
        operation.name,
        status,
        body,
        request_id=request_id,
        detail=detail,
        retry_after=retry_after_s(response.headers),
    )


def route_operation(
    network: str,
    *,
    amount_in: int | str,
    token_in: str,
    token_out: str,
    slippage_bps: int | None = None,
    timeout_ms: int | None = None,
) -> ops.Operation[RouteResult]:
    """``GET /{network}/v1/route`` (relative to the swap URL), checked before sending.

    >>> route_operation("base", amount_in=10, token_in="0x" + "00" * 20,
    ...                 token_out="0x" + "11" * 20).path
    '/base/v1/route'
    """
    if network not in NETWORKS:
        raise InvalidInput("network", f"must be one of {', '.join(NETWORKS)}")
    raw: dict[str, Any] = {
        "amountIn": ops.amount_text(amount_in, "amountIn"),
        "tokenIn": token_in,
        "tokenOut": token_out,
    }
    if slippage_bps is not None:
        raw["slippageBps"] = slippage_bps
    if timeout_ms is not None:
        raw["timeout"] = timeout_ms
    query = parse(RouteQuery, raw, root="query")
    params = {"amountIn": query.amount_in, "tokenIn": token_in, "tokenOut": token_out}
    if slippage_bps is not None:
        params["slippageBps"] = str(query.slippage_bps)
    if query.timeout is not None:
        params["timeout"] = str(query.timeout)
    return ops.Operation(
        "route",
        "GET",
        f"/{network}/v1/route",
        params=params,
        retry="read",
        parse=lambda response: ops.read_model(RouteResult, response, "route"),
        read_error=_swap_error,
    )


class _SwapCore(ClientCore):
    """The shared core with HTTP Basic credentials instead of ``X-Auth-Token``."""

    username: str

    def headers(self, operation: ops.Operation[Any]) -> dict[str, str]:
        if self.key is None:
            return {}
        token = base64.b64encode(f"{self.username}:{self.key.reveal()}".encode()).decode()
        return {"Authorization": f"Basic {token}"}


class _Base:
    def __init__(
        self,
        swap_url: str | None,
        *,
        username: str | None,
        api_key: str | Secret | None,
        timeout: httpx.Timeout | float | None,
        retry: RetryPolicy | None,
        on_attempt: AttemptHook | None,
        transport_given: bool,
        embedded: EmbeddedService | bool | None,
        clock: Clock | None,
        env: Mapping[str, str] | None,
    ) -> None:
        target = Endpoint(
            swap_url,
            surface="swap",
            transport_given=transport_given,
            embedded=embedded,
            env=env,
            clock=clock,
            field="swap_url",
        )
        try:
            core = _SwapCore(
                target,
                api_key=api_key,
                protocol=ops.DEFAULT_PROTOCOL,
                timeout=timeout,
                stream_timeout_s=45.0,
                retry=retry,
                on_attempt=on_attempt,
            )
        except BaseException:
            target.close()
            raise
        core.username = username or target.username or "toolkit"
        self._core: ClientCore = core
        self.base = target.base_url.rstrip("/") + ("/swap" if target.embedded else "")
        self.clock: Clock = target.clock

    @property
    def url(self) -> str:
        """The swap URL (without credentials)."""
        return shown_url(self.base)

    @property
    def embedded(self) -> EmbeddedService | None:
        """The embedded service this client talks to, if it is one."""
        return self._core.target.embedded

    def __repr__(self) -> str:
        key = ", api_key=Secret('***')" if self._core.key is not None else ""
        return f"{type(self).__name__}({self.url!r}{key})"


class _SwapEndpoints(_Base):
    """The swap API's one endpoint, defined once for both clients."""

    @endpoint
    def route(
        self,
        network: str,
        *,
        amount_in: int | str,
        token_in: str,
        token_out: str,
        slippage_bps: int | None = None,
        timeout_ms: int | None = None,
        on_attempt: AttemptHook | None = None,
    ) -> Call[RouteResult]:
        """The route for ``amount_in`` of ``token_in`` into ``token_out`` on ``network``."""
        op = route_operation(
            network,
            amount_in=amount_in,
            token_in=token_in,
            token_out=token_out,
            slippage_bps=slippage_bps,
            timeout_ms=timeout_ms,
        )
        return Call(op, on_attempt)


class SwapClient(_SwapEndpoints, SyncRunner, SyncLifecycle):
    """A synchronous swap API client (module docstring)."""

    def __init__(
        self,
        swap_url: str | None = None,
        *,
        username: str | None = None,
        api_key: str | Secret | None = None,
        timeout: httpx.Timeout | float | None = None,
        retry: RetryPolicy | None = None,
        on_attempt: AttemptHook | None = None,
        transport: httpx.BaseTransport | None = None,
        embedded: EmbeddedService | bool | None = None,
        clock: Clock | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            swap_url,
            username=username,
            api_key=api_key,
            timeout=timeout,
            retry=retry,
            on_attempt=on_attempt,
            transport_given=transport is not None,
            embedded=embedded,
            clock=clock,
            env=env,
        )
        if self._core.target.embedded is not None:
            transport = self._core.target.embedded.sync_transport()
        self._http = httpx.Client(
            base_url=self.base, transport=transport, timeout=self._core.timeout
        )


class AsyncSwapClient(_SwapEndpoints, AsyncRunner, AsyncLifecycle):
    """The asynchronous swap API client (same arguments as :class:`SwapClient`)."""

    def __init__(
        self,
        swap_url: str | None = None,
        *,
        username: str | None = None,
        api_key: str | Secret | None = None,
        timeout: httpx.Timeout | float | None = None,
        retry: RetryPolicy | None = None,
        on_attempt: AttemptHook | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        embedded: EmbeddedService | bool | None = None,
        clock: Clock | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            swap_url,
            username=username,
            api_key=api_key,
            timeout=timeout,
            retry=retry,
            on_attempt=on_attempt,
            transport_given=transport is not None,
            embedded=embedded,
            clock=clock,
            env=env,
        )
        if self._core.target.embedded is not None:
            transport = self._core.target.embedded.async_transport()
        self._http = httpx.AsyncClient(
            base_url=self.base, transport=transport, timeout=self._core.timeout
        )
