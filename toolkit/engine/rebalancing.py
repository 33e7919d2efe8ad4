"""Which transfers a rebalancing policy sends: pure arithmetic on one token's chains.

The transfer book (:mod:`toolkit.engine.transfers`) hands :func:`plan_moves` each chain's
``figure`` (what counts toward its share: on chain, in flight to it, owed to it by settlements),
what it ``held`` (on chain and in flight to it: what settlements still owe it left out), what
it can send now (its unallocated balance and its pools' available liquidity) and three levels
in the same units:

- ``trigger``: a chain below it is short and is topped up;
- ``goal``: how far a short chain is topped up;
- ``floor``: a source never sends what it holds below it.

A short chain counts what settlements owe it, so it is not sent what is already on its way; a
source does not, so it never sends tokens it has not received yet.

The threshold policy sets them from a chain's shares of the token's whole inventory as the
Across relayer's inventory manager does (across-protocol/relayer, ``InventoryClient``: a chain
below ``thresholdPct`` is sent ``targetPct + rebalanceOvershoot`` less its share, and here the
source is the chain with the largest excess over its own target rather than the hub): trigger =
threshold, goal = target + overshoot, floor = target. The periodic policy brings every chain to
its target: trigger = goal = floor = target.

Short chains are served largest shortfall first (ties: chain order); each takes from the chain
holding the most above its floor (ties: chain order), as much as that chain can send, until it
reaches its goal. A move below ``minimum`` (sent) is not made. A chain topped up in a plan
is no source in the same plan (its overshoot would only travel on).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["plan_moves"]


def plan_moves(
    figures: list[int],
    held: list[int],
    sendable: list[int],
    trigger: list[int],
    goal: list[int],
    floor: list[int],
    minimum: int,
    gross: Callable[[int, int, int], int],
    fee: Callable[[int, int, int], int],
) -> list[tuple[int, int, int]]:
    """The moves ``(source, destination, amount sent)`` that bring short chains to their goal.

    ``gross(src, dst, arriving)`` is the amount to send for ``arriving`` to arrive and
    ``fee(src, dst, amount)`` the bridge's fee on ``amount``. ``figures``, ``held`` and
    ``sendable`` are updated as the moves are planned.

    >>> free = lambda s, d, x: x
    >>> nothing = lambda s, d, x: 0
    >>> levels = [30, 30, 30], [60, 60, 60], [50, 50, 50]
    >>> plan_moves([100, 20, 80], [100, 20, 80], [100, 20, 80], *levels, 1, free, nothing)
    [(0, 1, 40)]
    >>> plan_moves([100, 20, 80], [55, 20, 80], [55, 20, 80], *levels, 1, free, nothing)
    [(2, 1, 30), (0, 1, 5)]
    """
    n = len(figures)
    moves: list[tuple[int, int, int]] = []
    short = sorted(
        (i for i in range(n) if figures[i] < trigger[i]), key=lambda i: (figures[i] - goal[i], i)
    )
    topped: set[int] = set(short)
    for dst in short:
        spent: set[int] = set()
        while figures[dst] < goal[dst]:
            sources = [
                i
                for i in range(n)
                if i not in topped and i not in spent and held[i] > floor[i] and sendable[i] > 0
            ]
            if not sources:
                break
            src = min(sources, key=lambda i: (floor[i] - held[i], i))
            spent.add(src)
            cap = min(held[src] - floor[src], sendable[src])
            amount = min(gross(src, dst, goal[dst] - figures[dst]), cap)
            arriving = amount - fee(src, dst, amount)
            if amount < minimum or arriving <= 0:
                continue
            moves.append((src, dst, amount))
            figures[src] -= amount
            held[src] -= amount
            sendable[src] -= amount
            figures[dst] += arriving
            held[dst] += arriving
    return moves
