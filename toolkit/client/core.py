"""What the sync and async clients share: target, key, timeouts, hooks and attempt records."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx

from toolkit.client.closing import Closing
from toolkit.client.config import resolve_timeout
from toolkit.client.embedded import EmbeddedService
from toolkit.client.errors import ServiceError, TransportError
from toolkit.client.operations import Operation
from toolkit.client.retry import Attempt, AttemptHook
from toolkit.client.target import Surface, TargetError, check_url
from toolkit.client.target import Target as ConfigTarget
from toolkit.clock import WALL, Clock
from toolkit.resources.retry import RetryPolicy
from toolkit.scenario.secret import Secret
from toolkit.urls import shown_url

__all__ = ["AttemptHook", "ClientCore", "Endpoint"]

_log = logging.getLogger("toolkit.client")
#: Placeholder origin when a caller passes a transport without a URL (tests, fault injection).
_TRANSPORT_ONLY_URL = "http://service.invalid"
#: Read timeout of an event stream: longer than the service's heartbeat interval.
DEFAULT_STREAM_TIMEOUT_S = 45.0


class Endpoint:
    """Where a client sends requests: the base URL (credentials split off), the key for it,
    the embedded service if in-process, and the clock: the embedded service's (which runs on
    the one given, if it is started here), else the one given, else the wall clock.

    Resolution, first match: ``embedded`` (a service, or ``True`` for a new one owned by the
    client); ``url``; a ``transport`` alone (tests, fault injection); the configured
    :class:`~toolkit.client.target.Target` (environment, profile) for ``surface``. Nothing
    configured is :class:`~toolkit.client.target.NoTarget`, never a silent simulator.
    """

    def __init__(
        self,
        url: str | None,
        *,
        surface: Surface = "service",
        transport_given: bool,
        embedded: EmbeddedService | bool | None,
        env: Mapping[str, str] | None,
        clock: Clock | None = None,
        field: str = "base_url",
    ) -> None:
        self.owned = False
        self.embedded: EmbeddedService | None = None
        self.key: Secret | None = None
        self.username: str | None = None
        config: ConfigTarget | None = None
        if embedded is not None and embedded is not False and url is not None:
            raise TargetError(f"{field}: give a URL or the embedded service, not both")
        if embedded is None or embedded is False:
            embedded = None
            if url is None:
                config = ConfigTarget.load(env=env)
                if config.embedded:
                    embedded = True
                elif not transport_given or _configured(config, surface):
                    url = config.require(surface)
                    field = _VARIABLE[surface]
        if embedded is not None:
            if transport_given:
                raise TargetError("transport: give a transport or an embedded service, not both")
            if embedded is True:
                scenario = None if config is None else config.scenario
                embedded = EmbeddedService(
                    scenario, env=env, clock=WALL if clock is None else clock
                )
                self.owned = True
            assert isinstance(embedded, EmbeddedService)
            self.embedded = embedded
            self.base_url = embedded.base_url
            self.clock: Clock = embedded.clock if clock is None else clock
            self.key = embedded.api_key
            return
        self.clock = WALL if clock is None else clock
        if url is None:
            self.base_url = _TRANSPORT_ONLY_URL
            return
        self.base_url, self.username, password = _split_userinfo(check_url(url, field))
        if config is None:
            config = ConfigTarget.load(env=env)
        self.key = config.swap_api_key if surface == "swap" else config.api_key
        if password is not None:
            self.key = Secret(password)
        if surface == "swap" and self.username is None:
            self.username = config.swap_username

    def close(self) -> None:
        """Close the embedded service if this endpoint created it."""
        if self.owned and self.embedded is not None:
            self.embedded.close()


_VARIABLE: dict[str, str] = {
    "service": "TOOLKIT_BASE_URL",
    "swap": "TOOLKIT_SWAP_URL",
    "credit": "TOOLKIT_CREDIT_URL",
}


def _configured(config: ConfigTarget, surface: Surface) -> bool:
    try:
        config.require(surface)
    except TargetError:
        return False
    return True


def _split_userinfo(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without its userinfo, and the username and password it carried."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None, None
    netloc = parts.netloc.rpartition("@")[2]
    bare = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return bare, unquote(parts.username or "") or None, unquote(parts.password or "") or None


class ClientCore:
    """Configuration and bookkeeping common to :class:`ServiceClient` and the async client."""

    def __init__(
        self,
        target: Endpoint,
        *,
        api_key: str | Secret | None,
        protocol: str,
        timeout: httpx.Timeout | float | None,
        stream_timeout_s: float,
        retry: RetryPolicy | None,
        on_attempt: AttemptHook | None,
    ) -> None:
        key = target.key
        if isinstance(api_key, Secret):
            key = api_key
        elif api_key is not None:
            if not isinstance(api_key, str) or not api_key.strip():
                raise ValueError("api_key: must be a non-empty string")
            key = Secret(api_key.strip())
        if not isinstance(protocol, str) or not protocol.strip() or "/" in protocol:
            raise ValueError("protocol: must be a non-empty protocol name without '/'")
        if (
            isinstance(stream_timeout_s, bool)
            or not isinstance(stream_timeout_s, int | float)
            or stream_timeout_s <= 0
        ):
            raise ValueError("stream_timeout_s: must be a positive number of seconds")
        if retry is not None and not isinstance(retry, RetryPolicy):
            raise ValueError("retry: must be a RetryPolicy")
        if on_attempt is not None and not callable(on_attempt):
            raise ValueError("on_attempt: must be callable")
        self.target = target
        self.key = key
        self.protocol = protocol
        self.timeout = resolve_timeout(timeout)
        self.stream_timeout_s = float(stream_timeout_s)
        self.retry = RetryPolicy() if retry is None else retry
        self.on_attempt = on_attempt

    @property
    def url(self) -> str:
        """The base URL without credentials."""
        return shown_url(self.target.base_url)

    def headers(self, operation: Operation[Any]) -> dict[str, str]:
        """Request headers: the key only for operations that need it."""
        if operation.auth and self.key is not None:
            return {"X-Auth-Token": self.key.reveal()}
        return {}

    def secret_text(self) -> str | None:
        """The key's text, for scrubbing it out of anything the service echoes."""
        return None if self.key is None else self.key.reveal()

    def transport_error(self, operation: str, exc: httpx.TransportError) -> TransportError:
        """A :class:`TransportError` describing ``exc`` (key scrubbed, no URL)."""
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        secret = self.secret_text()
        if secret:
            detail = detail.replace(secret, "***")
        return TransportError(operation, detail)

    def stream_timeout_for(self, deadline: float | None) -> httpx.Timeout:
        """Timeouts of a stream request: the read timeout bounded by what is left until
        ``deadline`` (a ``time.monotonic()`` value), so a quiet stream cannot overrun it."""
        read = self.stream_timeout_s
        if deadline is not None:
            read = max(0.05, min(read, deadline - time.monotonic() + 0.05))
        return httpx.Timeout(
            connect=self.timeout.connect,
            read=read,
            write=self.timeout.write,
            pool=self.timeout.pool,
        )

    def record(
        self,
        operation: Operation[Any],
        *,
        number: int,
        status: int,
        started: float,
        error: ServiceError | None,
        retry_in: float | None,
        hook: AttemptHook | None,
    ) -> Attempt:
        """Build the :class:`Attempt`, log it, and hand it to the client and call hooks."""
        attempt = Attempt(
            operation=operation.name,
            method=operation.method,
            path=operation.path,
            params=dict(operation.params),
            number=number,
            status=status,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            error=None if error is None else str(error),
            retry_in=retry_in,
        )
        if _log.isEnabledFor(logging.DEBUG):
            outcome = f"HTTP {status}" if status else "no response"
            then = "" if retry_in is None else f"; retrying in {retry_in:.2f} s"
            _log.debug(
                "%s %s attempt %d: %s in %.1f ms%s",
                operation.name,
                operation.summary(),
                number,
                outcome,
                attempt.latency_ms,
                then,
            )
        for callback in (self.on_attempt, hook):
            if callback is not None:
                callback(attempt)
        return attempt

    def describe(self, kind: str) -> str:
        """The repr of a client: its URL and whether it holds a key, never the key."""
        key = "Secret('***')" if self.key is not None else "None"
        mode = ", embedded=True" if self.target.embedded is not None else ""
        return f"{kind}(base_url={self.url!r}, api_key={key}, protocol={self.protocol!r}{mode})"


