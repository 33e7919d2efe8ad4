"""Connection limits of the served instance: idle and slow clients time out, and the number of
connections is capped (uvicorn's own options plus what it lacks).

- ``KEEP_ALIVE_SECONDS`` (5): an idle connection between requests is closed (uvicorn's
  ``timeout_keep_alive``).
- ``HEADER_SECONDS`` (10): a connection must complete a request's headers within this time of
  opening (or of the previous response): a client that connects and sends nothing, or dribbles
  its headers, is closed. uvicorn has no such timeout; :class:`HeaderDeadlineProtocol` adds it
  to its httptools protocol.
- ``BODY_SECONDS`` (30): a request's body must arrive whole within this time of its headers,
  else 408 (:class:`BodyDeadline`, an ASGI middleware): 4 MB, the largest body accepted, takes
  milliseconds on loopback.
- ``MAX_CONNECTIONS`` (1,000): past this many open connections (or requests in progress), a
  new request is answered 503 at once (uvicorn's ``limit_concurrency``); event streams count.
"""

from __future__ import annotations

import asyncio
from asyncio import TimerHandle
from typing import Any, Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from toolkit.server.errors import ApiError

__all__ = [
    "BODY_SECONDS",
    "HEADER_SECONDS",
    "KEEP_ALIVE_SECONDS",
    "MAX_CONNECTIONS",
    "BodyDeadline",
    "HeaderDeadlineProtocol",
    "uvicorn_options",
]

KEEP_ALIVE_SECONDS: Final = 5
HEADER_SECONDS: Final = 10.0
BODY_SECONDS: Final = 30.0
MAX_CONNECTIONS: Final = 1000


class HeaderDeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, closing a connection whose request headers are not complete
    within ``HEADER_SECONDS`` of its opening or of the previous response."""

    header_seconds: float = HEADER_SECONDS
    _header_deadline: TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_deadline()

    def on_headers_complete(self) -> None:
        self._disarm_header_deadline()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and not self.pipeline:
            self._arm_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        super().connection_lost(exc)

    def _arm_header_deadline(self) -> None:
        self._disarm_header_deadline()
        self._header_deadline = self.loop.call_later(self.header_seconds, self._headers_late)

    def _disarm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_late(self) -> None:
        self._header_deadline = None
        if not self.transport.is_closing():
            self.transport.close()


class BodyDeadline:
    """ASGI middleware: the request body must arrive whole within ``seconds`` of the headers;
    otherwise the handler's read raises a 408 naming the limit (the header deadline then closes
    the connection if the client sends nothing more)."""

    def __init__(self, app: ASGIApp, seconds: float = BODY_SECONDS) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.seconds
        complete = False

        async def timed_receive() -> Message:
            nonlocal complete
            if complete:  # after the body: waiting for a disconnect is not bounded
                return await receive()
            try:
                async with asyncio.timeout_at(deadline):  # no task per call, unlike wait_for
                    message = await receive()
            except TimeoutError:
                raise ApiError(
                    408, f"body: not received whole within {self.seconds:g} s (the limit)"
                ) from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                complete = True
            return message

        await self.app(scope, timed_receive, send)


def uvicorn_options() -> dict[str, Any]:
    """The uvicorn options that apply these limits (see the module docstring)."""
    return {
        "http": HeaderDeadlineProtocol,
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "limit_concurrency": MAX_CONNECTIONS,
    }
