"""Pool sizing: from amounts and RFQ rates to offered load, the rate a pool carries, and the
balance a rate needs.

An RFQ for amount ``x`` reserves ``x`` from the pool for the mean hold time. Amounts are
measured in units of ``gcd(amount classes)`` so the pool is a Kaufman-Roberts loss system of
``balance // unit`` units, class ``k`` asking for ``amount_k / unit`` of them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from toolkit.arguments import number, whole
from toolkit.models.loss import is_sequence, kaufman_roberts

Mode = Literal["replace", "add"]
Criterion = Literal["worst", "average", "volume"]

_CRITERIA = ("worst", "average", "volume")
_MIX_TOLERANCE = 1e-9
_RATE_RTOL = 1e-10


def mean_hold(
    p_convert: float,
    quote_s: float = 15.0,
    order_s: float = 60.0,
    mode: Mode = "replace",
    *,
    convert_delay_s: float | None = None,
) -> float:
    """Mean time an RFQ holds pool liquidity, in seconds.

    A quote reserves its amount for ``quote_s``; with probability ``p_convert`` the
    caller posts it to the transaction endpoint, and the reservation is then held for
    ``order_s`` counted from that call. Blocking depends on the hold only through its
    mean (insensitivity), so this number is the whole hold model:

    - ``mode="replace"``: ``(1 − p)·quote_s + p·order_s``; conversion at once.
    - ``mode="add"``: ``quote_s + p·order_s``; conversion at the end of the
      quote window.

    Our engine (and the service, per the interface's state table) converts at a delay ``d``
    after the quote and holds the order reservation ``order_s`` from the conversion, so
    the exact mean is ``(1 − p)·quote_s + p·(d + order_s)``: pass
    ``convert_delay_s=d`` (with ``mode="replace"``). ``d = 0`` is ``replace`` and
    ``d = quote_s`` is ``add``, so the two modes bound the truth.

    Parameters
    ----------
    p_convert : float
        Share of quotes posted as orders (0 to 1).
    quote_s, order_s : float
        The quote reservation (15 s) and the order reservation (60 s).
    mode : {"replace", "add"}
        When a converted quote's order hold starts (above).
    convert_delay_s : float, optional
        Seconds from the quote to its conversion: the exact mean instead of a bound.

    Returns
    -------
    float
        The mean hold in seconds.

    Examples
    --------
    >>> mean_hold(0.2)
    24.0
    >>> mean_hold(0.2, mode="add")
    27.0
    >>> mean_hold(0.2, convert_delay_s=5.0)
    25.0
    """
    p = number(p_convert, "p_convert", minimum=0.0, maximum=1.0)
    quote = number(quote_s, "quote_s", above=0.0)
    order = number(order_s, "order_s", above=0.0)
    if mode not in ("replace", "add"):
        raise ValueError(f"mode: must be 'replace' or 'add', got {mode!r}")
    if convert_delay_s is None:
        delay = 0.0 if mode == "replace" else quote
    else:
        if mode == "add":
            raise ValueError(
                "convert_delay_s: only applies to mode='replace'; mode='add' already means "
                "conversion at the end of the quote window"
            )
        delay = number(convert_delay_s, "convert_delay_s", minimum=0.0, maximum=quote)
    return (1.0 - p) * quote + p * (delay + order)


def offered_load(rate_per_s: float, hold_s: float) -> float:
    """Offered load in erlangs: arrival rate (per second) times mean hold (seconds).

    Parameters
    ----------
    rate_per_s : float
        Arrivals per second, at least 0.
    hold_s : float
        Mean hold in seconds (:func:`mean_hold`), at least 0.

    Returns
    -------
    float
        Erlangs.

    Examples
    --------
    >>> offered_load(0.5, 24.0)
    12.0
    """
    rate = number(rate_per_s, "rate_per_s", minimum=0.0)
    hold = number(hold_s, "hold_s", minimum=0.0)
    return rate * hold


def to_units(amounts: Sequence[int], unit: int | None = None) -> tuple[int, list[int]]:
    """Express amount classes as whole multiples of a capacity unit.

    The unit defaults to the gcd of the amounts, the largest unit in which every class is a
    whole number of units. A given ``unit`` must divide every amount: nothing is rounded.

    Parameters
    ----------
    amounts : sequence of int
        The request amounts (smallest units), each positive.
    unit : int, optional
        The capacity unit; the gcd of ``amounts`` when omitted.

    Returns
    -------
    tuple of (int, list of int)
        ``(unit, sizes)``: the unit and each amount in units.

    Examples
    --------
    >>> to_units([500_000, 2_000_000, 10_000_000])
    (500000, [1, 4, 20])
    """
    if not is_sequence(amounts) or len(amounts) == 0:
        raise ValueError("amounts: must be a non-empty sequence of positive integers")
    values = [whole(amount, f"amounts[{k}]", minimum=1) for k, amount in enumerate(amounts)]
    if unit is None:
        size = math.gcd(*values)
    else:
        size = whole(unit, "unit", minimum=1)
        for k, value in enumerate(values):
            if value % size:
                raise ValueError(f"amounts[{k}]: {value} is not a multiple of unit {size}")
    return size, [value // size for value in values]


def max_rfq_rate_per_s(
    pool_balance: int,
    amount_classes: Sequence[int],
    class_mix: Sequence[float],
    hold_s: float | Sequence[float],
    target_blocking: float,
    *,
    criterion: Criterion = "worst",
    unit: int | None = None,
) -> float:
    """Largest total RFQ rate (per second) a pool carries with blocking at most the target.

    The total rate splits over ``amount_classes`` by ``class_mix``; each class holds its amount
    for ``hold_s``. Blocking comes from Kaufman-Roberts on ``pool_balance // unit`` units (a
    remainder below one unit can serve no request). Found by bisection (relative 1e-10) on the
    rate. Like the formula, it assumes Poisson RFQs that are not retried: clients retrying after
    a 404 add load it does not see.

    Parameters
    ----------
    pool_balance : int
        The pool's balance (smallest units).
    amount_classes : sequence of int
        Request amounts (smallest units).
    class_mix : sequence of float
        Each class's share of the requests (summing to 1).
    hold_s : float or sequence of float
        Mean hold in seconds, one for all classes or one per class (:func:`mean_hold`).
    target_blocking : float
        The largest acceptable blocking (0 to 1).
    criterion : {"worst", "average", "volume"}
        What must stay under the target: ``"worst"`` (default) the largest blocking of any class
        with a positive share (large amounts are blocked first, so this protects the biggest
        RFQs); ``"average"`` the share of RFQs refused, ``Σ mix_k·B_k``; ``"volume"`` the share
        of requested amount refused, ``Σ mix_k·x_k·B_k / Σ mix_k·x_k``.
    unit : int, optional
        The capacity unit (:func:`to_units`).

    Returns
    -------
    float
        RFQs per second; 0.0 when even a vanishing rate misses the target (a class larger than
        the pool).

    Examples
    --------
    >>> round(max_rfq_rate_per_s(15, [1], [1.0], 1.0, 0.01), 3)
    8.108
    """
    func = "max_rfq_rate_per_s"
    balance = whole(pool_balance, "pool_balance", minimum=0)
    unit_size, sizes, mix, holds = _check_pool_inputs(amount_classes, class_mix, hold_s, unit)
    target = number(target_blocking, "target_blocking", above=0.0, maximum=1.0)
    _check_criterion(criterion)
    capacity = balance // unit_size

    def blocking_at(rate: float) -> float:
        loads = [rate * share * hold for share, hold in zip(mix, holds, strict=True)]
        return _score(kaufman_roberts(capacity, loads, sizes), mix, sizes, criterion)

    if _score(_blocking_at_zero(capacity, sizes), mix, sizes, criterion) > target:
        return 0.0
    mean_hold_s = sum(share * hold for share, hold in zip(mix, holds, strict=True))
    low, high = 0.0, max(1.0, capacity) / max(mean_hold_s, 1e-300)
    while blocking_at(high) <= target:
        low, high = high, 2.0 * high
        if math.isinf(high):
            raise ValueError(f"{func}: no finite rate reaches target_blocking {target}")
    while high - low > _RATE_RTOL * high:
        mid = 0.5 * (low + high)
        if blocking_at(mid) <= target:
            low = mid
        else:
            high = mid
    return low


def pool_size_for(
    rate_per_s: float,
    amount_classes: Sequence[int],
    class_mix: Sequence[float],
    hold_s: float | Sequence[float],
    target_blocking: float,
    *,
    criterion: Criterion = "worst",
    unit: int | None = None,
    max_units: int = 10_000_000,
) -> int:
    """Smallest pool balance (a multiple of the unit) that keeps blocking at most the target.

    Same traffic model and ``criterion`` as :func:`max_rfq_rate_per_s`. The occupancy recursion does
    not depend on the capacity, so capacities are tried upward in one pass: the answer is the
    true smallest, even where Kaufman-Roberts blocking is not monotone in the capacity.

    Parameters
    ----------
    rate_per_s : float
        Total RFQs per second.
    amount_classes, class_mix, hold_s, target_blocking, criterion, unit
        As for :func:`max_rfq_rate_per_s`.
    max_units : int
        The most capacity units tried.

    Returns
    -------
    int
        The balance in smallest units. ``ValueError`` when more than ``max_units`` units would
        be needed.

    Examples
    --------
    >>> pool_size_for(8.108, [1_000_000], [1.0], 1.0, 0.0101)
    15000000
    """
    rate = number(rate_per_s, "rate_per_s", minimum=0.0)
    unit_size, sizes, mix, holds = _check_pool_inputs(amount_classes, class_mix, hold_s, unit)
    target = number(target_blocking, "target_blocking", above=0.0, maximum=1.0)
    _check_criterion(criterion)
    limit = whole(max_units, "max_units", minimum=1)
    loads = [rate * share * hold for share, hold in zip(mix, holds, strict=True)]
    capacity = _smallest_capacity(loads, sizes, mix, criterion, target, limit)
    return capacity * unit_size


def _check_pool_inputs(
    amount_classes: Sequence[int],
    class_mix: Sequence[float],
    hold_s: float | Sequence[float],
    unit: int | None,
) -> tuple[int, list[int], list[float], list[float]]:
    unit_size, sizes = to_units(amount_classes, unit)
    if not is_sequence(class_mix):
        raise TypeError("class_mix: must be a sequence of shares")
    if len(class_mix) != len(sizes):
        raise ValueError(
            f"class_mix: must have one share per amount class "
            f"({len(sizes)} classes, {len(class_mix)} shares)"
        )
    mix = [
        number(share, f"class_mix[{k}]", minimum=0.0, maximum=1.0)
        for k, share in enumerate(class_mix)
    ]
    if abs(math.fsum(mix) - 1.0) > _MIX_TOLERANCE:
        raise ValueError(f"class_mix: shares must sum to 1, got {math.fsum(mix)}")
    if is_sequence(hold_s):
        if len(hold_s) != len(sizes):
            raise ValueError(
                f"hold_s: must be one mean or one per amount class "
                f"({len(sizes)} classes, {len(hold_s)} holds)"
            )
        holds = [number(h, f"hold_s[{k}]", above=0.0) for k, h in enumerate(hold_s)]
    else:
        holds = [number(hold_s, "hold_s", above=0.0)] * len(sizes)
    return unit_size, sizes, mix, holds


def _check_criterion(criterion: str) -> None:
    if criterion not in _CRITERIA:
        raise ValueError(f"criterion: must be one of {', '.join(_CRITERIA)}, got {criterion!r}")


def _score(blocking: Sequence[float], mix: list[float], sizes: list[int], criterion: str) -> float:
    if criterion == "worst":
        return max((b for b, share in zip(blocking, mix, strict=True) if share > 0), default=0.0)
    if criterion == "average":
        return math.fsum(b * share for b, share in zip(blocking, mix, strict=True))
    volume = [share * size for share, size in zip(mix, sizes, strict=True)]
    return math.fsum(b * v for b, v in zip(blocking, volume, strict=True)) / math.fsum(volume)


def _blocking_at_zero(capacity: int, sizes: list[int]) -> list[float]:
    # With no traffic the pool is empty: only classes larger than the pool are refused.
    return [1.0 if size > capacity else 0.0 for size in sizes]


def _smallest_capacity(
    loads: list[float],
    sizes: list[int],
    mix: list[float],
    criterion: str,
    target: float,
    limit: int,
) -> int:
    """Walk capacities 0, 1, 2, ... extending one unnormalised occupancy sequence.

    Blocking at capacity ``c`` needs only the running total and the last ``b_k`` terms, so
    every capacity costs ``O(Σ b_k)``. Terms are rescaled in place (with the total) when they
    grow large; the recursion never looks further back than ``max(sizes)`` terms.
    """
    classes = [(load * size, size) for load, size in zip(loads, sizes, strict=True) if load > 0]
    reach = max(sizes)
    q: list[float] = [1.0]
    total = 1.0
    for capacity in range(limit + 1):
        if capacity > 0:
            value = math.fsum(w * q[capacity - s] for w, s in classes if s <= capacity) / capacity
            q.append(value)
            total += value
            if value > 1e100:
                start = max(0, capacity - reach + 1)
                q[start:] = [term / value for term in q[start:]]
                total /= value
        blocking = [min(1.0, math.fsum(q[max(0, capacity - size + 1) :]) / total) for size in sizes]
        if _score(blocking, mix, sizes, criterion) <= target:
            return capacity
    raise ValueError(f"max_units: no pool of up to {limit} units reaches the target blocking")
