"""Posting JSON to a webhook under the one retry policy: how a health watch tells a risk team.

:class:`Webhook` POSTs a JSON body and retries 429s, 5xx answers, timeouts and dropped
connections as :class:`~toolkit.client.RetryPolicy` retries a read (``Retry-After`` honoured,
``max_rps`` pacing): an alert carries its own ``alert_id``, so a receiver that got an attempt
whose answer was lost sees the same id again and keeps one. Other statuses are final. The URL
often holds a token of its own (``/services/T0ABC123/B0DEF456/Xq7s...``): it is shown, stored
and logged only as :func:`toolkit.urls.shown_url` shows it, and a body carrying a URL is
refused before anything is sent, so no key or URL with credentials leaves in one.

>>> import httpx
>>> bodies = []
>>> def receiver(request):
...     bodies.append(request.content)
...     return httpx.Response(204)
>>> url = "https://hooks.example/services/T0ABC123/B0DEF456/Xq7sLk29dWmB4TnP8cR3vY6z"
>>> hook = Webhook(url, transport=httpx.MockTransport(receiver))
>>> hook.send({"alert_id": "a1", "state": "breached"})
Delivery(delivered=True, status=204, attempts=1, error=None)
>>> hook.url, bodies
('https://hooks.example/services/T0ABC123/B0DEF456/***', [b'{"alert_id":"a1","state":"breached"}'])
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from toolkit.client.config import DEFAULT_TIMEOUT
from toolkit.client.retry import Attempt, AttemptHook, retry_after_s
from toolkit.client.target import check_url
from toolkit.clock import WALL, Clock
from toolkit.resources.retry import RetryPolicy
from toolkit.urls import shown_url

__all__ = ["Delivery", "Webhook"]


@dataclass(frozen=True)
class Delivery:
    """The outcome of one :meth:`Webhook.send`: whether the receiver took it (2xx), its last
    status (0: no answer), the attempts made and the last error."""

    delivered: bool
    status: int
    attempts: int
    error: str | None


def _refuse_urls(value: Any, path: str = "body") -> None:
    """Raise ValueError naming the field when any string in ``value`` holds a URL."""
    if isinstance(value, str):
        if "://" in value:
            raise ValueError(f"{path}: a webhook body carries no URL (it may hold credentials)")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _refuse_urls(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _refuse_urls(item, f"{path}[{index}]")


class Webhook:
    """A webhook endpoint: ``url`` (http or https), the one ``retry`` policy, ``timeout``,
    waits on ``clock``; ``on_attempt`` sees every attempt as an
    :class:`~toolkit.client.Attempt` (path: the URL as shown)."""

    def __init__(
        self,
        url: str,
        *,
        retry: RetryPolicy | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        clock: Clock | None = None,
        on_attempt: AttemptHook | None = None,
    ) -> None:
        self._url = check_url(url, "webhook")
        self.retry = RetryPolicy() if retry is None else retry
        self.clock: Clock = WALL if clock is None else clock
        self.on_attempt = on_attempt
        self._client = httpx.Client(transport=transport, timeout=timeout)

    @property
    def url(self) -> str:
        """The endpoint as the redaction policy shows it (never its token)."""
        return shown_url(self._url)

    def send(self, body: Mapping[str, Any]) -> Delivery:
        """POST ``body`` as JSON, retried as the policy says; the :class:`Delivery`."""
        _refuse_urls(body)
        content = json.dumps(body, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json"}
        retries, number = 0, 0
        while True:
            wait = self.retry.pace(self.clock())
            if wait > 0:
                self.clock.sleep(wait)
            number += 1
            started = time.perf_counter()
            status, error, retry_after = 0, None, None
            try:
                answer = self._client.post(self._url, content=content, headers=headers)
                status, retry_after = answer.status_code, retry_after_s(answer.headers)
                if not answer.is_success:
                    error = f"HTTP {status}"
            except httpx.TransportError as exc:
                error = type(exc).__name__
            delay = (
                None
                if error is None
                else self.retry.delay_after(
                    "read", status, retries=retries, retry_after=retry_after
                )
            )
            self._record(body, number, status, started, error, delay)
            if delay is None:
                return Delivery(error is None, status, number, error)
            retries += 1
            self.clock.sleep(delay)

    def _record(
        self,
        body: Mapping[str, Any],
        number: int,
        status: int,
        started: float,
        error: str | None,
        delay: float | None,
    ) -> None:
        if self.on_attempt is None:
            return
        self.on_attempt(
            Attempt(
                operation="webhook",
                method="POST",
                path=self.url,
                params={"alert_id": str(body.get("alert_id", ""))},
                number=number,
                status=status,
                latency_ms=(time.perf_counter() - started) * 1000.0,
                error=error,
                retry_in=delay,
            )
        )

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

    def __repr__(self) -> str:
        return f"Webhook({self.url!r})"
