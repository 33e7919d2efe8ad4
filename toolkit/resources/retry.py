"""The one retry policy: the Retry column of the interface's error table, as a policy.

The service clients (``toolkit.client``) follow it over HTTP, and backtests (``toolkit.backtest``)
simulate the same clients with it, so what a backtest says about retries is what the
collectors do. Its public name is ``toolkit.client.RetryPolicy`` (one import path); this
module defines it here, below both, and ``toolkit.resources`` does not re-export it.

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

* **A rate limit in a JSON-RPC answer** (a node's ``429`` code, Infura's "request rate
  exceeded": :func:`toolkit.chain.providers.refusal_kind`) is a 429, and **an answer cut short
  or not JSON at all** (a garbled body under a 200) is a transport failure: both are retried
  as above. A JSON body of the wrong shape is the interface's problem, not the wire's: final.

Delays use "equal jitter": half the capped exponential delay, plus a uniform draw over the other
half, from an injectable ``random.Random`` (seed it in tests). A ``Retry-After`` header on a
429/503 (seconds or an HTTP date), or a node's own ``backoff_seconds``, is honoured up to
``max_delay``.

**Pacing.** ``max_rps`` keeps every attempt made under one policy (first tries and retries, of
every client the policy is given to: a collector's service client and its chain providers) to
that rate, as a token bucket of ``burst`` tokens refilled at ``max_rps`` per second: over any
window of ``w`` seconds at most ``max_rps * w + burst`` attempts start. :meth:`RetryPolicy.pace`
reserves an attempt's token and says how long to wait for it; the clients wait on their clock.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from typing import Literal

from toolkit.arguments import number, whole

RetryClass = Literal["rfq", "read", "never"]
"""How an operation may be retried: ``rfq`` (capacity 404s and errors), ``read`` (errors),
``never`` (POSTs)."""

_ERROR_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass
class RetryPolicy:
    """Budgets and backoff of the retry rules above.

    ``error_retries`` bounds retries after 5xx/429/transport errors, ``capacity_retries`` after
    RFQ 404s; each counts separately within one call. Delays grow as ``base * 2**n`` up to the
    cap (``error_base``/``error_cap``, ``capacity_base``/``capacity_cap``). ``max_rps`` (None:
    unpaced) and ``burst`` pace the attempts (module docstring, "Pacing").

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
    max_rps: float | None = None
    burst: int = 1
    _bucket: _Bucket | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        whole(self.error_retries, "error_retries", minimum=0)
        whole(self.capacity_retries, "capacity_retries", minimum=0)
        for name in ("error_base", "error_cap", "capacity_base", "capacity_cap", "max_delay"):
            number(getattr(self, name), name, minimum=0)
        if not isinstance(self.rng, random.Random):
            raise ValueError("rng: must be a random.Random")
        whole(self.burst, "burst", minimum=1)
        if self.max_rps is not None:
            number(self.max_rps, "max_rps", above=0)
            self._bucket = _Bucket(float(self.max_rps), self.burst)

    def pace(self, now: float) -> float:
        """Reserve the next attempt's token at time ``now`` (seconds, on the caller's clock);
        the seconds to wait before sending it (0 when unpaced or a token is there).

        >>> policy = RetryPolicy(max_rps=2)
        >>> [policy.pace(100.0) for _ in range(3)]  # one token in the bucket, then 0.5 s apart
        [0.0, 0.5, 1.0]
        """
        return 0.0 if self._bucket is None else self._bucket.reserve(now)

    @classmethod
    def no_retries(cls) -> RetryPolicy:
        """A policy that never retries (every attempt is final).

        >>> RetryPolicy.no_retries().delay_after("rfq", 404, retries=0) is None
        True
        """
        return cls(error_retries=0, capacity_retries=0)

    def capacity_delay(self, retry_number: int, u: float) -> float:
        """The wait before capacity retry ``retry_number`` (0-based), given a uniform ``u``.

        Backtests draw ``u`` from their own seeded stream; :meth:`delay_after` from ``rng``.

        >>> RetryPolicy().capacity_delay(0, 0.0), RetryPolicy().capacity_delay(10, 0.999)
        (0.5, 14.9925)
        """
        return _equal_jitter(self.capacity_base, self.capacity_cap, retry_number, u)

    def error_delay(self, retry_number: int, u: float) -> float:
        """The wait before error retry ``retry_number`` (0-based), given a uniform ``u``.

        >>> RetryPolicy().error_delay(1, 0.5)
        0.375
        """
        return _equal_jitter(self.error_base, self.error_cap, retry_number, u)

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
            return self.capacity_delay(capacity_retries, self.rng.random())
        if status != 0 and status not in _ERROR_STATUSES:
            return None
        if retries >= self.error_retries:
            return None
        delay = self.error_delay(retries, self.rng.random())
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, self.max_delay)


def _equal_jitter(base: float, cap: float, retry_number: int, u: float) -> float:
    """Half the capped exponential delay, plus ``u`` times the other half."""
    ceiling = min(cap, base * 2.0 ** min(retry_number, 64))
    return ceiling / 2 + u * ceiling / 2


class _Bucket:
    """A token bucket that hands out reservations: a caller takes a token now, or the next one
    to come, and waits for it. Tokens go negative while attempts queue, so callers on several
    threads are spaced one token apart."""

    def __init__(self, rate_per_s: float, burst: int) -> None:
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.tokens = float(burst)
        self.at: float | None = None
        self.lock = threading.Lock()

    def reserve(self, now: float) -> float:
        with self.lock:
            if self.at is not None and now > self.at:
                self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate_per_s)
            if self.at is None or now > self.at:
                self.at = now
            self.tokens -= 1.0
            return 0.0 if self.tokens >= 0 else -self.tokens / self.rate_per_s
