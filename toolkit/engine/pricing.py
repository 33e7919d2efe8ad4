"""ReservedQuote pricing: exact integer arithmetic, every rounding in the service's favour.

For a route with fee tiers, a destination pool and a destination fill cost ``c`` (token units):

- **Tier fee** ``t``: the tier whose ``[min_amount, max_amount)`` holds the requested amount
  (the last tier also takes ``max_amount``). The requested amount is the input for ExactInput
  and the output for ExactOutput. An amount outside every tier is a ``NoRoute`` (400) error.
- **Utilization premium** ``p``: with ``u`` the pool's utilization *after* this reservation,
  ``u = (reserved + outstanding + a) / balance``, ``p = ceil(P · (u − k) / (1 − k))`` for
  ``u > k`` (0 otherwise), capped at ``P``; ``k`` is ``utilization_kink_bps / 10000`` and ``P``
  is ``premium_max_bps``. ``a`` is the output for ExactOutput and, for ExactInput, the input (an
  upper bound of the output, which depends on ``p``).
- ``fee_bps = t + p``.
- **ExactInput** (input ``I``): ``fee = ceil(I · fee_bps / 10000)``, ``output = I − fee − c``;
  an output ≤ 0 is a ``NoRoute`` error (the amount does not cover the fees).
- **ExactOutput** (output ``O``): ``input = ceil((O + c) · 10000 / (10000 − fee_bps))``, the
  smallest integer input whose ExactInput output is at least ``O``; the output stays ``O``.

>>> exact_input(1_000_000_000, 5, 50_000)
(1000000000, 999450000, 500000)
>>> exact_output(999_450_000, 5, 50_000)
(1000000000, 999450000, 500000)
"""

from __future__ import annotations

__all__ = ["BPS", "exact_input", "exact_output", "premium_bps", "tier_fee_bps"]

BPS = 10_000


def tier_fee_bps(tiers: tuple[tuple[int, int, int], ...], amount: int) -> int | None:
    """Fee of the tier holding ``amount``; tiers are ``(min, max, fee_bps)``, contiguous.

    >>> tier_fee_bps(((10, 100, 5), (100, 1000, 3)), 100), tier_fee_bps(((10, 100, 5),), 100)
    (3, 5)
    >>> tier_fee_bps(((10, 100, 5),), 101) is None
    True
    """
    for low, high, fee in tiers:
        if low <= amount < high:
            return fee
    low, high, fee = tiers[-1]
    return fee if amount == high else None


def premium_bps(used_after: int, balance: int, kink_bps: int, max_bps: int) -> int:
    """Utilization premium for a pool using ``used_after`` of ``balance`` after this quote.

    A pool with no balance left (it lent all it had, repaid elsewhere) is fully used.

    >>> [premium_bps(used, 100, 8000, 20) for used in (80, 90, 200)], premium_bps(1, 0, 8000, 20)
    ([0, 10, 20], 20)
    """
    if balance <= 0:
        return max_bps
    excess = used_after * BPS - kink_bps * balance
    if excess <= 0 or max_bps == 0:
        return 0
    premium = -(-(max_bps * excess) // ((BPS - kink_bps) * balance))
    return premium if premium < max_bps else max_bps


def exact_input(amount: int, fee_bps: int, fill_cost: int) -> tuple[int, int, int]:
    """``(input, output, fee)`` for an input of ``amount``; the output may be ≤ 0.

    >>> exact_input(10_000, 30, 0)
    (10000, 9970, 30)
    """
    fee = -(-amount * fee_bps // BPS)
    return amount, amount - fee - fill_cost, fee


def exact_output(amount: int, fee_bps: int, fill_cost: int) -> tuple[int, int, int]:
    """``(input, output, fee)`` for an output of ``amount`` (requires ``fee_bps < 10000``).

    >>> exact_output(9_970, 30, 0)
    (10000, 9970, 30)
    """
    needed = amount + fill_cost
    input_amount = -(-needed * BPS // (BPS - fee_bps))
    return input_amount, amount, -(-input_amount * fee_bps // BPS)
