"""The record of every attempt a service client makes, and the ``Retry-After`` header.

The policy itself is the interface's one retry policy, :class:`toolkit.client.RetryPolicy`
(defined in :mod:`toolkit.resources.retry`, beside the wire models it governs).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

__all__ = ["Attempt", "AttemptHook", "retry_after_s"]


def _http_date(value: str) -> float | None:
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """The ``Retry-After`` header in seconds (RFC 9110 §10.2.3: a number of seconds or an HTTP
    date); None when absent or unreadable.

    A date is read against the answer's own ``Date`` header when it has one (so neither the
    local clock's skew nor a virtual clock changes the wait), else against the wall clock; a
    date already past waits 0.

    >>> retry_after_s({"retry-after": "2"})
    2.0
    >>> retry_after_s({"retry-after": "Wed, 21 Oct 2015 07:28:02 GMT",
    ...                "date": "Wed, 21 Oct 2015 07:28:00 GMT"})
    2.0
    """
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        at = _http_date(value)
        if at is None:
            return None
        sent = headers.get("date")
        now = _http_date(sent) if sent is not None else None
        return max(0.0, at - (time.time() if now is None else now))
    return seconds if seconds >= 0 else None


@dataclass(frozen=True)
class Attempt:
    """One HTTP attempt as the client saw it; never holds the API key.

    ``number`` counts attempts of one call from 1; ``status`` is the HTTP status or ``0`` when
    no answer arrived; ``retry_in`` is the delay before the next attempt, None when final.

    >>> a = Attempt("rfq", "GET", "/partner-intents/rfq", {"amount": "5"}, 1, 404, 3.2,
    ...             "rfq: HTTP 404: no capacity", 1.4)
    >>> (a.retry, a.final, a.ok)
    (0, False, False)
    """

    operation: str
    method: str
    path: str
    params: Mapping[str, str]
    number: int
    status: int
    latency_ms: float
    error: str | None = None
    retry_in: float | None = None

    @property
    def retry(self) -> int:
        """The retry index: 0 for the first attempt of a call."""
        return self.number - 1

    @property
    def final(self) -> bool:
        """Whether the call stopped after this attempt."""
        return self.retry_in is None

    @property
    def ok(self) -> bool:
        """Whether this attempt got a 2xx answer that parsed."""
        return 200 <= self.status < 300 and self.error is None


#: What receives every attempt: a client's ``on_attempt`` and a call's own.
AttemptHook = Callable[[Attempt], None]
