"""Split routes across AMM pools: every path from one token to another within a few hops, and
an allocation of the input across paths that equalises their marginal outputs.

A :class:`Venue` is one pool between two tokens (a V2 :class:`~toolkit.amm.v2.Pair` or a V3
:class:`~toolkit.amm.v3.Pool`), quoted without changing it. :func:`find_paths` lists the
simple paths of up to ``max_hops`` venues. :func:`best_route` splits ``amount_in`` into
``parts`` equal slices and gives each slice to the path whose *next* slice pays the most (its
marginal output, quoted on the path's allocation so far), then refines the allocation by moving
ever smaller amounts between paths until no move pays: every used path's marginal output ends
equal, which is the optimum for concave pools (a grid of 5 % slices only comes close). The
route is then executed on copies of the pools, in order, so paths that share a pool see each
other's price impact and the reported output is exact to the wei. A single best path is kept
when no split beats it, and the 5 %-grid allocation (:func:`grid_allocation`, from the same
quotes) when it executes better: paths sharing a pool can make the equalised split, whose
marginal outputs are quoted path by path, lose to it. So the route is never worse than the grid.

>>> from toolkit.amm.v2 import Pair
>>> deep, shallow = Pair(10**24, 10**24), Pair(10**23, 10**23)
>>> venues = [Venue.v2("a", "USDC", "USDT", deep), Venue.v2("b", "USDC", "USDT", shallow)]
>>> route = best_route(venues, "USDC", "USDT", 10**22, parts=20)  # the optimum: 10 to 1
>>> [(split.path_label, split.amount_in) for split in route.splits]
[('a', 9090911865234375000000), ('b', 909088134765625000000)]
>>> route.amount_out > max(quote_path(p, 10**22) for p in find_paths(venues, "USDC", "USDT"))
True
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

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
    """Every simple path (no token or venue visited twice) of at most ``max_hops`` venues.

    >>> from toolkit.amm.v2 import Pair
    >>> venues = [Venue.v2("x", "A", "B", Pair(10**6, 10**6)),
    ...           Venue.v2("y", "B", "C", Pair(10**6, 10**6))]
    >>> [[hop.venue.name for hop in path] for path in find_paths(venues, "A", "C")]
    [['x', 'y']]
    """
    if token_in == token_out:
        raise ArgumentError("token_out", "a token other than token_in", token_out)
    found: list[Path] = []

    def walk(token: str, path: Path, seen: frozenset[str]) -> None:
        if token == token_out:
            found.append(path)
            return
        if len(path) == max_hops:
            return
        for venue in venues:
            if token not in (venue.token0, venue.token1) or any(h.venue is venue for h in path):
                continue
            nxt = venue.other(token)
            if nxt not in seen:
                walk(nxt, (*path, Hop(venue, token, nxt)), seen | {nxt})

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


def _execute(path: Path, amount_in: int, lookup: Callable[[Venue], Venue]) -> int:
    amount = amount_in
    for hop in path:
        amount = lookup(hop.venue).out(hop.token_in, amount, commit=True)
    return amount


def _exact(allocation: dict[Path, int], total: int) -> SplitRoute:
    """Run the allocation on copies of the pools, largest share first."""
    copies: dict[int, Venue] = {}

    def lookup(venue: Venue) -> Venue:
        if id(venue) not in copies:
            copies[id(venue)] = copy.deepcopy(venue)
        return copies[id(venue)]

    splits = []
    for path, amount in sorted(allocation.items(), key=lambda item: -item[1]):
        if amount:
            splits.append(Split(path, amount, _execute(path, amount, lookup)))
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


def best_route(
    venues: Sequence[Venue],
    token_in: str,
    token_out: str,
    amount_in: int,
    *,
    parts: int = 20,
    max_hops: int = 3,
    max_paths: int = 4,
    timeout: float | None = None,
) -> SplitRoute:
    """The split route for ``amount_in`` (module docstring): at most ``max_paths`` paths of at
    most ``max_hops`` venues. After the greedy slices, the allocation is refined by moving ever
    smaller amounts from the path that loses least to the one that gains most, until no move of
    one unit-millionth of the input pays: the marginal outputs end equal, as the optimum for
    concave pools has them. ``timeout`` (seconds) bounds the refinement (anytime: the best
    allocation so far is returned). The best of the split, the single best path and the grid's
    allocation is returned (module docstring). :class:`AmmError` when no path exists or none
    can take the amount. The result depends only on the pools' state.
    """
    uint(amount_in, 256, "amount_in")
    if amount_in == 0:
        raise AmmError("amount_in: must be positive")
    if not 1 <= parts <= 1000:
        raise ArgumentError("parts", "an integer in [1, 1000]", parts)
    if not 1 <= max_paths <= 16:
        raise ArgumentError("max_paths", "an integer in [1, 16]", max_paths)
    deadline = None if timeout is None else time.monotonic() + timeout
    paths = find_paths(venues, token_in, token_out, max_hops=max_hops)
    if not paths:
        raise AmmError(f"no path from {token_in} to {token_out} within {max_hops} hops")
    cache: dict[tuple[Path, int], int] = {}

    def quote(path: Path, amount: int) -> int:
        key = (path, amount)
        if key not in cache:
            cache[key] = quote_path(path, amount)
        return cache[key]

    slice_, rest = divmod(amount_in, parts)
    allocation = dict.fromkeys(paths, 0)
    outputs = dict.fromkeys(paths, 0)
    for k in range(parts):
        step = slice_ + (rest if k == parts - 1 else 0)
        if step == 0:
            continue
        used = [p for p in paths if allocation[p]]
        open_ = paths if len(used) < max_paths else used
        gains = {p: quote(p, allocation[p] + step) - outputs[p] for p in open_}
        chosen = max(open_, key=lambda p: gains[p])
        if gains[chosen] <= 0:
            raise AmmError(f"no path from {token_in} to {token_out} can take {amount_in}")
        allocation[chosen] += step
        outputs[chosen] += gains[chosen]
    _refine(allocation, outputs, max(1, slice_ // 2), max(1, amount_in // 10**6), deadline, quote)
    split = _exact(allocation, amount_in)
    single = max(paths, key=lambda p: quote(p, amount_in))
    best = split
    if quote(single, amount_in) > 0:  # a single path can take it all (else only a split can)
        alone = _exact({single: amount_in}, amount_in)
        best = split if split.amount_out >= alone.amount_out else alone
    if deadline is None or time.monotonic() <= deadline:
        # the grid's allocation, from quotes the greedy slices mostly made already: the route
        # is never worse than the 5 %-grid split on the same state
        try:
            grid = _exact(
                grid_allocation(paths, amount_in, parts=parts, max_paths=max_paths, quote=quote),
                amount_in,
            )
        except AmmError:
            return best
        if grid.amount_out > best.amount_out:
            return grid
    return best


def _refine(
    allocation: dict[Path, int],
    outputs: dict[Path, int],
    delta: int,
    smallest: int,
    deadline: float | None,
    quote: Callable[[Path, int], int] = quote_path,
) -> None:
    """Move ``delta`` from the used path that loses least to the path that gains most while it
    pays, halving ``delta`` down to ``smallest``: marginal outputs equalise."""
    used = [p for p in allocation if allocation[p]]
    candidates = used if len(used) >= 1 else list(allocation)
    while delta >= smallest:
        if deadline is not None and time.monotonic() > deadline:
            return
        # quotes are memoised by ``quote``: after a move only the two paths that moved are
        # quoted again
        gain = {p: quote(p, allocation[p] + delta) - outputs[p] for p in candidates}
        loss = {
            p: outputs[p] - quote(p, allocation[p] - delta)
            for p in candidates
            if allocation[p] >= delta
        }
        to = max(candidates, key=lambda p: gain[p])
        givers = [p for p in loss if p is not to]
        if not givers:
            delta //= 2
            continue
        source = min(givers, key=lambda p: loss[p])
        if gain[to] - loss[source] <= 0:
            delta //= 2
            continue
        allocation[to] += delta
        allocation[source] -= delta
        outputs[to] += gain[to]
        outputs[source] -= loss[source]
