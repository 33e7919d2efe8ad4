"""Pools as venues, and paths through them: the graph side of routing.

A :class:`Venue` is one pool between two tokens (a V2 :class:`~toolkit.amm.v2.Pair` or a V3
:class:`~toolkit.amm.v3.Pool`), quoted without changing it; a path is a tuple of
:class:`Hop`; :func:`find_paths` lists the simple paths of up to ``max_hops`` venues;
:func:`quote_path` quotes one path on the pools as they are and :func:`execute_allocation`
runs an allocation of an input over paths exactly, as a :class:`SplitRoute` of
:class:`Split`. :mod:`toolkit.amm.routing` decides the allocation.
"""

from __future__ import annotations

import copy
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from toolkit.amm.errors import AmmError, ArgumentError
from toolkit.amm.v2 import Pair
from toolkit.amm.v3.pool import Pool
from toolkit.amm.v3.tick_math import MAX_SQRT_RATIO, MIN_SQRT_RATIO

__all__ = [
    "PATHS_KEPT",
    "Hop",
    "Path",
    "Split",
    "SplitRoute",
    "Venue",
    "execute_allocation",
    "find_paths",
    "quote_path",
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


def execute_allocation(allocation: dict[Path, int]) -> SplitRoute:
    """The route that sends ``allocation[path]`` down each path, executed on the pools, largest
    share first: a pool that one split crosses once is quoted as it is, a pool that several
    cross is swapped on a copy of it, so each crossing sees the ones before and the output is
    exact to the wei; the pools given do not change. :class:`AmmError` when a pool refuses its
    share.

    >>> from toolkit.amm.v2 import Pair
    >>> venues = [Venue.v2("a", "X", "Y", Pair(10**6, 10**6))]
    >>> path = find_paths(venues, "X", "Y")[0]
    >>> execute_allocation({path: 1000}).amount_out
    996
    """
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
    total = sum(allocation.values())
    return SplitRoute(tuple(splits), total, sum(s.amount_out for s in splits))
