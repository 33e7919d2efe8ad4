"""The law of a chain's inventory as it walks: a drifting random walk kept at or above 0.

A chain's inventory of a token moves by what orders deliver there (out) and what they pay
there (in). Over time the cumulative *drain* ``D(t)`` (out less in, from ``D(0) = 0``) is a
compound Poisson sum; over hours it is close to a Brownian motion with drift ``ν`` (the drain
per second: ``−net_per_h / 3600`` of :func:`toolkit.models.netflow.net_flow`) and variance
rate ``s²`` (its ``net_variance_per_h / 3600``). A chain refuses what it cannot deliver, so
refusals stop the drain and the inventory ``X(t) = x₀ − D(t)`` is *reflected* at 0:

- :func:`reflected_cdf`: the reflected Brownian motion's transition law (Harrison, *Brownian
  Motion and Stochastic Flow Systems*, 1.8): ``P(X_t ≤ y) = Φ((y − x₀ + νt)/τ) −
  exp(−2νy/s²)·Φ(−(y + x₀ − νt)/τ)`` with ``τ = s√t``;
- :func:`folded_cdf`: the same walk kept below a ceiling as well (a chain cannot gather more of
  a token than the others lose), its law folded back at the ceiling by images;
- :func:`normal_sf`: the normal tail both are built on.

The normal tails come from Numerical Recipes' ``erfcc`` (Press et al., *Numerical Recipes*,
6.2: a Chebyshev fit of ``erfc`` with fractional error below 1.2e-7 everywhere), written so
that ``exp(x²)·erfc(x)`` never underflows; the tests hold it to :func:`math.erfc`, and the
laws to the reflection principle, the stationary exponential law and seeded walks.

Amounts are in any one unit (USD in :mod:`toolkit.models.placement`); every function takes
scalars or numpy arrays and broadcasts.

>>> round(float(reflected_cdf(1.0, 0.0, 0.0, 1.0, 1.0)), 4)  # |W_1| ≤ 1: 2·Φ(1) − 1
0.6827
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["folded_cdf", "normal_sf", "reflected_cdf"]

Floats = npt.NDArray[np.float64]
ArrayLike = float | npt.ArrayLike

_SQRT2 = math.sqrt(2.0)
_SQRT2PI = math.sqrt(2.0 * math.pi)
# Numerical Recipes' erfcc coefficients, highest order last.
_ERFCC = (
    -1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
    0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277,
)  # fmt: skip


def _erfcx_nonneg(z: Floats) -> Floats:
    """``exp(z²)·erfc(z)`` for ``z ≥ 0`` (Numerical Recipes' erfcc without its ``exp(−z²)``)."""
    t = 1.0 / (1.0 + 0.5 * z)
    poly = np.full_like(z, _ERFCC[-1])
    for c in reversed(_ERFCC[:-1]):
        poly = c + t * poly
    return np.asarray(t * np.exp(poly), dtype=np.float64)


def _pdf(x: Floats) -> Floats:
    return np.asarray(np.exp(-0.5 * x * x) / _SQRT2PI, dtype=np.float64)


def _mills(x: Floats) -> Floats:
    """Mills' ratio ``Φ(−x)/φ(x)`` for ``x ≥ 0`` (finite and positive however large ``x``)."""
    return 0.5 * _SQRT2PI * _erfcx_nonneg(x / _SQRT2)


def normal_sf(x: ArrayLike) -> Floats:
    """The standard normal's upper tail ``Φ(−x) = P(Z > x)``.

    Parameters
    ----------
    x : float or array_like
        Where to evaluate.

    Returns
    -------
    numpy.ndarray
        ``P(Z > x)``, with fractional error below 1.2e-7 (Numerical Recipes' ``erfcc``).

    Examples
    --------
    >>> [round(float(v), 6) for v in normal_sf([0.0, 1.959964, -1.0])]
    [0.5, 0.025, 0.841345]
    """
    v = np.asarray(x, dtype=np.float64)
    upper = 0.5 * np.exp(-0.5 * v * v) * _erfcx_nonneg(np.abs(v) / _SQRT2)
    return np.asarray(np.where(v >= 0, upper, 1.0 - upper), dtype=np.float64)


def reflected_cdf(
    level: ArrayLike,
    start: ArrayLike,
    drain_per_s: ArrayLike,
    variance_per_s: ArrayLike,
    time_s: ArrayLike,
) -> Floats:
    """``P(X_t ≤ level)`` for the inventory ``X = start − D`` reflected at 0.

    Parameters
    ----------
    level : float or array_like
        ``y ≥ 0``.
    start : float or array_like
        ``x₀ ≥ 0``, the inventory at time 0.
    drain_per_s, variance_per_s : float or array_like
        The drain's drift ``ν`` per second (positive: towards 0) and its variance rate ``s²``.
    time_s : float or array_like
        ``t``, seconds.

    Returns
    -------
    numpy.ndarray
        The probabilities (at ``t = 0`` or ``s = 0``, the straight path's step).

    Examples
    --------
    >>> round(float(reflected_cdf(1.0, 0.0, 0.0, 1.0, 1.0)), 4)  # |W_1| ≤ 1
    0.6827
    >>> round(float(reflected_cdf(1.0, 0.0, 0.5, 1.0, 1e9)), 4)  # stationary: Exp(rate 2ν/s²)
    0.6321
    """
    y, x0, nu, var, t = np.broadcast_arrays(
        *(
            np.asarray(v, dtype=np.float64)
            for v in (level, start, drain_per_s, variance_per_s, time_s)
        )
    )
    y, x0 = np.maximum(y, 0.0), np.maximum(x0, 0.0)
    tau = np.sqrt(var * t)
    safe = np.where(tau > 0, tau, 1.0)
    mu = -nu  # the inventory's drift
    x1 = (y - x0 - mu * t) / safe
    x2 = (y + x0 + mu * t) / safe
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = np.where(var > 0, 2.0 * mu / np.where(var > 0, var, 1.0), 0.0)
        # mu > 0: exp(k·y)·Φ(−x2) = φ((y + x0 − μt)/τ)·exp(−k·x0)·R(x2), finite (x2 > 0);
        # mu ≤ 0: the exponent is not positive, computed as it stands.
        rising = _pdf((y + x0 - mu * t) / safe) * np.exp(-k * x0) * _mills(np.maximum(x2, 0.0))
        falling = np.exp(np.minimum(k * y, 0.0)) * normal_sf(x2)
    image = np.where(mu > 0, rising, falling)
    random = np.clip((1.0 - normal_sf(x1)) - image, 0.0, 1.0)
    straight = (y >= np.maximum(x0 + mu * t, 0.0)).astype(np.float64)
    return np.asarray(np.where(tau > 0, random, straight), dtype=np.float64)


#: Images folded back exactly; the mass past them is spread evenly (the walk has folded often).
_IMAGES = 4


def folded_cdf(
    level: ArrayLike,
    start: ArrayLike,
    drain_per_s: ArrayLike,
    variance_per_s: ArrayLike,
    time_s: ArrayLike,
    ceiling: ArrayLike,
) -> Floats:
    """``P(X_t ≤ level)`` for the reflected inventory kept within ``[0, ceiling]`` as well.

    The reflected law (:func:`reflected_cdf`) on ``[0, ∞)`` folded onto ``[0, L]`` by images:
    ``[2kL, (2k + 1)L]`` maps to ``x − 2kL`` and ``[(2k + 1)L, (2k + 2)L]`` to ``(2k + 2)L −
    x`` for the first four ``k``; the mass past ``8L`` (a walk that has crossed the range many
    times) is spread evenly. Exact for a drift-free walk while that mass is negligible.

    Parameters
    ----------
    level, start, drain_per_s, variance_per_s, time_s : float or array_like
        As for :func:`reflected_cdf`.
    ceiling : float or array_like
        ``L > 0``.

    Returns
    -------
    numpy.ndarray
        The probabilities (1 at and above the ceiling).

    Examples
    --------
    >>> round(float(folded_cdf(0.5, 0.5, 0.0, 1.0, 1e4, 1.0)), 3)  # long after: uniform
    0.5
    """
    y = np.asarray(level, dtype=np.float64)
    top = np.asarray(ceiling, dtype=np.float64)
    if np.any(top <= 0):
        raise ValueError("ceiling: must be > 0")
    y = np.minimum(np.maximum(y, 0.0), top)

    def law(at: Floats) -> Floats:
        return reflected_cdf(at, start, drain_per_s, variance_per_s, time_s)

    total = np.zeros(np.broadcast_shapes(y.shape, top.shape, np.shape(law(top))))
    for k in range(_IMAGES):
        low, high = 2 * k * top, (2 * k + 2) * top
        total = total + (law(low + y) - law(low)) + (law(high) - law(high - y))
    total = total + (1.0 - law(2 * _IMAGES * top)) * y / top
    return np.asarray(np.clip(total, 0.0, 1.0), dtype=np.float64)
