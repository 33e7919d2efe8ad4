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

Delays use "equal jitter": half the capped exponential delay, plus a uniform draw over the other
half, from an injectable ``random.Random`` (seed it in tests). A ``Retry-After`` header on a
429/503 is honoured up to ``max_delay``.
"""

from __future__ import annotations

import random
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
        whole(self.error_retries, "error_retries", minimum=0)
        whole(self.capacity_retries, "capacity_retries", minimum=0)
        for name in ("error_base", "error_cap", "capacity_base", "capacity_cap", "max_delay"):
            number(getattr(self, name), name, minimum=0)
        if not isinstance(self.rng, random.Random):
            raise ValueError("rng: must be a random.Random")

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
