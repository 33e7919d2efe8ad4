"""Pools rebuilt from a snapshot of the chain: the state one block held, ready to quote.

A snapshot row (``amm_pool_snapshots``, as :mod:`toolkit.collect.pool_state` reads it) and the
pool's initialised ticks (``amm_pool_ticks``) give back a :class:`~toolkit.amm.v2.Pair` or a
:class:`~toolkit.amm.v3.Pool` in exactly the contract's state at that block: ``slot0``'s price
and tick (which need not be the tick of the price: a swap that stops on a tick going down
leaves ``tick`` one below), in-range liquidity, fee growth, and every initialised tick of the
bitmap words read. A V3 pool read to a depth knows its ticks only there: it carries those
``bounds`` and a swap that would end outside them raises
:class:`~toolkit.amm.v3.DepthExceeded` instead of quoting what the chain would not execute.

>>> row = {"kind": "v3", "fee": 3000, "tick_spacing": 60, "sqrt_price_x96": str(2**96),
...        "tick": 0, "liquidity": str(10**18), "min_tick": -15360, "max_tick": 15359}
>>> pool = pool_from_snapshot(row, [(-60, 10**18, 10**18, 0, 0), (60, -10**18, 10**18, 0, 0)])
>>> pool.quote(True, 10**15, 2**96 - 2**90)
(1000000000000000, -996006981039903)
>>> pool.quote(True, 10**20, 4295128740)
Traceback (most recent call last):
...
toolkit.amm.v3.pool.DepthExceeded: beyond the snapshot's depth: ... [-15360, 15359]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolkit.amm.errors import ArgumentError
from toolkit.amm.paths import Venue
from toolkit.amm.v2 import Pair
from toolkit.amm.v3.pool import Pool, TickInfo
from toolkit.amm.v3.tick_bitmap import flip_tick

__all__ = ["pool_from_snapshot", "venues_from_snapshot"]

Tick = Sequence[int]
"""``(tick, liquidity_net, liquidity_gross, fee_growth_outside0_x128,
fee_growth_outside1_x128)``."""


def _int(row: Mapping[str, Any], name: str, default: int | None = None) -> int:
    value = row.get(name)
    if value is None:
        if default is None:
            raise ArgumentError(name, "present in the snapshot row", None)
        return default
    return int(value)


def pool_from_snapshot(row: Mapping[str, Any], ticks: Iterable[Tick] = ()) -> Pair | Pool:
    """The pool a snapshot row describes (``ticks``: a V3 pool's initialised ticks)."""
    kind = row.get("kind")
    if kind == "v2":
        return Pair(_int(row, "reserve0"), _int(row, "reserve1"), _int(row, "fee") // 100)
    if kind != "v3":
        raise ArgumentError("kind", "'v2' or 'v3'", kind)
    spacing = _int(row, "tick_spacing")
    pool = Pool(_int(row, "fee"), spacing, _int(row, "sqrt_price_x96"))
    pool.tick = _int(row, "tick")  # slot0's tick, not always the price's
    pool.liquidity = _int(row, "liquidity")
    pool.fee_growth_global0_x128 = _int(row, "fee_growth_global0_x128", 0)
    pool.fee_growth_global1_x128 = _int(row, "fee_growth_global1_x128", 0)
    for tick, net, gross, outside0, outside1 in ticks:
        pool.ticks[tick] = TickInfo(gross, net, outside0, outside1)
        flip_tick(pool.tick_bitmap, tick, spacing)
    if row.get("min_tick") is not None and row.get("max_tick") is not None:
        pool.bounds = (_int(row, "min_tick"), _int(row, "max_tick"))
    return pool


def venues_from_snapshot(
    rows: Iterable[Mapping[str, Any]],
    ticks: Mapping[str, Iterable[Tick]],
    names: Mapping[str, str] | None = None,
) -> list[Venue]:
    """Route venues of the snapshot's pools, named ``SYMBOL0/SYMBOL1 kind fee`` with tokens as
    ``names`` calls them (lower-case address → symbol; the address where it has none).

    >>> row = {"pool": "0xp", "kind": "v2", "token0": "0xA", "token1": "0xB", "fee": 3000,
    ...        "reserve0": 10**20, "reserve1": 10**20}
    >>> [v.name for v in venues_from_snapshot([row], {}, {"0xa": "USDC", "0xb": "WETH"})]
    ['USDC/WETH v2 0.3%']
    """
    names = {k.lower(): v for k, v in (names or {}).items()}
    venues = []
    for row in rows:
        token0, token1 = (names.get(str(row[t]).lower(), str(row[t])) for t in ("token0", "token1"))
        pool = pool_from_snapshot(row, ticks.get(str(row["pool"]), ()))
        label = f"{token0}/{token1} {row['kind']} {int(row['fee']) / 10_000:g}%"
        if isinstance(pool, Pair):
            venues.append(Venue.v2(label, token0, token1, pool))
        else:
            venues.append(Venue.v3(label, token0, token1, pool))
    return venues
