"""Split routes across AMM pools: every path from one token to another within a few hops, and
an allocation of the input across paths that equalises their marginal outputs.

A :class:`Venue` is one pool between two tokens (a V2 :class:`~toolkit.amm.v2.Pair` or a V3
:class:`~toolkit.amm.v3.Pool`), quoted without changing it. :func:`find_paths` lists the
simple paths of up to ``max_hops`` venues. :func:`best_route` searches on the pools' float
curves (:mod:`toolkit.amm.curve`: output, marginal output and its slope in closed form): the
allocation whose used paths all end at the same marginal output ``λ`` and add up to the
input, found by Newton's method on ``λ`` (each path's amount at ``λ`` by Newton on the path's
marginal), which is the exact optimum for concave pools where a grid of 5 % slices only comes
close, and costs a few hundred float evaluations instead of exact quotes. Paths that share a
pool are then climbed together (each unit moved to the path whose last unit pays most, with
the paths run one after the other, first out of any pool they would run dry together), since
a path-by-path model overstates what they deliver. Only the winners are executed exactly:
the split and the best single path, in order, so paths that share a pool see each other's
price impact and the reported output is exact to the wei; the larger wins.
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
import copy
import math
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from toolkit.amm.allocation import PathModel
from toolkit.amm.curve import Curve
from toolkit.amm.errors import AmmError, ArgumentError, uint
from toolkit.amm.v2 import Pair
from toolkit.amm.v3.pool import Pool
from toolkit.amm.v3.tick_math import MAX_SQRT_RATIO, MIN_SQRT_RATIO

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


@dataclass(eq=False)  # a venue is itself: compared and hashed by identity
class Venue:
    """One pool between ``token0`` and ``token1`` (named as the pool orders them), identified
    by ``name``; ``swap(zero_for_one, amount_in, commit)`` returns the output amount."""

    name: str
    token0: str
    token1: str
    pool: Pair | Pool
    fee_bps: float = field(default=0.0)

    @classmethod
    def v2(cls, name: str, token0: str, token1: str, pair: Pair) -> Venue:
        """A V2 pair as a venue."""
        return cls(name, token0, token1, pair, pair.fee_bps)

    @classmethod
    def v3(cls, name: str, token0: str, token1: str, pool: Pool) -> Venue:
        """A V3 pool as a venue (its fee in pips, shown in bps)."""
        return cls(name, token0, token1, pool, pool.fee / 100)

    def other(self, token: str) -> str:
        """The venue's other token."""
        return self.token1 if token == self.token0 else self.token0

    def out(self, token_in: str, amount_in: int, *, commit: bool = False) -> int:
        """What ``amount_in`` of ``token_in`` buys here (0 for 0); ``commit`` swaps for real."""
        if amount_in == 0:
            return 0
        zero_for_one = token_in == self.token0
        if isinstance(self.pool, Pair):
            if commit:
                return self.pool.swap(amount_in, zero_for_one)
            return self.pool.get_amount_out(amount_in, zero_for_one)
        limit = MIN_SQRT_RATIO + 1 if zero_for_one else MAX_SQRT_RATIO - 1
        run = self.pool.swap if commit else self.pool.quote
        amount0, amount1 = run(zero_for_one, amount_in, limit)
        return -(amount1 if zero_for_one else amount0)


@dataclass(frozen=True)
class Hop:
    """One step of a path: through ``venue`` from ``token_in`` to ``token_out``."""

    venue: Venue
    token_in: str
    token_out: str


Path = tuple[Hop, ...]


@dataclass(frozen=True)
class Split:
    """A share of a route: the ``path``, the input sent down it, and its exact output."""

    path: Path
    amount_in: int
    amount_out: int

    @property
    def path_label(self) -> str:
        """The venues' names joined by ``>``."""
        return ">".join(hop.venue.name for hop in self.path)


@dataclass(frozen=True)
class SplitRoute:
    """The chosen splits (largest first) and the total output, exact to the wei."""

    splits: tuple[Split, ...]
    amount_in: int
    amount_out: int


