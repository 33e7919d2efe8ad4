"""A sync httpx transport that streams an ASGI app's responses in-process (no socket).

:class:`SyncASGITransport` gives a sync ``httpx.Client`` what
:class:`~toolkit.client.asgi.StreamingASGITransport` gives an async one: the app runs on an
event loop in a background thread (an anyio blocking portal, as starlette's TestClient does),
and every request and body chunk crosses over with ``portal.call``. All requests of one
SyncASGITransport run on that one loop, so the app sees them as a server would.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import httpx
from anyio.from_thread import BlockingPortal, start_blocking_portal

from toolkit.client.asgi import ASGIApp, ResponseStream, StreamingASGITransport

__all__ = ["SyncASGITransport"]


class _PortalStream(httpx.SyncByteStream):
    """The body of a sync response: the chunks read with the response start first, then the
    rest across the portal. A body that was complete at the start (a plain JSON answer)
    costs no further crossing."""

    def __init__(
        self,
        portal: BlockingPortal,
        stream: httpx.AsyncByteStream,
        ready: list[bytes],
        complete: bool,
    ) -> None:
        self._portal = portal
        self._stream = stream
        self._ready = ready
        self._complete = complete

    def __iter__(self) -> Iterator[bytes]:
        yield from self._ready
        self._ready = []
        if self._complete:
            return
        chunks = self._stream.__aiter__()
        while True:
            try:
                chunk = self._portal.call(chunks.__anext__)
            except StopAsyncIteration:
                return
            yield chunk

    def close(self) -> None:
        if isinstance(self._stream, ResponseStream) and self._stream.finished:
            return
        self._portal.call(self._stream.aclose)


class SyncASGITransport(httpx.BaseTransport):
    """A sync httpx transport over :class:`StreamingASGITransport`, on a private event loop.

    >>> from starlette.applications import Starlette
    >>> from starlette.responses import PlainTextResponse
    >>> from starlette.routing import Route
    >>> app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("hi"))])
    >>> with httpx.Client(transport=SyncASGITransport(app), base_url="http://app") as client:
    ...     client.get("/").text
    'hi'
    """

    def __init__(self, app: ASGIApp, *, lifespan: bool = True) -> None:
        self.app = app
        self._inner = StreamingASGITransport(app, lifespan=lifespan)
        self._lock = threading.Lock()
        self._stack: contextlib.ExitStack | None = None
        self._portal: BlockingPortal | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    def portal(self) -> BlockingPortal:
        """The blocking portal whose loop runs the app (started on first use)."""
        with self._lock:
            if self._portal is None:
                stack = contextlib.ExitStack()
                portal = stack.enter_context(start_blocking_portal())
                self._portal, self._stack = portal, stack
                # A transport nobody closed still shuts the app down (at collection or exit).
                self._finalizer = weakref.finalize(self, _shutdown, portal, self._inner, stack)
            return self._portal

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Serve ``request`` on the app's loop; the body streams chunk by chunk."""
        portal = self.portal()
        body = request.read()
        inner = httpx.Request(
            request.method,
            request.url,
            headers=request.headers,
            stream=httpx.ByteStream(body),
            extensions=request.extensions,
        )
        response, ready, complete = portal.call(self._open, inner)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers.raw,
            stream=_PortalStream(portal, response.stream, ready, complete),
            extensions=response.extensions,
        )

    async def _open(self, request: httpx.Request) -> tuple[httpx.Response, list[bytes], bool]:
        # One crossing for the start and whatever body is already there: usually all of it.
        response = await self._inner.handle_async_request(request)
        if isinstance(response.stream, ResponseStream):
            await asyncio.sleep(0)  # let the app's task send the body it has ready
            ready, complete = response.stream.ready()
            return response, ready, complete
        return response, [], False

    def close(self) -> None:
        """Disconnect open responses, shut the app down and stop the loop thread."""
        with self._lock:
            finalizer, self._finalizer = self._finalizer, None
            self._portal = self._stack = None
        if finalizer is not None:
            finalizer()


def _shutdown(
    portal: BlockingPortal, inner: StreamingASGITransport, stack: contextlib.ExitStack
) -> None:
    try:
        portal.call(inner.aclose)
    finally:
        stack.close()
