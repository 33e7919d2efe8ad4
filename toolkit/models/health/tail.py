"""Value at risk and expected shortfall of a sample of losses: the one definition.

Acerbi and Tasche ("On the coherence of expected shortfall", J. Banking & Finance 26, 2002,
definition 2.6 and proposition 4.1): of ``n`` equally likely scenarios, the tail at confidence
``a`` is the worst ``k = n·(1 − a)`` of them, counting the scenario on the boundary with the
fractional weight ``k − ⌊k⌋``. Expected shortfall is the mean loss over that tail; value at
risk is the loss of the boundary scenario (the lower ``a``-quantile ``inf{ℓ : F(ℓ) ≥ a}``).
So ``ES ≥ VaR``, ES grows with ``a``, and when fewer than ``k`` scenarios lose anything ES is
still the mean of the worst ``k`` (not of every scenario), whatever VaR is.
"""

from __future__ import annotations

import math

import numpy as np

from toolkit.arguments import ArgumentError

__all__ = ["tail_risk"]

# n·(1 − a) computed in floats lands a hair off an integer (100 · (1 − 0.95) = 5.000000000000004);
# snapping within this tolerance keeps an exact tail of 5 scenarios exactly 5.
_SNAP = 1e-9


def tail_risk(losses: np.ndarray, confidence: float) -> tuple[float, float]:
    """``(value_at_risk, expected_shortfall)`` of equally likely ``losses`` at ``confidence``.

    >>> import numpy as np
    >>> tail_risk(np.array([0.0] * 97 + [10.0, 20.0, 30.0]), 0.95)  # worst 5: 0,0,10,20,30
    (0.0, 12.0)
    >>> tail_risk(np.arange(10.0), 0.95)  # k = 0.5: half of the worst scenario
    (9.0, 9.0)
    """
    values = np.asarray(losses, dtype=np.float64).ravel()
    if values.size == 0:
        raise ArgumentError("losses", "at least one scenario", "none")
    if not np.isfinite(values).all():
        raise ArgumentError("losses", "finite numbers", "a NaN or infinity")
    if not 0 < confidence < 1:
        raise ArgumentError("confidence", "a number in (0, 1)", confidence)
    n = values.size
    k = n * (1.0 - confidence)
    if abs(k - round(k)) < _SNAP * max(1.0, k):
        k = float(round(k))
    whole_tail = min(math.floor(k), n - 1)
    # only the worst ⌊k⌋ + 1 values matter: partition instead of a full sort
    boundary = n - whole_tail - 1
    ordered = np.partition(values, boundary)
    var = float(ordered[boundary])
    tail = ordered[boundary + 1 :]
    es = (float(tail.sum()) + (k - whole_tail) * var) / k
    return var, max(es, var)  # equal in exact arithmetic; the sum can round a hair below
