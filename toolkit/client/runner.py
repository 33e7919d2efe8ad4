"""The transports of the clients: send an :class:`~toolkit.client.operations.Operation` over
httpx, sync or async, under the retry policy (its pacing first: each attempt waits for its
token when the policy has a ``max_rps``). This is all the sync and async clients do
differently; what to send and how to read the answer is the operation's
(:mod:`toolkit.client.endpoints`), the bookkeeping of attempts the :class:`CallSession`'s.
"""

from __future__ import annotations

from typing import TypeVar

import httpx

from toolkit.client import operations as ops
from toolkit.client.core import ClientCore
from toolkit.client.endpoints import AsyncCaller, SyncCaller
from toolkit.client.errors import InvalidResponse, ServiceError
from toolkit.client.retry import AttemptHook
from toolkit.client.session import SSE_HEADERS, CallSession
from toolkit.client.sse import EventStreamDecoder
from toolkit.clock import Clock, sleep_async

__all__ = ["AsyncRunner", "SyncRunner"]

T = TypeVar("T")


class SyncRunner(SyncCaller):
    """:meth:`call` over ``_http`` (an ``httpx.Client``), waiting on ``clock`` between tries."""

    _core: ClientCore
    _http: httpx.Client
    clock: Clock

    def _send(self, op: ops.Operation[T]) -> tuple[int, T]:
        headers = self._core.headers(op)
        if op.parse_event is None:
            response = self._http.request(
                op.method, op.path, params=op.params, json=op.json, headers=headers
            )
            if not response.is_success:
                raise op.refusal(response, self._core.secret_text())
            assert op.parse is not None
            return response.status_code, op.parse(response)
        with self._http.stream(
            op.method, op.path, params=op.params, json=op.json, headers={**headers, **SSE_HEADERS}
        ) as response:
            if not response.is_success:
                response.read()
                raise op.refusal(response, self._core.secret_text())
            ops.check_event_stream(op, response)
            decoder = EventStreamDecoder()
            for text in response.iter_text():
                for event in decoder.feed(text):
                    value = op.parse_event(event)
                    if value is not None:
                        return response.status_code, value
        raise InvalidResponse(op.name, response.status_code, detail="the event stream ended empty")

    def call(self, op: ops.Operation[T], *, on_attempt: AttemptHook | None = None) -> T:
        """Run ``op`` under the retry policy; return its value or raise a typed error."""
        session = CallSession(self._core, op, on_attempt)
        while True:
            wait = self._core.retry.pace(self.clock())
            if wait > 0:
                self.clock.sleep(wait)
            session.start()
            try:
                status, value = self._send(op)
            except httpx.TransportError as exc:
                error: ServiceError = self._core.transport_error(op.name, exc)
            except ServiceError as exc:
                error = exc
            else:
                session.succeeded(status)
                return value
            self.clock.sleep(session.failed(error))


class AsyncRunner(AsyncCaller):
    """:class:`SyncRunner` over an ``httpx.AsyncClient``: the same steps, awaited."""

    _core: ClientCore
    _http: httpx.AsyncClient
    clock: Clock

    async def _send(self, op: ops.Operation[T]) -> tuple[int, T]:
        headers = self._core.headers(op)
        if op.parse_event is None:
            response = await self._http.request(
                op.method, op.path, params=op.params, json=op.json, headers=headers
            )
            if not response.is_success:
                raise op.refusal(response, self._core.secret_text())
            assert op.parse is not None
            return response.status_code, op.parse(response)
        async with self._http.stream(
            op.method, op.path, params=op.params, json=op.json, headers={**headers, **SSE_HEADERS}
        ) as response:
            if not response.is_success:
                await response.aread()
                raise op.refusal(response, self._core.secret_text())
            ops.check_event_stream(op, response)
            decoder = EventStreamDecoder()
            async for text in response.aiter_text():
                for event in decoder.feed(text):
                    value = op.parse_event(event)
                    if value is not None:
                        return response.status_code, value
        raise InvalidResponse(op.name, response.status_code, detail="the event stream ended empty")

    async def call(self, op: ops.Operation[T], *, on_attempt: AttemptHook | None = None) -> T:
        """Run ``op`` under the retry policy; return its value or raise a typed error."""
        session = CallSession(self._core, op, on_attempt)
        while True:
            wait = self._core.retry.pace(self.clock())
            if wait > 0:
                await sleep_async(self.clock, wait)
            session.start()
            try:
                status, value = await self._send(op)
            except httpx.TransportError as exc:
                error: ServiceError = self._core.transport_error(op.name, exc)
            except ServiceError as exc:
                error = exc
            else:
                session.succeeded(status)
                return value
            await sleep_async(self.clock, session.failed(error))
