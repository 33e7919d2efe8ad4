"""Collectors: the service's behaviour as DuckDB tables (RFQ and borrow-quote sweeps, the
liquidity event stream, snapshots of the discovery endpoints).

Each collector is a run in the store (``collection_runs``) with an id, a ``tqdm.auto`` progress
bar (``progress=False`` hides it), batched idempotent writes, a clean stop on Ctrl-C (rows
flushed, run ``interrupted``, the result returned) and resume (``run(resume=run_id)``). They
point at the real service or, by default, at the embedded service in-process, with the same
code: give them a :class:`toolkit.client.ServiceClient`.

Followers run the collectors that can run for ever, poll by poll, in one loop
(:func:`follow`; the protocol in :mod:`toolkit.collect.follow`): :class:`ChainFollower`
(reorg-safe), :class:`PoolFollower`, :class:`CreditFollower`, :class:`LiquidityFollower` and
sweeps in rounds (:class:`RoundFollower`; :func:`follower_for` picks the follower of a service
collector).

>>> from toolkit.client import ServiceClient
>>> from toolkit.clock import VirtualClock
>>> from toolkit.collect import RfqSweep
>>> from toolkit.store import Store
>>> with ServiceClient(embedded=True, clock=VirtualClock()) as client, Store(":memory:") as store:
...     result = RfqSweep(client, store, rounds=2, interval_s=15, progress=False).run()
>>> result.status, result.rows_written > 0
('completed', True)
"""

from toolkit.collect.borrow import BorrowSweep
from toolkit.collect.chain import CHAIN_EVENTS, ChainCollector
from toolkit.collect.chain_follow import ChainFollower
from toolkit.collect.credit import CreditCollector, known_accounts
from toolkit.collect.follow import Follower, FollowStatus, RunFollower, follow
from toolkit.collect.followers import (
    CreditFollower,
    LiquidityFollower,
    PoolFollower,
    RoundFollower,
    follower_for,
)
from toolkit.collect.grid import (
    DEFAULT_CHAINS,
    DEFAULT_SYMBOLS,
    DiscoveredRoute,
    GridPoint,
    discover_routes,
    grid_for,
    tier_amounts,
)
from toolkit.collect.health_watch import HealthWatch, WatchStatus
from toolkit.collect.pools import PoolCollector
from toolkit.collect.rfq import DEFAULT_USER, RfqSweep
from toolkit.collect.rpc import RpcFailure, range_too_large
from toolkit.collect.run import BaseCollector, CollectionFailed, Collector, RunResult
from toolkit.collect.snapshot import Snapshot
from toolkit.collect.stream import LiquidityStream, stream_source
from toolkit.collect.writer import BatchWriter

__all__ = [
    "CHAIN_EVENTS",
    "DEFAULT_CHAINS",
    "DEFAULT_SYMBOLS",
    "DEFAULT_USER",
    "BaseCollector",
    "BatchWriter",
    "BorrowSweep",
    "ChainCollector",
    "ChainFollower",
    "CollectionFailed",
    "Collector",
    "CreditCollector",
    "CreditFollower",
    "DiscoveredRoute",
    "FollowStatus",
    "Follower",
    "GridPoint",
    "HealthWatch",
    "LiquidityFollower",
    "LiquidityStream",
    "PoolCollector",
    "PoolFollower",
    "RfqSweep",
    "RoundFollower",
    "RpcFailure",
    "RunFollower",
    "RunResult",
    "Snapshot",
    "WatchStatus",
    "discover_routes",
    "follow",
    "follower_for",
    "grid_for",
    "known_accounts",
    "range_too_large",
    "stream_source",
    "tier_amounts",
]
