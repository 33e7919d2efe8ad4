"""In-process httpx transports that *stream* an ASGI app's responses (no socket).

``httpx.ASGITransport`` runs the app to completion and buffers the whole body, so an endless
server-sent-event stream never returns through it. :class:`StreamingASGITransport` runs each
request as a task and hands the response back as soon as the app sends its start message; the
body flows through an asyncio queue between the app's ``send`` and the response stream. Closing
the response tells the app the client disconnected (``http.disconnect``), as a server would.

Its sync twin, :class:`~toolkit.client.asgi_sync.SyncASGITransport`, runs it on a private event
loop. Both honour the request's read timeout (waiting for the response start and for each chunk),
run the app's lifespan (startup on first use, shutdown on close), and turn an app crash before
the response into a 500, as uvicorn does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import unquote

import httpx

__all__ = ["ASGIApp", "StreamingASGITransport"]

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

_log = logging.getLogger(__name__)
_END: Message = {"type": "toolkit.app.returned"}
# How long a closed response waits for the app to notice the disconnect before cancelling it.
_DRAIN_SECONDS = 0.25
# How long the lifespan shutdown may take.
_SHUTDOWN_SECONDS = 5.0


class _Lifespan:
    """The ASGI lifespan protocol: startup before the first request, shutdown on close."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        self._to_app: asyncio.Queue[Message] = asyncio.Queue()
        self._from_app: asyncio.Queue[Message] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.state: dict[str, Any] = {}
        self.supported = True

    async def _run(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": self.state}
        try:
            await self._app(scope, self._to_app.get, self._from_app.put)
        except Exception:  # an app without lifespan support raises here, by the ASGI spec
            self.supported = False
        finally:
            await self._from_app.put(_END)

    async def startup(self) -> None:
        self._task = asyncio.create_task(self._run())
        await self._to_app.put({"type": "lifespan.startup"})
        message = await self._from_app.get()
        if message["type"] == "lifespan.startup.failed":
            raise RuntimeError(f"the embedded service failed to start: {message.get('message')}")
        if message is _END:
            self.supported = False

    async def shutdown(self) -> None:
        if self._task is None:
            return
        if self.supported and not self._task.done():
            await self._to_app.put({"type": "lifespan.shutdown"})
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._from_app.get(), _SHUTDOWN_SECONDS)
        await _finish(self._task, _SHUTDOWN_SECONDS)


async def _finish(task: asyncio.Task[Any], timeout: float = _DRAIN_SECONDS) -> None:
    """Let ``task`` end on its own for ``timeout`` seconds, then cancel it."""
    if not task.done():
        await asyncio.wait({task}, timeout=timeout)
    if not task.done():
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


class _Exchange:
    """One request/response between the client and the app."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.body_sent = False
        self.messages: asyncio.Queue[Message] = asyncio.Queue()
        self.disconnected = asyncio.Event()
        self.started = False
        self.task: asyncio.Task[None] | None = None

    async def receive(self) -> Message:
        if not self.body_sent:
            self.body_sent = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.disconnected.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        # Like a server after the peer hung up: later sends go nowhere.
        if not self.disconnected.is_set():
            await self.messages.put(message)

    async def next(self, request: httpx.Request, timeout: float | None) -> Message:
        try:
            return await asyncio.wait_for(self.messages.get(), timeout)
        except TimeoutError:
            raise httpx.ReadTimeout(
                "the embedded service did not answer within the read timeout", request=request
            ) from None

    async def close(self) -> None:
        self.disconnected.set()
        if self.task is not None:
            await _finish(self.task)


class ResponseStream(httpx.AsyncByteStream):
    """A streamed response's body: the chunks the app sends, as it sends them."""

    def __init__(self, exchange: _Exchange, request: httpx.Request, timeout: float | None):
        self._exchange = exchange
        self._request = request
        self._timeout = timeout
        self._complete = False
        self._ended = False

    def _take(self, message: Message) -> bytes:
        if message is _END:
            self._ended = True
            return b""
        if message["type"] != "http.response.body":
            return b""
        if not message.get("more_body", False):
            self._complete = True
        return b"" if self._request.method == "HEAD" else bytes(message.get("body", b""))

    def _check_ended(self) -> None:
        if self._ended:
            raise httpx.RemoteProtocolError(
                "the embedded service ended the response before its last chunk",
                request=self._request,
            )

    def ready(self) -> tuple[list[bytes], bool]:
        """The chunks the app has already sent (without waiting), and whether that was all."""
        chunks: list[bytes] = []
        while not self._complete and not self._ended:
            try:
                message = self._exchange.messages.get_nowait()
            except asyncio.QueueEmpty:
                break
            chunk = self._take(message)
            if chunk:
                chunks.append(chunk)
        return chunks, self._complete

    @property
    def finished(self) -> bool:
        """Whether the whole body was read and the app has returned."""
        task = self._exchange.task
        return self._complete and task is not None and task.done()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while not self._complete:
            self._check_ended()
            chunk = self._take(await self._exchange.next(self._request, self._timeout))
            if chunk:
                yield chunk
        self._check_ended()

    async def aclose(self) -> None:
        await self._exchange.close()


