"""Split routes across AMM pools: every path from one token to another within a few hops, and
an allocation of the input across paths that equalises their marginal outputs.

Venues, paths and exact execution are :mod:`toolkit.amm.paths` (re-exported here): a
:class:`Venue` is one pool between two tokens, :func:`find_paths` lists the simple paths of up
to ``max_hops`` venues. :func:`best_route` searches on the pools' float curves
(:mod:`toolkit.amm.curve`: output, marginal output and its slope in closed form) with
:class:`~toolkit.amm.allocation.PathModel`: the allocation whose used paths all end at the same
marginal output ``λ`` and add up to the input, by Newton's method on ``λ`` (each path's amount
at ``λ`` by Newton along the path). That is the exact optimum for concave pools, where a grid
of 5 % slices only comes close, and costs a few hundred float evaluations instead of exact
quotes. Paths that share a pool need more, since a path-by-path model overstates what they
deliver together: paths that all start or all end through the same pools split what lies
between them (exact again), and others are climbed together on the paths run one after the
other. Only the winners are executed exactly (the split and the best single path, whose float
outputs come within a billionth of each other), so the output is exact to the wei.
:func:`grid_allocation` is the 5 %-grid baseline, for comparisons.

>>> from toolkit.amm.v2 import Pair
>>> deep, shallow = Pair(10**24, 10**24), Pair(10**23, 10**23)
>>> venues = [Venue.v2("a", "USDC", "USDT", deep), Venue.v2("b", "USDC", "USDT", shallow)]
>>> route = best_route(venues, "USDC", "USDT", 10**22)  # the optimum: 10 to 1
>>> [(split.path_label, split.amount_in) for split in route.splits]
[('a', 9090909090909099130880), ('b', 909090909090900869120)]
>>> route.amount_out > max(quote_path(p, 10**22) for p in find_paths(venues, "USDC", "USDT"))
True
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Sequence

from toolkit.amm.allocation import PathModel
from toolkit.amm.curve import Curve
from toolkit.amm.errors import AmmError, ArgumentError, uint
from toolkit.amm.paths import (
    Hop,
    Path,
    Split,
    SplitRoute,
    Venue,
    execute_allocation,
    find_paths,
    quote_path,
)

__all__ = [
    "Hop",
    "Split",
    "SplitRoute",
    "Venue",
    "best_route",
    "execute_allocation",
    "find_paths",
    "grid_allocation",
    "path_curves",
    "quote_path",
    "route_candidates",
]


def grid_allocation(
    paths: Sequence[Path],
    amount_in: int,
    *,
    parts: int = 20,
    max_paths: int = 4,
    quote: Callable[[Path, int], int] = quote_path,
) -> dict[Path, int]:
    """The best allocation of ``amount_in`` in whole ``1 / parts`` shares (5 % for 20) over at
    most ``max_paths`` of ``paths``, each path quoted on its own at every share (``quote``):
    an exact knapsack over the grid, the way the best-known open router splits. Shares are
    multiples of ``amount_in // parts``; the rounding remainder goes to the largest share.
    :class:`AmmError` when no path can take the amount.

    >>> from toolkit.amm.v2 import Pair
    >>> venues = [Venue.v2("a", "X", "Y", Pair(10**24, 10**24)),
    ...           Venue.v2("b", "X", "Y", Pair(10**23, 10**23))]
    >>> allocation = grid_allocation(find_paths(venues, "X", "Y"), 10**22)
    >>> sorted(allocation.values())
    [1000000000000000000000, 9000000000000000000000]
    """
    slice_ = amount_in // parts
    levels = [slice_ * k for k in range(parts + 1)]
    levels[parts] = amount_in  # every share at once: the whole input
    quotes = [[quote(p, a) if a else 0 for a in levels] for p in paths]
    # best[m][j]: the largest output of j shares over the paths seen so far, m of them used;
    # choices[i][m][j]: the shares path i takes in that optimum (0: none).
    best = [[0 if j == 0 else -1 for j in range(parts + 1)] for _ in range(max_paths + 1)]
    choices: list[list[list[int]]] = []
    for row in quotes:
        nxt = [list(level) for level in best]
        choice = [[0] * (parts + 1) for _ in range(max_paths + 1)]
        for m in range(1, max_paths + 1):
            for j in range(1, parts + 1):
                for k in range(1, j + 1):
                    before = best[m - 1][j - k]
                    if before < 0 or row[k] <= 0:
                        continue
                    if before + row[k] > nxt[m][j]:
                        nxt[m][j] = before + row[k]
                        choice[m][j] = k
        best = nxt
        choices.append(choice)
    top = max(range(max_paths + 1), key=lambda m: (best[m][parts], -m))
    if best[top][parts] <= 0:
        raise AmmError(f"no path can take {amount_in}")
    allocation: dict[Path, int] = {}
    m, j = top, parts
    for i in range(len(paths) - 1, -1, -1):
        k = choices[i][m][j]
        if k:
            allocation[paths[i]] = levels[k]
            m, j = m - 1, j - k
    largest = max(allocation, key=lambda p: allocation[p])
    allocation[largest] += amount_in - sum(allocation.values())
    return allocation


def path_curves(path: Path, memo: dict[tuple[int, str], Curve] | None = None) -> list[Curve]:
    """The float curves of ``path``'s venues in the direction the path crosses them (``memo``
    keeps those already built, by venue and input token, for paths that share pools)."""
    memo = {} if memo is None else memo
    curves = []
    for hop in path:
        key = (id(hop.venue), hop.token_in)
        curve = memo.get(key)
        if curve is None:
            zero_for_one = hop.token_in == hop.venue.token0
            curve = memo[key] = Curve.cached(hop.venue.pool, zero_for_one=zero_for_one)
        curves.append(curve)
    return curves


def _whole(amounts: dict[Path, float], amount_in: int) -> dict[Path, int]:
    """Float amounts as integers adding up to ``amount_in``: shares under a millionth dropped,
    the rounding remainder to the largest share."""
    kept = {p: int(a) for p, a in amounts.items() if a >= amount_in * 1e-6}
    largest = max(kept, key=lambda p: kept[p])
    kept[largest] += amount_in - sum(kept.values())
    return kept


def _plans(
    venues: Sequence[Venue],
    token_in: str,
    token_out: str,
    amount_in: int,
    *,
    max_hops: int,
    max_paths: int,
    timeout: float | None,
) -> tuple[list[tuple[float, dict[Path, int]]], list[tuple[float, dict[Path, int]]]]:
    """The allocations worth executing, with their float outputs: the two best single paths
    that can take the whole amount, and the split (empty when the paths cannot take it)."""
    uint(amount_in, 256, "amount_in")
    if amount_in == 0:
        raise AmmError("amount_in: must be positive")
    if not 1 <= max_paths <= 16:
        raise ArgumentError("max_paths", "an integer in [1, 16]", max_paths)
    deadline = None if timeout is None else time.monotonic() + timeout
    paths = find_paths(venues, token_in, token_out, max_hops=max_hops)
    if not paths:
        raise AmmError(f"no path from {token_in} to {token_out} within {max_hops} hops")
    total = float(amount_in)
    memo: dict[tuple[int, str], Curve] = {}
    model = PathModel(
        [path_curves(p, memo) for p in paths],
        [[(id(h.venue), h.token_in) for h in p] for p in paths],
        total,
    )
    alone = sorted(
        ((model.output(i, total), {paths[i]: amount_in}) for i in range(len(paths))
         if model.caps[i] >= total),
        key=lambda plan: -plan[0],
    )[:2]  # fmt: skip
    split: list[tuple[float, dict[Path, int]]] = []
    if max_paths > 1 and len(paths) > 1:
        with contextlib.suppress(AmmError):  # the paths cannot take it between them
            everyone = list(range(len(paths)))
            amounts: dict[int, float] = {}
            pool = everyone
            if len(paths) > max_paths:  # the paths the equalised split uses most
                amounts = model.allocate(everyone, deadline)
                pool = sorted(everyone, key=lambda i: -amounts.get(i, 0.0))[:max_paths]
                amounts = {}
            if model.shared(pool):
                # a path-by-path model overstates paths that share a pool: split them between
                # shared ends, or climb on the paths run together
                start = model.between_shared_ends(pool, deadline)
                if start is not None:
                    amounts = start[0]
                if start is None or start[1] or model.total(amounts).overflow > 0:
                    if not amounts:
                        amounts = model.allocate(pool, deadline)
                    amounts = model.improve({i: amounts.get(i, 0.0) for i in pool}, deadline)
            else:
                amounts = model.allocate(pool, deadline)
            allocation = _whole({paths[i]: a for i, a in amounts.items()}, amount_in)
            split.append((model.total(amounts).out, allocation))
    return alone, split


def _attempt(allocation: dict[Path, int]) -> SplitRoute | None:
    """The allocation executed exactly, or None when a pool refuses its share."""
    try:
        return execute_allocation(allocation)
    except AmmError:
        return None


def route_candidates(
    venues: Sequence[Venue],
    token_in: str,
    token_out: str,
    amount_in: int,
    *,
    max_hops: int = 3,
    max_paths: int = 4,
    timeout: float | None = None,
) -> list[SplitRoute]:
    """The routes :func:`best_route` chooses from, each executed exactly: the best single
    path (when one can take the whole amount; the next best when a pool refuses it) and the
    equalised split over at most ``max_paths`` paths (when it differs). :class:`AmmError` when
    no path exists or none can take the amount."""
    alone, split = _plans(
        venues,
        token_in,
        token_out,
        amount_in,
        max_hops=max_hops,
        max_paths=max_paths,
        timeout=timeout,
    )
    found: list[SplitRoute] = []
    for _, allocation in alone:
        if route := _attempt(allocation):
            found.append(route)
            break
    for _, allocation in split:
        route = _attempt(allocation)
        if route and all(r.splits != route.splits for r in found):
            found.append(route)
    if not found:
        raise AmmError(f"no path from {token_in} to {token_out} can take {amount_in}")
    return found


def best_route(
    venues: Sequence[Venue],
    token_in: str,
    token_out: str,
    amount_in: int,
    *,
    max_hops: int = 3,
    max_paths: int = 4,
    timeout: float | None = None,
) -> SplitRoute:
    """The split route for ``amount_in`` (module docstring): at most ``max_paths`` paths of at
    most ``max_hops`` venues, the largest exact output among :func:`route_candidates`' (fewer
    splits on a tie). Only candidates whose float output comes within a billionth of the best
    executed one are executed. ``timeout`` (seconds) bounds the search (anytime: the
    allocation found so far is executed). :class:`AmmError` when no path exists or none can
    take the amount. The result depends only on the pools' state.
    """
    alone, split = _plans(
        venues,
        token_in,
        token_out,
        amount_in,
        max_hops=max_hops,
        max_paths=max_paths,
        timeout=timeout,
    )
    best: SplitRoute | None = None
    bar = -math.inf
    tried: list[dict[Path, int]] = []
    for value, allocation in sorted(alone + split, key=lambda plan: -plan[0]):
        if value < bar:
            break
        if allocation in tried:  # a split that put everything on one path
            continue
        tried.append(allocation)
        route = _attempt(allocation)
        if route is None:
            continue
        if best is None or (route.amount_out, -len(route.splits)) > (
            best.amount_out,
            -len(best.splits),
        ):
            best = route
        bar = max(bar, value * (1 - 1e-9))
    if best is None:
        raise AmmError(f"no path from {token_in} to {token_out} can take {amount_in}")
    return best
