"""How a simulated client retries an RFQ after a 404 (no capacity).

A 404 from the RFQ endpoint is a capacity answer: reservations lapse within 15 s, so clients
retry after a backoff (the spec's error table). Retried requests are no longer Poisson, which is
why a replay with retries departs from Erlang-B (research/anchors.md §3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["RetryPolicy"]


def _number(value: object, name: str, *, low: float, open_low: bool = False) -> float:
    bound = f"> {low:g}" if open_low else f">= {low:g}"
    problem = f"RetryPolicy.{name}: must be a finite number {bound}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(problem)
    number = float(value)
    if not math.isfinite(number) or number < low or (open_low and number == low):
        raise ValueError(problem)
    return number


@dataclass(frozen=True)
class RetryPolicy:
    """Retry a 404 up to ``max_retries`` times with capped exponential backoff and jitter.

    Retry ``k`` (1-based) waits ``min(base_delay * factor**(k-1), max_delay)`` seconds,
    multiplied by a uniform factor in ``[1 - jitter, 1 + jitter]``.

    >>> policy = RetryPolicy(max_retries=3, base_delay=2.0, factor=2.0, jitter=0.0)
    >>> [policy.delay(k, 0.5) for k in (1, 2, 3)]
    [2.0, 4.0, 8.0]
    >>> RetryPolicy(jitter=0.5).delay(1, 0.0)
    1.0
    """

    max_retries: int = 3
    base_delay: float = 2.0
    factor: float = 2.0
    jitter: float = 0.1
    max_delay: float = 60.0

    def __post_init__(self) -> None:
        retries = self.max_retries
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(
                f"RetryPolicy.max_retries: must be a non-negative integer, got {retries!r}"
            )
        _number(self.base_delay, "base_delay", low=0.0, open_low=True)
        _number(self.factor, "factor", low=1.0)
        jitter = _number(self.jitter, "jitter", low=0.0)
        if jitter >= 1.0:
            raise ValueError(f"RetryPolicy.jitter: must be below 1, got {self.jitter!r}")
        _number(self.max_delay, "max_delay", low=0.0, open_low=True)

    def delay(self, retry: int, u: float) -> float:
        """Seconds to wait before retry ``retry`` (1-based), given a uniform draw ``u`` in [0, 1).

        >>> RetryPolicy(base_delay=1.0, factor=3.0, jitter=0.0, max_delay=5.0).delay(3, 0.2)
        5.0
        """
        if isinstance(retry, bool) or not isinstance(retry, int) or retry < 1:
            raise ValueError(f"retry: must be a positive integer, got {retry!r}")
        if not 0.0 <= u < 1.0:
            raise ValueError(f"u: must be in [0, 1), got {u!r}")
        try:
            backoff = min(self.base_delay * self.factor ** (retry - 1), self.max_delay)
        except OverflowError:
            backoff = self.max_delay
        return backoff * (1.0 + self.jitter * (2.0 * u - 1.0))
