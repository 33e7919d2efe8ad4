"""The float model of a route search: paths as chains of :class:`~toolkit.amm.curve.Curve`,
the allocation that equalises their marginal outputs, and the joint climb where paths share a
pool.

A path is a list of curves (one per pool, in the direction the path crosses it) and a key per
pool crossing: two crossings with the same key are the same pool in the same direction, which
the paths then share. :class:`PathModel` answers, for a set of paths and an input amount, how
much each path takes at a marginal output ``λ`` (:meth:`~PathModel.take`), the allocation whose
marginal outputs are equal (:meth:`~PathModel.allocate`), and, where paths share a pool, the
allocation that is best with the paths run one after the other (:meth:`~PathModel.improve`).
:mod:`toolkit.amm.routing` builds the curves from pools and executes the result exactly.

>>> from toolkit.amm.curve import Curve
>>> from toolkit.amm.v2 import Pair
>>> deep = Curve.of_pair(Pair(10**24, 10**24), zero_for_one=True)
>>> thin = Curve.of_pair(Pair(10**23, 10**23), zero_for_one=True)
>>> model = PathModel([[deep], [thin]], [["deep"], ["thin"]], 1.1e22)
>>> {i: round(a / 1e21, 6) for i, a in model.allocate([0, 1], None).items()}  # 10 to 1
{0: 10.0, 1: 1.0}
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable
from dataclasses import dataclass

from toolkit.amm.curve import Curve
from toolkit.amm.errors import AmmError

__all__ = ["PathModel", "Run", "along", "moved", "path_capacity"]


def along(curves: list[Curve], amount_in: float) -> tuple[float, float, float]:
    """``(output, marginal output, its slope)`` down a path of curves (the chain rule)."""
    out, marginal, slope = amount_in, 1.0, 0.0
    for curve in curves:
        out, hop_marginal, hop_slope = curve.at(out)
        slope = hop_slope * marginal * marginal + hop_marginal * slope
        marginal *= hop_marginal
    return out, marginal, slope


def path_capacity(curves: list[Curve]) -> float:
    """The largest input down a path that no pool on it runs dry for (from the last hop back)."""
    limit = math.inf  # the most the next hop can take, in its input token
    for curve in reversed(curves):
        most = curve.capacity
        if limit < math.inf:
            most = min(most, curve.needed(limit))
        limit = most
    return limit


class PathModel:
    """The float model of a set of paths.

    :meth:`allocate` equalises the paths' marginal outputs as if each had its pools to itself,
    which is exact when the paths share no pool. :meth:`improve` then climbs the total output
    of the paths run one after the other (:meth:`total`: a pool two paths cross in the same
    direction serves the second after the first), moving input from the path whose last unit
    pays least to the one paying most, a Newton step at a time: this is what the split is
    worth when paths share a pool, and what a path-by-path model overstates.
    """

    def __init__(
        self, curves: list[list[Curve]], keys: list[list[Hashable]], amount_in: float
    ) -> None:
        self.amount_in = amount_in
        self.curves = curves
        self.keys = keys
        # a margin under the float capacity: the exact pools round a few wei per range
        self.caps = [min(amount_in, path_capacity(c) * (1 - 1e-9)) for c in curves]
        self.spot = [along(c, 0.0)[1] for c in curves]
        # each path's marginal output at its cap
        self.at_cap = [along(c, cap)[1] for c, cap in zip(curves, self.caps, strict=True)]
        self.guess = [0.0] * len(curves)

    def output(self, i: int, amount: float) -> float:
        """Path ``i``'s float output for ``amount`` on the pools as they are."""
        return along(self.curves[i], amount)[0]

    def take(self, i: int, price: float) -> tuple[float, float]:
        """The input at which path ``i``'s marginal output falls to ``price``, and the inverse
        of the marginal's slope there (what the input changes per unit of ``price``)."""
        if self.spot[i] <= price:
            return 0.0, 0.0
        curves, high = self.curves[i], self.caps[i]
        if self.at_cap[i] >= price:
            return high, 0.0
        low, amount = 0.0, self.guess[i]
        if not low < amount < high:
            amount = high / 2
        slope = 0.0
        for _ in range(200):  # safeguarded Newton: quadratic inside a range, halving across one
            _, marginal, slope = along(curves, amount)
            if marginal > price:
                low = amount
            else:
                high = amount
            if abs(marginal - price) <= 1e-11 * price or high - low <= 1e-15 * high:
                break
            step = amount + (price - marginal) / slope if slope < 0 else -1.0
            amount = step if low < step < high else (low + high) / 2
        self.guess[i] = amount
        return amount, (1.0 / slope if slope < 0 else 0.0)

    def allocate(self, chosen: list[int], deadline: float | None) -> dict[int, float]:
        """The amounts of the ``chosen`` paths whose marginal outputs are equal (or 0 where a
        path's first unit pays less) and add up to the input: Newton on ``λ`` inside a bracket
        that shrinks every step. :class:`AmmError` when they cannot take it all."""
        amount_in = self.amount_in
        if sum(self.caps[i] for i in chosen) < amount_in * (1 - 1e-12):
            raise AmmError(f"the paths cannot take {amount_in:.0f} between them")
        high = max(self.spot[i] for i in chosen)
        # at or below every path's marginal output at its cap, each takes its cap: at least all
        at_cap = [self.at_cap[i] for i in chosen]
        low = min(at_cap)
        if low <= 0.0:
            low = high * 1e-30
        price = max(low, max(at_cap))  # the best path alone at the whole amount: a first guess
        amounts = [0.0] * len(chosen)
        for _ in range(200):
            taken = [self.take(i, price) for i in chosen]
            amounts = [a for a, _ in taken]
            total = sum(amounts)
            if abs(total - amount_in) <= 1e-10 * amount_in:
                break
            if deadline is not None and time.monotonic() > deadline:
                break
            if total > amount_in:
                low = price
            else:
                high = price
            if high - low <= 1e-15 * high:
                break
            rate = sum(d for _, d in taken)
            step = price - (total - amount_in) / rate if rate < 0 else -1.0
            price = step if low < step < high else math.sqrt(low * high)
        total = sum(amounts)
        if total <= 0:
            raise AmmError(f"the paths cannot take {amount_in:.0f} between them")
        if total > amount_in:
            amounts = [a * amount_in / total for a in amounts]
        elif total < amount_in:  # stopped early: the rest where there is room, in proportion
            room = [self.caps[i] - a for i, a in zip(chosen, amounts, strict=True)]
            spare = sum(room)
            amounts = [
                a + r * (amount_in - total) / spare for a, r in zip(amounts, room, strict=True)
            ]
        return {i: a for i, a in zip(chosen, amounts, strict=True) if a > 0}

    def shared(self, chosen: list[int]) -> bool:
        """Whether two of the ``chosen`` paths cross a pool in the same direction."""
        seen: set[Hashable] = set()
        for i in chosen:
            for key in self.keys[i]:
                if key in seen:
                    return True
                seen.add(key)
        return False

    def between_shared_ends(
        self, chosen: list[int], deadline: float | None
    ) -> tuple[dict[int, float], bool] | None:
        """When the ``chosen`` paths all start through the same pools (all the input crosses
        them) or all end through the same pools (a trunk, as a token reachable through one pool
        only has), the allocation that equalises the marginal outputs of the parts between:
        the shared start turns the input into a fixed amount, the trunk pays more for more, so
        the best split is the one that delivers the most from the one to the other. The
        amounts are inputs, with the paths run through a shared start one after the other
        (largest first, as they execute). Returns the allocation and whether the parts between
        still share a pool (then :meth:`improve` finishes); None when the paths share neither
        end (or the parts cannot take the amount)."""
        shortest = min(len(self.keys[i]) for i in chosen)
        head = 0
        while head < shortest - 1 and len({self.keys[i][head] for i in chosen}) == 1:
            head += 1
        tail = 0
        while head + tail < shortest - 1 and len({self.keys[i][-1 - tail] for i in chosen}) == 1:
            tail += 1
        if head == tail == 0:
            return None
        start = self.curves[chosen[0]][:head]
        middle = PathModel(
            [self.curves[i][head : len(self.curves[i]) - tail] for i in chosen],
            [self.keys[i][head : len(self.keys[i]) - tail] for i in chosen],
            along(start, self.amount_in)[0],
        )
        try:
            amounts = middle.allocate(list(range(len(chosen))), deadline)
        except AmmError:
            return None
        shared = middle.shared(list(amounts))
        if not head:
            return {chosen[j]: a for j, a in amounts.items()}, shared
        # through the shared start one after the other: path k's input is what lifts the
        # start's output by its share, after the larger shares before it
        inputs: dict[int, float] = {}
        delivered = spent = 0.0
        for j in sorted(amounts, key=lambda j: -amounts[j]):
            delivered += amounts[j]
            needed = delivered
            for curve in reversed(start):
                needed = curve.needed(needed)
            inputs[chosen[j]] = max(0.0, needed - spent)
            spent = needed
        return inputs, shared

    def total(self, amounts: dict[int, float]) -> Run:
        """The paths run one after the other (largest first, as they execute) on the float
        curves: see :class:`Run`."""
        flows: dict[Hashable, float] = {}
        curves: dict[Hashable, Curve] = {}
        ends: dict[Hashable, tuple[float, float, float]] = {}  # at the flow so far
        out = 0.0
        for i in sorted(amounts, key=lambda i: -amounts[i]):
            carried = amounts[i]
            for curve, key in zip(self.curves[i], self.keys[i], strict=True):
                before = flows.get(key, 0.0)
                flows[key] = before + carried
                curves[key] = curve
                end = ends[key] = curve.at(before + carried)
                carried = end[0] - (curve.at(before)[0] if before else 0.0)
            out += carried
        over = {
            key: (flow - limit) / limit
            for key, flow in flows.items()
            if flow > (limit := curves[key].capacity * (1 - 1e-9)) * (1 + 1e-12)
        }
        marginals, spill = {}, {}
        for i in amounts:
            marginal, spilled = 1.0, 0.0
            for curve, key in zip(self.curves[i], self.keys[i], strict=True):
                if key in over:  # a unit more here spills this much more over the capacity
                    spilled += marginal / (curve.capacity * (1 - 1e-9))
                marginal *= ends[key][1]
            marginals[i], spill[i] = marginal, spilled
        return Run(out, marginals, sum(over.values()), spill)

    def improve(self, amounts: dict[int, float], deadline: float | None) -> dict[int, float]:
        """Climb :meth:`total` from ``amounts`` over the same paths (see the class): first
        out of any pool the paths together run dry, then to a larger output."""
        amounts = dict(amounts)
        run = self.total(amounts)
        budget = 32  # runs of the paths: the last steps are worth fractions of a bps
        while budget > 0:
            if deadline is not None and time.monotonic() > deadline:
                break
            open_ = [i for i in amounts if self.caps[i] - amounts[i] > self.amount_in * 1e-9]
            givers = [i for i in amounts if amounts[i] > 0]
            if run.overflow > 0:  # move input to the path that spills least
                to = min(open_, key=lambda i: run.spill[i], default=None)
                source = max(givers, key=lambda i: run.spill[i], default=None)
                if to is None or source is None:
                    break
                rate = run.spill[source] - run.spill[to]
                if rate <= 0:
                    break
                step = 1.01 * run.overflow / rate
            else:
                to = max(open_, key=lambda i: run.marginals[i], default=None)
                source = min(
                    (i for i in givers if i != to), key=lambda i: run.marginals[i], default=None
                )
                if to is None or source is None:
                    break
                gain = run.marginals[to] - run.marginals[source]
                if gain <= 1e-6 * run.marginals[to]:
                    break
                # the curvature along the move, from the marginals a small step further
                probe = min(amounts[source], self.amount_in * 1e-6)
                ahead = self.total(moved(amounts, source, to, probe)).marginals
                budget -= 1
                curvature = ((ahead[to] - ahead[source]) - gain) / probe
                step = -gain / curvature if curvature < 0 else amounts[source]
            step = min(step, amounts[source], self.caps[to] - amounts[to])
            while step > self.amount_in * 1e-12:
                trial = moved(amounts, source, to, step)
                after = self.total(trial)
                budget -= 1
                if after.overflow < run.overflow or (after.overflow == 0 and after.out > run.out):
                    amounts, run = trial, after
                    break
                spilling = after.spill[to] - after.spill[source]
                if run.overflow == 0 < after.overflow and spilling > 0:
                    # the move ran a pool dry: back off to just short of its capacity
                    step = min(step / 2, step - 1.01 * after.overflow / spilling)
                else:
                    step /= 2
            else:
                break
        return {i: a for i, a in amounts.items() if a > 0}


@dataclass(frozen=True)
class Run:
    """Paths run one after the other on float curves: the total ``out``, each path's marginal
    output at the pools' final flows, ``overflow`` (the flows over the pools' capacities,
    each as a share of its capacity: 0 when no pool runs dry) and each path's ``spill`` (how
    much a unit more down it adds to the overflow)."""

    out: float
    marginals: dict[int, float]
    overflow: float
    spill: dict[int, float]


def moved(amounts: dict[int, float], source: int, to: int, step: float) -> dict[int, float]:
    moved = dict(amounts)
    moved[source] -= step
    moved[to] += step
    return moved
