"""The retry policy of the service clients, and the record of every attempt it makes.

The rules (DESIGN.md, "Retries"):

* **400 and 401 never retry**: the request is wrong or the key is, and asking again changes
  nothing.
* **A 404 from the RFQ is capacity**, not validity: other quotes hold the pool's liquidity and
  their reservations lapse after 15 s. It is retried after a capped exponential backoff within
  ``capacity_retries``. A 404 from any other endpoint is final.
* **5xx, 429 and transport failures** (timeouts, refused or dropped connections) are retried
  with capped exponential backoff and jitter within ``error_retries``, but only for requests
  that are safe to repeat: the GET endpoints. An RFQ retried after a timeout may leave the lost
  attempt's reservation behind; it lapses in 15 s, and the collectors record every attempt so
  the orphan is visible in the data.
* **POSTs are never retried** (``POST /partner-intents/transaction`` and the borrow signature):
  the transaction call re-keys the quote's reservation to the order for 60 s, and the signature
  consumes a quote and a nonce. Repeating a call whose answer was lost would reserve or sign
  twice, so the error goes to the caller, who can decide with the quote in hand.

Delays use "equal jitter": half the capped exponential delay, plus a uniform draw over the other
half, from an injectable ``random.Random`` (seed it in tests). A ``Retry-After`` header on a
429/503 is honoured up to ``max_delay``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Attempt", "RetryClass", "RetryPolicy", "retry_after_seconds"]

RetryClass = Literal["rfq", "read", "never"]
"""How an operation may be retried: ``rfq`` (capacity 404s and errors), ``read`` (errors),
``never`` (POSTs)."""

_ERROR_STATUSES = frozenset({429, 500, 502, 503, 504})


def _non_negative(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ValueError(f"{name}: must be a non-negative number")
    return float(value)


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name}: must be a non-negative integer")
    return value


@dataclass
class RetryPolicy:
    """Budgets and backoff of the retry rules above.

    ``error_retries`` bounds retries after 5xx/429/transport errors, ``capacity_retries`` after
    RFQ 404s; each counts separately within one call. Delays grow as ``base * 2**n`` up to the
    cap (``error_base``/``error_cap``, ``capacity_base``/``capacity_cap``).

    >>> policy = RetryPolicy(rng=random.Random(7))
    >>> policy.delay_after("read", 503, retries=0) is not None
    True
    >>> policy.delay_after("read", 400, retries=0) is None
    True
    """

    error_retries: int = 3
    capacity_retries: int = 3
    error_base: float = 0.25
    error_cap: float = 5.0
    capacity_base: float = 1.0
    capacity_cap: float = 15.0
    max_delay: float = 30.0
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        _count(self.error_retries, "error_retries")
        _count(self.capacity_retries, "capacity_retries")
        for name in ("error_base", "error_cap", "capacity_base", "capacity_cap", "max_delay"):
            _non_negative(getattr(self, name), name)
        if not isinstance(self.rng, random.Random):
            raise ValueError("rng: must be a random.Random")

    @classmethod
    def no_retries(cls) -> RetryPolicy:
        """A policy that never retries (every attempt is final).

        >>> RetryPolicy.no_retries().delay_after("rfq", 404, retries=0) is None
        True
        """
        return cls(error_retries=0, capacity_retries=0)

    def _backoff(self, base: float, cap: float, retry_number: int) -> float:
        ceiling = min(cap, base * 2.0**retry_number)
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)

    def delay_after(
        self,
        retry_class: RetryClass,
        status: int,
        *,
        retries: int,
        capacity_retries: int = 0,
        retry_after: float | None = None,
    ) -> float | None:
        """Seconds to wait before retrying after ``status`` (0 = transport error), or None.

        ``retries`` is how many error retries this call already made, ``capacity_retries`` how
        many capacity retries; ``retry_after`` is the service's ``Retry-After`` in seconds.

        >>> RetryPolicy(rng=random.Random(1)).delay_after("never", 503, retries=0) is None
        True
        """
        if retry_class == "never":
            return None
        if status == 404 and retry_class == "rfq":
            if capacity_retries >= self.capacity_retries:
                return None
            return self._backoff(self.capacity_base, self.capacity_cap, capacity_retries)
        if status != 0 and status not in _ERROR_STATUSES:
            return None
        if retries >= self.error_retries:
            return None
        delay = self._backoff(self.error_base, self.error_cap, retries)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, self.max_delay)


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The ``Retry-After`` header in seconds; None when absent or an HTTP date.

    >>> retry_after_seconds({"retry-after": "2"})
    2.0
    """
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # an HTTP date: rare for these endpoints, fall back to the backoff
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