def find_paths(
    venues: Sequence[Venue], token_in: str, token_out: str, *, max_hops: int = 3
) -> list[Path]:
    """Every simple path (no token or venue visited twice) of at most ``max_hops`` venues,
    shortest first. The graph's paths depend only on which venue joins which tokens, so the
    last :data:`PATHS_KEPT` searches are kept by that (and built again from the venues given).

    >>> from toolkit.amm.v2 import Pair
    >>> venues = [Venue.v2("x", "A", "B", Pair(10**6, 10**6)),
    ...           Venue.v2("y", "B", "C", Pair(10**6, 10**6))]
    >>> [[hop.venue.name for hop in path] for path in find_paths(venues, "A", "C")]
    [['x', 'y']]
    """
    if token_in == token_out:
        raise ArgumentError("token_out", "a token other than token_in", token_out)
    graph = tuple((v.token0, v.token1) for v in venues)
    key = (graph, token_in, token_out, max_hops)
    found = _PATHS.get(key)
    if found is None:
        found = _PATHS[key] = _walk(graph, token_in, token_out, max_hops)
        if len(_PATHS) > PATHS_KEPT:
            _PATHS.popitem(last=False)
    else:
        _PATHS.move_to_end(key)
    return [tuple(Hop(venues[j], a, b) for j, a, b in steps) for steps in found]


#: How many path searches :func:`find_paths` keeps.
PATHS_KEPT: Final = 256
_PATHS: OrderedDict[tuple[object, ...], list[tuple[tuple[int, str, str], ...]]] = OrderedDict()


def _walk(
    graph: tuple[tuple[str, str], ...], token_in: str, token_out: str, max_hops: int
) -> list[tuple[tuple[int, str, str], ...]]:
    """The paths of :func:`find_paths` as (venue index, token in, token out) steps."""
    found: list[tuple[tuple[int, str, str], ...]] = []
    beside: dict[str, list[int]] = {}  # the venues of each token, in the given order
    for j, (token0, token1) in enumerate(graph):
        beside.setdefault(token0, []).append(j)
        beside.setdefault(token1, []).append(j)

    def walk(token: str, path: tuple[tuple[int, str, str], ...], seen: frozenset[str]) -> None:
        if token == token_out:
            found.append(path)
            return
        if len(path) == max_hops:
            return
        for j in beside.get(token, ()):
            token0, token1 = graph[j]
            nxt = token1 if token == token0 else token0
            if nxt not in seen:  # no token twice, so no venue twice either
                walk(nxt, (*path, (j, token, nxt)), seen | {nxt})

    walk(token_in, (), frozenset({token_in}))
    return sorted(found, key=len)


def quote_path(path: Path, amount_in: int) -> int:
    """The output of ``amount_in`` down ``path`` on the pools as they are (nothing changes);
    0 when a pool cannot take it."""
    amount = amount_in
    for hop in path:
        try:
            amount = hop.venue.out(hop.token_in, amount)
        except AmmError:
            return 0
    return amount


def _exact(allocation: dict[Path, int], total: int) -> SplitRoute:
    """Run the allocation on the pools, largest share first: a pool that one split crosses
    once is quoted as it is, a pool that several cross is swapped on a copy of it, so each
    crossing sees the ones before."""
    crossings = Counter(id(hop.venue) for path in allocation for hop in path)
    copies: dict[int, Venue] = {}
    splits = []
    for path, amount_in in sorted(allocation.items(), key=lambda item: -item[1]):
        if not amount_in:
            continue
        amount = amount_in
        for hop in path:
            venue = hop.venue
            if crossings[id(venue)] == 1:
                amount = venue.out(hop.token_in, amount)
                continue
            if id(venue) not in copies:
                copies[id(venue)] = copy.deepcopy(venue)
            amount = copies[id(venue)].out(hop.token_in, amount, commit=True)
        splits.append(Split(path, amount_in, amount))
    return SplitRoute(tuple(splits), total, sum(s.amount_out for s in splits))


def execute_allocation(allocation: dict[Path, int]) -> SplitRoute:
    """The route that sends ``allocation[path]`` down each path, executed on copies of the
    pools (largest share first, so paths sharing a pool see each other's impact): exact to the
    wei. :class:`AmmError` when a pool refuses its share.

    >>> from toolkit.amm.v2 import Pair
    >>> venues = [Venue.v2("a", "X", "Y", Pair(10**6, 10**6))]
    >>> path = find_paths(venues, "X", "Y")[0]
    >>> execute_allocation({path: 1000}).amount_out
    996
    """
    return _exact(allocation, sum(allocation.values()))


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
            pool = hop.venue.pool
            if isinstance(pool, Pair):
                curve = Curve.of_pair(pool, zero_for_one=zero_for_one)
            else:
                curve = Curve.of_pool(pool, zero_for_one=zero_for_one)
            memo[key] = curve
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


def _attempt(allocation: dict[Path, int], amount_in: int) -> SplitRoute | None:
    """The allocation executed exactly, or None when a pool refuses its share."""
    try:
        return _exact(allocation, amount_in)
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
        if route := _attempt(allocation, amount_in):
            found.append(route)
            break
    for _, allocation in split:
        route = _attempt(allocation, amount_in)
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
        route = _attempt(allocation, amount_in)
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
