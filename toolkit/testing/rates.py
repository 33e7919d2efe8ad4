"""Statistical assertions: an observed rate against the rate a model expects."""

from __future__ import annotations

import math
from numbers import Integral

__all__ = ["assert_rate_within"]


def _count(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name}: must be an integer, got {type(value).__name__}")
    if int(value) < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {int(value)}")
    return int(value)


def _real(value: object, name: str, low: float, high: float | None, open_low: bool) -> float:
    ok = not isinstance(value, bool) and isinstance(value, int | float)
    number = float(value) if ok else math.nan  # type: ignore[arg-type]
    inside = math.isfinite(number) and (number > low if open_low else number >= low)
    if high is not None:
        inside = inside and number <= high
    if not inside:
        bound = f"> {low:g}" if open_low else f">= {low:g}"
        rule = f"a number {bound}" if high is None else f"a number from {low:g} to {high:g}"
        raise ValueError(f"{name}: must be {rule}, got {value!r}")
    return number


def assert_rate_within(
    observed_hits: int,
    trials: int,
    expected_rate: float,
    *,
    sigmas: float = 3.0,
    std_error: float | None = None,
) -> float:
    """Assert that ``observed_hits`` of ``trials`` is within ``sigmas`` standard errors of
    ``expected_rate``; return the z-score.

    The standard error is the binomial one at the expected rate,
    ``sqrt(p·(1 − p) / trials)``, and ``z = (hits / trials − p) / se``. At ``p = 0`` or ``p = 1``
    the standard error is zero, so only the exact rate passes. With ``sigmas=3`` a correct
    model fails about 0.3 % of the time: seed the simulation that produced the hits so a test
    is reproducible. The failure message gives both rates, the z-score and the bound.

    The binomial error assumes independent trials. Successive RFQs at a busy pool are not (a
    full pool refuses several arrivals in a row), so the binomial error understates the
    uncertainty; pass ``std_error`` estimated another way, e.g. from batch means (the spread
    of the rate over time batches of the run, divided by the square root of their number).

    >>> round(assert_rate_within(52, 400, 0.12), 3)   # 13 % observed, Erlang-B says 12 %
    0.615
    >>> round(assert_rate_within(52, 400, 0.12, std_error=0.02), 3)
    0.5
    """
    trials_n = _count(trials, "trials", 1)
    hits = _count(observed_hits, "observed_hits", 0)
    if hits > trials_n:
        raise ValueError(f"observed_hits: must be <= trials ({trials_n}), got {hits}")
    p = _real(expected_rate, "expected_rate", 0.0, 1.0, open_low=False)
    bound = _real(sigmas, "sigmas", 0.0, None, open_low=True)
    observed = hits / trials_n
    if std_error is None:
        se = math.sqrt(p * (1.0 - p) / trials_n)
    else:
        se = _real(std_error, "std_error", 0.0, None, open_low=False)
    if se == 0.0:
        z = 0.0 if observed == p else math.copysign(math.inf, observed - p)
    else:
        z = (observed - p) / se
    if abs(z) > bound:
        raise AssertionError(
            f"observed rate {observed:.6g} ({hits}/{trials_n}) is {z:+.2f} standard errors from "
            f"the expected {p:.6g} (z = {z:+.3f}, allowed |z| <= {bound:g}; "
            f"standard error {se:.4g})"
        )
    return z