class ClientSettings:
    """What the sync and async clients expose alike, read from their :class:`ClientCore`."""

    _core: ClientCore

    @property
    def base_url(self) -> str:
        """The service URL without credentials (what collectors record as the target)."""
        return self._core.url

    @property
    def embedded(self) -> EmbeddedService | None:
        """The in-process embedded service, or None when talking to a URL."""
        return self._core.target.embedded

    @property
    def protocol(self) -> str:
        """The intent protocol of the liquidity endpoints (``partner-escrow``)."""
        return self._core.protocol

    @property
    def retry(self) -> RetryPolicy:
        """The retry policy."""
        return self._core.retry

    def __repr__(self) -> str:
        return self._core.describe(type(self).__name__)


class SyncLifecycle(Closing):
    """``close()`` and ``with`` for a client over ``_http`` (an ``httpx.Client``) and its
    target: closing ends the connections, then the embedded service if this client started it."""

    _core: ClientCore
    _http: httpx.Client

    def close(self) -> None:
        """Close connections (and the embedded service when this client started it)."""
        try:
            self._http.close()
        finally:
            self._core.target.close()


class AsyncLifecycle:
    """:class:`SyncLifecycle` for a client over an ``httpx.AsyncClient``: ``aclose()`` and
    ``async with``."""

    _core: ClientCore
    _http: httpx.AsyncClient

    async def aclose(self) -> None:
        """Close connections (and the embedded service when this client started it)."""
        try:
            await self._http.aclose()
        finally:
            self._core.target.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
