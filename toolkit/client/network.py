"""The async client's transport to a service over the network: httpx's API, aiohttp's pool.

httpcore's async connection pool does not scale with concurrency: with 64 tasks on one
``httpx.AsyncClient`` a loopback service answers about 450 ``/health`` requests per second,
against about 3,900 through an aiohttp session (encode/httpx#3215; ``bench/bench_client.py``
measures it). :class:`NetworkTransport` keeps the httpx API (requests, responses, timeouts,
streaming) and sends through an aiohttp ``ClientSession`` instead, by way of httpx-aiohttp's
``AiohttpTransport``.

What it adds to that transport is the error mapping: every failure reaches the client as the
httpx exception httpcore would have raised (a refused connection is a ``ConnectError``, not
httpx-aiohttp's ``ConnectTimeout``; a dropped connection a ``RemoteProtocolError``; a quiet
socket past the read timeout a ``ReadTimeout``), while sending and while reading the body.

The aiohttp session is made on the first request, on the running event loop, and belongs to it:
use one client on one loop, and close it (``aclose``) before the loop ends, or aiohttp warns of
an unclosed session.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

__all__ = ["DEFAULT_LIMITS", "NetworkTransport"]

#: httpx's own default pool size; aiohttp keeps every idle connection until it expires.
DEFAULT_LIMITS = httpx.Limits(max_connections=100, keepalive_expiry=5.0)

# Most specific first: the first match names the httpx exception.
_ERRORS: tuple[tuple[type[BaseException], type[httpx.TransportError]], ...] = (
    (aiohttp.ConnectionTimeoutError, httpx.ConnectTimeout),
    (aiohttp.SocketTimeoutError, httpx.ReadTimeout),
    (aiohttp.ServerTimeoutError, httpx.ReadTimeout),
    (aiohttp.ClientProxyConnectionError, httpx.ProxyError),
    (aiohttp.ClientHttpProxyError, httpx.ProxyError),
    (aiohttp.ClientConnectorError, httpx.ConnectError),
    (aiohttp.ServerDisconnectedError, httpx.RemoteProtocolError),
    (aiohttp.ClientPayloadError, httpx.RemoteProtocolError),
    (aiohttp.ClientResponseError, httpx.RemoteProtocolError),
    (aiohttp.InvalidURL, httpx.UnsupportedProtocol),
    (aiohttp.ClientOSError, httpx.ReadError),
    (aiohttp.ClientConnectionError, httpx.NetworkError),
    (aiohttp.ClientError, httpx.TransportError),
    (TimeoutError, httpx.TimeoutException),
)


def _httpx_error(exc: BaseException, request: httpx.Request) -> httpx.TransportError | None:
    """The httpx exception for an aiohttp failure, or None for anything else."""
    for kind, mapped in _ERRORS:
        if isinstance(exc, kind):
            return mapped(str(exc) or type(exc).__name__, request=request)
    return None


@contextlib.contextmanager
def _mapped(request: httpx.Request) -> Iterator[None]:
    """Re-raise aiohttp failures (raw, or as httpx-aiohttp mapped them) as httpx's own."""
    try:
        yield
    except httpx.TransportError as exc:
        cause = exc.__cause__
        error = None if cause is None else _httpx_error(cause, request)
        if error is None or cause is None:
            raise
        raise error from cause
    except (aiohttp.ClientError, TimeoutError) as exc:
        error = _httpx_error(exc, request)
        if error is None:  # pragma: no cover - every ClientError and timeout is in _ERRORS
            raise
        raise error from exc


class _MappedStream(httpx.AsyncByteStream):
    """A response body whose read errors are httpx's."""

    def __init__(self, inner: httpx.AsyncByteStream, request: httpx.Request) -> None:
        self._inner = inner
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _mapped(self._request):
            async for chunk in self._inner:
                yield chunk

    async def aclose(self) -> None:
        with _mapped(self._request):
            await self._inner.aclose()


class NetworkTransport(AiohttpTransport):
    """httpx-aiohttp's transport with httpx's exceptions; ``limits`` as httpx's (at most
    ``max_connections`` open, idle ones closed after ``keepalive_expiry`` seconds).

    The request's timeouts apply: ``connect`` to opening a socket, ``read`` to each wait for
    data, ``pool`` to getting a connection (opening it included); ``write`` is not enforced.

    >>> import asyncio, httpx
    >>> async def refused():
    ...     async with httpx.AsyncClient(transport=NetworkTransport()) as client:
    ...         await client.get("http://127.0.0.1:9/")
    >>> asyncio.run(refused())
    Traceback (most recent call last):
    ...
    httpx.ConnectError: Cannot connect to host 127.0.0.1:9 ...
    """

    def __init__(self, limits: httpx.Limits | None = None) -> None:
        super().__init__(limits=DEFAULT_LIMITS if limits is None else limits)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        with _mapped(request):
            response = await super().handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _MappedStream(response.stream, request)
        return response
