"""The sync client of the partner-intents and liquidity surfaces: the endpoints of
:class:`~toolkit.client.service.ServiceEndpoints` (documented there), sent by
:class:`~toolkit.client.runner.SyncRunner`; its own are the construction and the event stream's
loop."""

from __future__ import annotations

from collections.abc import Generator, Mapping

import httpx

from toolkit.client import liquidity
from toolkit.client import operations as ops
from toolkit.client.core import (
    DEFAULT_STREAM_TIMEOUT_S,
    AttemptHook,
    ClientCore,
    Endpoint,
    SyncLifecycle,
)
from toolkit.client.embedded import EmbeddedService
from toolkit.client.errors import ServiceError
from toolkit.client.events import StreamEvent
from toolkit.client.runner import SyncRunner
from toolkit.client.service import ServiceEndpoints
from toolkit.client.session import StreamSession
from toolkit.clock import Clock
from toolkit.resources.retry import RetryPolicy
from toolkit.scenario.secret import Secret

__all__ = ["ServiceClient"]


class ServiceClient(ServiceEndpoints, SyncRunner, SyncLifecycle):
    """Sync client for the partner-intents and liquidity surfaces.

    The target is ``base_url``, else ``embedded`` (an :class:`~toolkit.client.EmbeddedService`,
    or ``True`` for a new simulated one this client owns), else the configured
    :class:`~toolkit.client.Target` (``TOOLKIT_BASE_URL`` or a profile); with none of these it
    raises :class:`~toolkit.client.NoTarget` saying how to choose one: the simulator is never
    started unasked. ``api_key`` defaults to ``TOOLKIT_API_KEY`` (or the embedded scenario's key).
    Every HTTP attempt is reported to ``on_attempt`` as an :class:`~toolkit.client.Attempt`;
    ``retry`` is the :class:`~toolkit.client.RetryPolicy`; back-offs wait on ``clock`` (a
    :mod:`toolkit.clock` clock), which collectors on this client read and sleep on too. It
    defaults to the embedded service's clock (given a ``clock``, an embedded service this
    client starts runs on it), else the wall clock.

    >>> with ServiceClient(embedded=True) as client:
    ...     client.health().status
    'ok'
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | Secret | None = None,
        protocol: str = ops.DEFAULT_PROTOCOL,
        timeout: httpx.Timeout | float | None = None,
        stream_timeout_s: float = DEFAULT_STREAM_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        on_attempt: AttemptHook | None = None,
        transport: httpx.BaseTransport | None = None,
        embedded: EmbeddedService | bool | None = None,
        clock: Clock | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        target = Endpoint(
            base_url,
            transport_given=transport is not None,
            embedded=embedded,
            env=env,
            clock=clock,
        )
        try:
            self._core = ClientCore(
                target,
                api_key=api_key,
                protocol=protocol,
                timeout=timeout,
                stream_timeout_s=stream_timeout_s,
                retry=retry,
                on_attempt=on_attempt,
            )
            if target.embedded is not None:
                transport = target.embedded.sync_transport()
            self._http = httpx.Client(
                base_url=target.base_url, transport=transport, timeout=self._core.timeout
            )
        except BaseException:
            target.close()
            raise
        self.clock: Clock = target.clock

    def liquidity_events(
        self,
        protocol: str | None = None,
        *,
        last_event_id: int | None = None,
        duration_s: float | None = None,
        on_attempt: AttemptHook | None = None,
    ) -> Generator[StreamEvent, None, None]:
        """Typed liquidity and fee events, reconnecting with ``Last-Event-ID`` after drops.

        Ends after ``duration_s`` seconds (None: never; stop by closing the iterator). Each
        connection is reported to ``on_attempt`` when it ends. Consecutive failed connections
        are bounded by the retry policy's ``error_retries``; 400/401 end it at once.

        >>> events = client.liquidity_events(duration_s=5)
        >>> first = next(events)   # the state on connect comes first, marked as a snapshot
        >>> first.event, first.snapshot
        ('liquidity', True)
        >>> events.close()
        """
        op = liquidity.events(protocol or self.protocol)
        session = StreamSession(
            self._core, op, last_event_id=last_event_id, duration_s=duration_s, hook=on_attempt
        )
        while session.running():
            wait = self._core.retry.pace(self.clock())
            if wait > 0:
                self.clock.sleep(wait)
            error: ServiceError | None
            try:
                with self._http.stream("GET", op.path, **session.connect()) as response:
                    if not response.is_success:
                        response.read()
                    session.opened(response)
                    for text in response.iter_text():
                        yield from session.feed(text)
                        if session.expired():
                            break
                error = session.ended()
            except GeneratorExit:
                session.finish()
                raise
            except (httpx.TransportError, ServiceError) as exc:
                error = session.error(exc)
            if error is None:
                session.finish()
                return
            self.clock.sleep(session.retry(error))