def _scope(request: httpx.Request, client: tuple[str, int], state: dict[str, Any]) -> Message:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "headers": [(k.lower(), v) for (k, v) in request.headers.raw],
        "scheme": request.url.scheme,
        "path": unquote(request.url.path),
        "raw_path": request.url.raw_path.split(b"?")[0],
        "query_string": request.url.query,
        "server": (request.url.host, request.url.port),
        "client": client,
        "root_path": "",
        "state": dict(state),
    }


class StreamingASGITransport(httpx.AsyncBaseTransport):
    """An async httpx transport that serves requests from an ASGI app, streaming responses.

    >>> import asyncio
    >>> from starlette.applications import Starlette
    >>> from starlette.responses import PlainTextResponse
    >>> from starlette.routing import Route
    >>> app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("hi"))])
    >>> async def main():
    ...     async with httpx.AsyncClient(transport=StreamingASGITransport(app),
    ...                                  base_url="http://app") as client:
    ...         return (await client.get("/")).text
    >>> asyncio.run(main())
    'hi'
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        client: tuple[str, int] = ("127.0.0.1", 50000),
        lifespan: bool = True,
    ) -> None:
        self.app = app
        self._client = client
        self._use_lifespan = lifespan
        self._lifespan: _Lifespan | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._open: set[_Exchange] = set()

    async def _started(self) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
            if self._use_lifespan:
                self._lifespan = _Lifespan(self.app)
                await self._lifespan.startup()
        elif self._loop is not loop:
            raise RuntimeError(
                "the in-process transport is bound to the event loop that first used it; "
                "create a new client for another event loop"
            )
        return self._lifespan.state if self._lifespan is not None else {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Run the app for ``request``; return once it has sent the response start."""
        state = await self._started()
        timeout = request.extensions.get("timeout", {}).get("read")
        exchange = _Exchange(await request.aread())
        self._open.add(exchange)
        scope = _scope(request, self._client, state)
        exchange.task = asyncio.create_task(self._serve(exchange, scope))
        try:
            message = await exchange.next(request, timeout)
            while message is not _END and message["type"] != "http.response.start":
                message = await exchange.next(request, timeout)
        except BaseException:
            await exchange.close()
            raise
        if message is _END:
            await exchange.close()
            # uvicorn answers a crashed app with a bare 500; so does the embedded service.
            return httpx.Response(500, text="Internal Server Error", request=request)
        stream = ResponseStream(exchange, request, timeout)
        return httpx.Response(
            int(message["status"]),
            headers=[(bytes(k), bytes(v)) for k, v in message.get("headers", [])],
            stream=stream,
            extensions={"http_version": b"HTTP/1.1"},
        )

    async def _serve(self, exchange: _Exchange, scope: Message) -> None:
        try:
            await self.app(scope, exchange.receive, exchange.send)
        except Exception:
            _log.exception("Exception in the embedded service")
        finally:
            self._open.discard(exchange)
            await exchange.messages.put(_END)

    async def aclose(self) -> None:
        """Disconnect every open response and run the app's lifespan shutdown."""
        for exchange in list(self._open):
            await exchange.close()
        if self._lifespan is not None:
            lifespan, self._lifespan = self._lifespan, None
            await lifespan.shutdown()
        self._loop = None
