"""Loss-system formulas: Erlang-B and the Kaufman-Roberts multi-rate recursion.

A pool of liquidity behaves like a loss system: an RFQ asks for ``b`` units, gets them for
the hold time if they are free, and is refused with a 404 otherwise. Both formulas assume
Poisson arrivals and no retries; they are insensitive to the hold-time distribution, so only
the mean hold matters (``research/anchors.md`` §3).

In the engine the pool's capacity stays put only under the ``instant-free`` rebalancing
baseline (a settlement repays the pool in place, so a fill holds its units until it settles):
there these formulas *are* the model, and ``tests/backtest/test_erlang.py`` holds the
simulation to them. Under a real policy a fill spends the destination's inventory for good,
so the capacity itself moves (:mod:`toolkit.models.inventory`): the formulas then give the
refusals of the holds from the quote to the fill at each inventory level
(:func:`kaufman_roberts_curve`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from numbers import Integral
from typing import TypeGuard, overload

import numpy as np

from toolkit.arguments import number, whole

# Unnormalised occupancy terms grow like a^j / j!; rescaling above this keeps them finite.
_RESCALE_ABOVE = 1e100
_SOLVE_RTOL = 1e-13
# Total load (erlangs) up to which the blocking curve comes from one FFT: P(no unit busy) =
# exp(-load) stays far above the transform's 1e-16 round-off. Heavier loads take the recursion.
_FFT_MAX_LOAD = 20.0


def is_sequence(value: object) -> TypeGuard[Sequence[object]]:
    """A list, tuple or 1-d numpy array (not a string): what the ``Sequence`` arguments take."""
    if isinstance(value, np.ndarray):
        return value.ndim == 1
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def erlang_b(servers: int, load: float) -> float:
    """Blocking probability of ``servers`` servers offered ``load`` erlangs (Erlang's loss formula).

    Uses the stable recursion ``B(0) = 1``, ``B(n) = A·B(n−1) / (n + A·B(n−1))``, which
    neither overflows nor loses precision for large ``servers``.

    Parameters
    ----------
    servers : int
        Servers (here: capacity units), at least 0.
    load : float
        Offered load in erlangs (arrival rate × mean hold), at least 0.

    Returns
    -------
    float
        The probability that an arrival finds every server busy (0 to 1).

    Examples
    --------
    >>> round(erlang_b(15, 8.108), 4)
    0.01
    >>> erlang_b(2, 1.0)
    0.2
    """
    n = whole(servers, "servers", minimum=0)
    a = number(load, "load", minimum=0.0)
    blocking = 1.0
    for k in range(1, n + 1):
        blocking = a * blocking / (k + a * blocking)
    return blocking


def erlang_b_load(servers: int, blocking: float) -> float:
    """Offered load (erlangs) at which ``servers`` servers block with probability ``blocking``.

    Bisection on ``erlang_b(servers, ·)``, which increases strictly from 0 to 1; the answer is
    accurate to a relative 1e-13.

    Parameters
    ----------
    servers : int
        Servers, at least 1.
    blocking : float
        The target blocking probability, strictly between 0 and 1.

    Returns
    -------
    float
        The load in erlangs.

    Examples
    --------
    >>> round(erlang_b_load(10, 0.01), 4)
    4.4612
    """
    n = whole(servers, "servers", minimum=1)
    target = number(blocking, "blocking", above=0.0, below=1.0)
    low, high = 0.0, max(1.0, float(n))
    while erlang_b(n, high) < target:
        low, high = high, 2.0 * high
    while high - low > _SOLVE_RTOL * high:
        mid = 0.5 * (low + high)
        if erlang_b(n, mid) < target:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def erlang_b_servers(load: float, blocking: float) -> int:
    """Smallest number of servers whose Erlang-B blocking at ``load`` is at most ``blocking``.

    Parameters
    ----------
    load : float
        Offered load in erlangs, at least 0.
    blocking : float
        The largest acceptable blocking probability, strictly between 0 and 1.

    Returns
    -------
    int
        The number of servers.

    Examples
    --------
    >>> erlang_b_servers(8.108, 0.0101)
    15
    """
    a = number(load, "load", minimum=0.0)
    target = number(blocking, "blocking", above=0.0, maximum=1.0)
    n, current = 0, 1.0
    while current > target:
        n += 1
        current = a * current / (n + a * current)
    return n


@overload
def kaufman_roberts_occupancy(
    capacity: int, loads: Sequence[Fraction], sizes: Sequence[int]
) -> list[Fraction]: ...
@overload
def kaufman_roberts_occupancy(
    capacity: int, loads: Sequence[float], sizes: Sequence[int]
) -> list[float]: ...
def kaufman_roberts_occupancy(
    capacity: int, loads: Sequence[float] | Sequence[Fraction], sizes: Sequence[int]
) -> list[float] | list[Fraction]:
    """Probability that ``j`` of ``capacity`` units are busy, for ``j = 0..capacity``.

    Class ``k`` offers ``loads[k]`` erlangs of requests for ``sizes[k]`` units each. The
    recursion is ``q(0) = 1``, ``j·q(j) = Σ_k a_k·b_k·q(j − b_k)``, normalised to sum 1.

    Parameters
    ----------
    capacity : int
        Units in the pool, at least 0.
    loads : sequence of float or of fractions.Fraction
        Erlangs offered by each class. Given :class:`fractions.Fraction` loads (ints allowed
        alongside) it computes in exact rationals; otherwise in floats, rescaled so that large
        capacities cannot overflow.
    sizes : sequence of int
        Units each class's request takes (positive), one per load.

    Returns
    -------
    list of float or of fractions.Fraction
        ``capacity + 1`` probabilities summing to 1.

    Examples
    --------
    >>> kaufman_roberts_occupancy(1, [Fraction(1)], [1])
    [Fraction(1, 2), Fraction(1, 2)]
    """
    c, exact_loads, float_loads, b = _check_classes(capacity, loads, sizes)
    if exact_loads is not None:
        q = _occupancy_exact(c, exact_loads, b)
        total = sum(q, Fraction(0))
        return [value / total for value in q]
    return _occupancy_float(c, float_loads, b)


@overload
def kaufman_roberts(
    capacity: int, loads: Sequence[Fraction], sizes: Sequence[int]
) -> list[Fraction]: ...
@overload
def kaufman_roberts(capacity: int, loads: Sequence[float], sizes: Sequence[int]) -> list[float]: ...
def kaufman_roberts(
    capacity: int, loads: Sequence[float] | Sequence[Fraction], sizes: Sequence[int]
) -> list[float] | list[Fraction]:
    """Per-class blocking of a shared pool of ``capacity`` units (Kaufman-Roberts).

    Class ``k`` is blocked when fewer than ``sizes[k]`` units are free:
    ``B_k = Σ_{j > capacity − b_k} q(j)`` (time congestion, which Poisson arrivals see).

    Parameters
    ----------
    capacity, loads, sizes
        As for :func:`kaufman_roberts_occupancy`; Fraction loads give exact rationals.

    Returns
    -------
    list of float or of fractions.Fraction
        Each class's blocking probability; 1 for a class larger than the whole pool.

    Examples
    --------
    >>> kaufman_roberts(6, [Fraction(2), Fraction(1)], [1, 2])
    [Fraction(173, 1532), Fraction(407, 1532)]
    """
    c, exact_loads, float_loads, b = _check_classes(capacity, loads, sizes)
    if exact_loads is not None:
        q = _occupancy_exact(c, exact_loads, b)
        total = sum(q, Fraction(0))
        return [sum(q[max(0, c - size + 1) :], Fraction(0)) / total for size in b]
    occupancy = _occupancy_float(c, float_loads, b)
    return [min(1.0, math.fsum(occupancy[max(0, c - size + 1) :])) for size in b]


def _check_classes(
    capacity: object, loads: object, sizes: object
) -> tuple[int, list[Fraction] | None, list[float], list[int]]:
    c = whole(capacity, "capacity", minimum=0)
    if not is_sequence(loads):
        raise TypeError("loads: must be a sequence of numbers")
    if not is_sequence(sizes):
        raise TypeError("sizes: must be a sequence of integers")
    if len(loads) == 0:
        raise ValueError("loads: must name at least one class")
    if len(loads) != len(sizes):
        raise ValueError(
            f"sizes: must have one entry per load ({len(loads)} loads, {len(sizes)} sizes)"
        )
    b = [whole(size, f"sizes[{k}]", minimum=1) for k, size in enumerate(sizes)]
    float_loads = [number(load, f"loads[{k}]", minimum=0.0) for k, load in enumerate(loads)]
    if not any(isinstance(load, Fraction) for load in loads):
        return c, None, float_loads, b
    exact_loads: list[Fraction] = []
    for load in loads:
        if isinstance(load, Fraction):
            exact_loads.append(load)
        elif isinstance(load, Integral) and not isinstance(load, bool):
            exact_loads.append(Fraction(int(load)))
        else:
            raise TypeError("loads: mix Fractions only with ints, not floats, for an exact result")
    return c, exact_loads, float_loads, b


def _occupancy_exact(capacity: int, loads: list[Fraction], sizes: list[int]) -> list[Fraction]:
    weights = [load * size for load, size in zip(loads, sizes, strict=True)]
    q = [Fraction(1)] + [Fraction(0)] * capacity
    for j in range(1, capacity + 1):
        total = sum(
            (w * q[j - size] for w, size in zip(weights, sizes, strict=True) if size <= j),
            Fraction(0),
        )
        q[j] = total / j
    return q


def _occupancy_float(capacity: int, loads: list[float], sizes: list[int]) -> list[float]:
    """Normalised occupancy in floats.

    The recursion reads at most ``max(sizes)`` earlier terms, so when a term passes
    ``_RESCALE_ABOVE`` only that window is divided down; each term remembers the log of the
    scale it was computed at, and all terms are brought to the final scale at the end.
    """
    classes = [(load * size, size) for load, size in zip(loads, sizes, strict=True) if load > 0]
    reach = max((size for _, size in classes), default=1)
    q = [1.0] + [0.0] * capacity
    log_scale = [0.0] * (capacity + 1)
    current = 0.0
    for j in range(1, capacity + 1):
        value = math.fsum(w * q[j - size] for w, size in classes if size <= j) / j
        q[j] = value
        log_scale[j] = current
        if value > _RESCALE_ABOVE:
            current += math.log(value)
            for i in range(max(0, j - reach + 1), j + 1):
                q[i] /= value
                log_scale[i] = current
    scaled = [value * math.exp(log - current) for value, log in zip(q, log_scale, strict=True)]
    total = math.fsum(scaled)
    return [value / total for value in scaled]


def kaufman_roberts_curve(
    loads: Sequence[float], sizes: Sequence[int], capacity: int
) -> np.ndarray:
    """Kaufman-Roberts blocking of an average request at every capacity ``0..capacity``.

    The recursion's unnormalised terms ``q(j)`` do not depend on the capacity: they are the
    distribution of the busy units of a pool that never refuses, a compound Poisson sum (the
    recursion is Panjer's). So one transform of that distribution gives the blocking at every
    capacity: ``B(c) = 1 − Σ_k w_k·P(R ≤ c − b_k) / P(R ≤ c)`` with ``w_k`` each class's share
    of the requests (its load's share: classes that hold alike). Loads up to 20 erlangs in all
    take one FFT; heavier ones walk the recursion (exact, slower).

    Parameters
    ----------
    loads : sequence of float
        Erlangs offered by each class (at least one positive).
    sizes : sequence of int
        Units each class asks for (positive), one per load.
    capacity : int
        The largest capacity, in units, at least 0.

    Returns
    -------
    numpy.ndarray
        ``capacity + 1`` blocking probabilities (index = capacity in units).

    Examples
    --------
    >>> curve = kaufman_roberts_curve([2.0, 1.0], [1, 2], 6)
    >>> round(float(curve[6]), 6) == round((2 * 173 / 1532 + 407 / 1532) / 3, 6)
    True
    """
    c, _, a, b = _check_classes(capacity, loads, sizes)
    total = math.fsum(a)
    if total <= 0:
        raise ValueError("loads: at least one class must offer a positive load")
    weights = np.array(a) / total
    # The recursion's terms are normalised at c: the ratios below are unaffected.
    heavy = total > _FFT_MAX_LOAD
    cdf = np.cumsum(_occupancy_float(c, a, b)) if heavy else _busy_cdf_fft(a, b, c)
    fits = np.zeros(c + 1)
    for w, size in zip(weights, b, strict=True):
        if size <= c:
            fits[size:] += w * cdf[: c + 1 - size]
    with np.errstate(divide="ignore", invalid="ignore"):
        blocking = np.where(cdf > 0, 1.0 - fits / cdf, 1.0)
    return np.clip(blocking, 0.0, 1.0)


def _busy_cdf_fft(loads: list[float], sizes: list[int], capacity: int) -> np.ndarray:
    """``P(R ≤ j)`` for ``j = 0..capacity``, ``R`` the compound Poisson busy units, by FFT."""
    total = math.fsum(loads)
    mean = math.fsum(x * s for x, s in zip(loads, sizes, strict=True))
    spread = math.sqrt(math.fsum(x * s * s for x, s in zip(loads, sizes, strict=True)))
    # Room for the capacity plus the sum's tail, so mass past the end cannot wrap onto it.
    span = capacity + max(sizes) + int(mean + 12 * spread) + 64
    n = 1 << (2 * span - 1).bit_length()
    jumps = np.zeros(n)
    for x, s in zip(loads, sizes, strict=True):
        jumps[s] += x
    pmf = np.fft.irfft(np.exp(np.fft.rfft(jumps) - total), n)
    return np.asarray(np.cumsum(np.clip(pmf[: capacity + 1], 0.0, None)))
