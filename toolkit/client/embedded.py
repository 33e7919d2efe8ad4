"""The embedded service running in-process, as a client target with no socket.

:class:`EmbeddedService` builds the app with :func:`toolkit.server.create_app` from a scenario
(``default`` unless told otherwise) and hands clients in-process transports for it. Its API key
is the scenario's: ``TOOLKIT_API_KEY`` when set (the embedded service then accepts exactly that
key), else the scenario's built-in simulation key.

Each instance has its own URL, ``http://embedded-<id>.invalid`` (``.invalid`` can never resolve,
so nothing leaves the process), so that data collected from two embedded services, whose event
ids both start at 1, never share a source in the store.

One EmbeddedService runs its app on one event loop: every sync client built on it shares the
loop thread of :meth:`sync_transport`, so concurrent sync clients (a collector and a traffic
driver) see one consistent service. Async clients use :meth:`async_transport` on their own loop;
do not mix the two on one instance.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from toolkit.client.asgi import ASGIApp, StreamingASGITransport
from toolkit.client.asgi_sync import SyncASGITransport
from toolkit.client.closing import Closing
from toolkit.clock import WALL, Clock
from toolkit.scenario import Scenario, load_scenario
from toolkit.scenario.secret import Secret

__all__ = ["EmbeddedService"]


class _SharedTransport(httpx.BaseTransport):
    """A client's handle on a shared transport: requests go through, ``close`` does not."""

    def __init__(self, inner: SyncASGITransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._inner.handle_request(request)


class EmbeddedService(Closing):
    """The embedded service app plus in-process transports for the clients.

    ``scenario`` is a loaded :class:`~toolkit.scenario.Scenario`, a scenario name or a path;
    ``clock`` (a :mod:`toolkit.clock` clock: the wall clock by default, or a
    :class:`~toolkit.clock.VirtualClock`) and ``app_options`` (``heartbeat``, ``tick``) go to
    ``create_app``; clients on this service read and sleep on the same ``clock``. Pass ``app``
    (with its ``clock``, and ``api_key``) to wrap an app built elsewhere.

    >>> service = EmbeddedService()
    >>> service.base_url.startswith("http://embedded-")
    True
    """

    def __init__(
        self,
        scenario: Scenario | str | Path | None = None,
        *,
        app: ASGIApp | None = None,
        api_key: str | Secret | None = None,
        clock: Clock = WALL,
        env: Mapping[str, str] | None = None,
        **app_options: Any,
    ) -> None:
        key: Secret | None = None
        loaded: Scenario | None = None
        if app is None:
            from toolkit.server import create_app

            loaded = load_scenario(scenario, os.environ if env is None else env)
            app = create_app(loaded, clock=clock, **app_options)
            key = loaded.auth.api_keys[0] if loaded.auth.api_keys else None
        elif scenario is not None or app_options:
            raise ValueError("app: give a scenario (and app options) or an app, not both")
        if api_key is not None:
            key = api_key if isinstance(api_key, Secret) else Secret(api_key)
        self.app: ASGIApp = app
        #: The scenario the service runs (None for an app given ready-made).
        self.scenario: Scenario | None = loaded
        self.clock = clock
        self.api_key: Secret | None = key
        self.instance = uuid.uuid4().hex[:12]
        self.base_url = f"http://embedded-{self.instance}.invalid"
        self._lock = threading.Lock()
        self._sync: SyncASGITransport | None = None

    def sync_transport(self) -> httpx.BaseTransport:
        """A handle on the one sync transport of this service (its loop thread starts on first
        use). Closing the handle (as ``httpx.Client.close`` does) leaves the service running
        for its other clients; :meth:`close` stops it."""
        with self._lock:
            if self._sync is None:
                self._sync = SyncASGITransport(self.app)
            return _SharedTransport(self._sync)

    def async_transport(self) -> StreamingASGITransport:
        """A new async transport for the caller's event loop."""
        return StreamingASGITransport(self.app)

    def close(self) -> None:
        """Disconnect open streams and stop the loop thread of the sync transport."""
        with self._lock:
            transport, self._sync = self._sync, None
        if transport is not None:
            transport.close()

    def __repr__(self) -> str:
        return f"EmbeddedService(base_url={self.base_url!r})"
