"""The bookkeeping of one call and of one event stream, shared by the sync and async clients.

The clients only do I/O; these classes count attempts, apply the retry policy, record every
attempt, and (for streams) hold the cursor, the deadline and the failure budget.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from toolkit.arguments import number
from toolkit.client.core import AttemptHook, ClientCore
from toolkit.client.errors import ServiceError, TransportError
from toolkit.client.events import StreamCursor, StreamEvent, parse_stream_event
from toolkit.client.operations import Operation, check_event_stream, error_for
from toolkit.client.sse import EventStreamDecoder

__all__ = ["CallSession", "StreamSession"]

SSE_HEADERS = {"Accept": "text/event-stream", "Cache-Control": "no-store"}


class CallSession:
    """The attempts of one call: numbering, retry budgets, records.

    >>> from toolkit.client.core import ClientCore, Endpoint
    >>> from toolkit.client.liquidity import health
    >>> core = ClientCore(Endpoint("https://x.example", transport_given=True, embedded=None,
    ...     env={}), api_key=None, protocol="partner-escrow", timeout=None, stream_timeout_s=9,
    ...     retry=None, on_attempt=None)
    >>> session = CallSession(core, health(), None)
    >>> session.start(); session.succeeded(200); session.number
    1
    """

    def __init__(self, core: ClientCore, op: Operation[Any], hook: AttemptHook | None) -> None:
        self.core = core
        self.op = op
        self.hook = hook
        self.number = 0
        self.retries = 0
        self.capacity = 0
        self.started = 0.0

    def start(self) -> None:
        """An attempt begins."""
        self.number += 1
        self.started = time.perf_counter()

    def succeeded(self, status: int) -> None:
        """Record the attempt that answered."""
        self.core.record(
            self.op,
            number=self.number,
            status=status,
            started=self.started,
            error=None,
            retry_in=None,
            hook=self.hook,
        )

    def failed(self, error: ServiceError) -> float:
        """Record the failed attempt; return the wait before the next one, or raise ``error``
        when the policy says it was the last."""
        capacity_answer = error.status == 404 and self.op.retry == "rfq"
        delay = self.core.retry.delay_after(
            self.op.retry,
            error.status,
            retries=self.retries,
            capacity_retries=self.capacity,
            retry_after=error.retry_after,
        )
        self.core.record(
            self.op,
            number=self.number,
            status=error.status,
            started=self.started,
            error=error,
            retry_in=delay,
            hook=self.hook,
        )
        if delay is None:
            raise error
        if capacity_answer:
            self.capacity += 1
        else:
            self.retries += 1
        return delay


class StreamSession:
    """One followed event stream: connections, the cursor, the deadline, the failure budget.

    Each connection is one attempt, recorded when it ends. Failed connections in a row (none
    delivering an event) are bounded by the policy's ``error_retries``.
    """

    def __init__(
        self,
        core: ClientCore,
        op: Operation[Any],
        *,
        last_event_id: int | None,
        duration_s: float | None,
        hook: AttemptHook | None,
    ) -> None:
        if duration_s is not None:
            number(duration_s, "duration_s", above=0)
        self.core = core
        self.op = op
        self.hook = hook
        self.cursor = StreamCursor(last_event_id)
        self.deadline = None if duration_s is None else time.monotonic() + duration_s
        self.failures = 0
        self.number = 0
        self.status = 0
        self.started = 0.0
        self._decoder = EventStreamDecoder()

    def running(self) -> bool:
        """Whether the stream should (re)connect: its duration has not run out."""
        return not self.expired()

    def expired(self) -> bool:
        """Whether the duration has run out."""
        return self.deadline is not None and time.monotonic() >= self.deadline

    def connect(self) -> dict[str, Any]:
        """Start a connection; the keyword arguments of its request."""
        self.number += 1
        self.started = time.perf_counter()
        self.status = 0
        self._decoder = EventStreamDecoder()
        return {
            "headers": {
                **self.core.headers(self.op),
                **self.cursor.headers(),
                **SSE_HEADERS,
            },
            "timeout": self.core.stream_timeout_for(self.deadline),
        }

    def opened(self, response: httpx.Response) -> None:
        """Check the answer (its body already read when it is an error): raise the typed error
        of a refusal or of anything but an event stream."""
        self.status = response.status_code
        if not response.is_success:
            raise error_for(self.op, response, self.core.secret_text())
        check_event_stream(self.op, response)
        self.cursor.connected()

    def feed(self, text: str) -> list[StreamEvent]:
        """The new events completed by ``text`` (replays dropped)."""
        events = []
        for sse in self._decoder.feed(text):
            parsed = parse_stream_event(sse)
            event = None if parsed is None else self.cursor.admit(parsed)
            if event is not None:
                self.failures = 0
                events.append(event)
        return events

    def ended(self) -> ServiceError | None:
        """The service ended the response: fine at the deadline, else a dropped stream."""
        if self.expired():
            return None
        return TransportError(self.op.name, "the service closed the event stream")

    def error(self, exc: httpx.TransportError | ServiceError) -> ServiceError | None:
        """The typed error of a failed connection; None for a read timeout at the deadline."""
        if isinstance(exc, ServiceError):
            return exc
        if isinstance(exc, httpx.ReadTimeout) and self.expired():
            return None
        return self.core.transport_error(self.op.name, exc)

    def finish(self) -> None:
        """Record the last connection, which ended because the stream is done."""
        self.core.record(
            self.op,
            number=self.number,
            status=self.status,
            started=self.started,
            error=None,
            retry_in=None,
            hook=self.hook,
        )

    def retry(self, error: ServiceError) -> float:
        """Record the failed connection; the wait before reconnecting, or raise ``error``."""
        delay = self.core.retry.delay_after(
            "read", error.status, retries=self.failures, retry_after=error.retry_after
        )
        self.core.record(
            self.op,
            number=self.number,
            status=self.status or error.status,
            started=self.started,
            error=error,
            retry_in=delay,
            hook=self.hook,
        )
        if delay is None:
            raise error
        self.failures += 1
        if self.deadline is not None:
            delay = min(delay, max(0.0, self.deadline - time.monotonic()))
        return delay
