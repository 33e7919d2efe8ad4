"""The state behind one app: scenario, engine, world, clock, nonces, and event-stream wake-ups.

Concurrency model: :attr:`Service.lock` (a :class:`~toolkit.server.locking.FairLock`) guards
the state. JSON-RPC runs in worker threads and takes it per method; the other handlers run on
the event loop and hold it for their whole (short, ``await``-free once the body is read) step;
streams hold it for each read between their waits on :meth:`Service.wait_for_change`.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import math
import threading
from dataclasses import dataclass
from typing import Any, Final

from toolkit.arguments import number
from toolkit.chain.registry import (
    Contracts,
    RegisteredChain,
    RegisteredToken,
    Registry,
    default_registry,
)
from toolkit.clock import WALL, Clock, OffsetClock
from toolkit.engine import Engine, PoolState
from toolkit.scenario import Pool, Scenario
from toolkit.server.locking import FairLock
from toolkit.world import World
from toolkit.world.evm import Chains, Rpc
from toolkit.world.relay import Relay

__all__ = ["PROTOCOL", "Service", "registry_for"]

#: The one intent protocol the embedded service serves.
PROTOCOL: Final = "partner-escrow"


def registry_for(scenario: Scenario) -> Registry:
    """A chain registry holding exactly the scenario's chains, tokens and escrow contracts.

    The escrow ``open()`` builder reads contract addresses from a registry; building it from the
    scenario keeps a scenario's contract overrides and extra chains in force.

    >>> from toolkit.scenario import load_scenario
    >>> registry_for(load_scenario("single-pool")).escrow(8453)
    '0x000025c3226C00B2Cdc200005a1600509f4e00C0'
    """
    known = default_registry()
    chains = []
    contracts = {}
    for chain in scenario.chains:
        try:
            base = known.chain(chain.id)
            native, eip1559 = base.native_symbol, base.eip1559
        except LookupError:
            native, eip1559 = "ETH", True
        chains.append(RegisteredChain(chain.id, chain.name, f"eip155:{chain.id}", native, eip1559))
        contracts[chain.id] = Contracts(chain.escrow, chain.output_settler, chain.oracle)
    tokens = [RegisteredToken(t.chain, t.symbol, t.address, t.decimals) for t in scenario.tokens]
    return Registry(chains, tokens, contracts)


@dataclass(frozen=True)
class _Nonces:
    """Deterministic nonces: a per-scenario base plus a counter (never global randomness)."""

    base: int

    @classmethod
    def for_scenario(cls, scenario: Scenario, seed: int = 0) -> _Nonces:
        text = f"toolkit.server nonce base: {scenario.name}" + (f" seed {seed}" if seed else "")
        digest = hashlib.sha256(text.encode()).digest()
        # 64 bits of seed above a 64-bit counter: distinct per scenario, far below 2**256.
        return cls(int.from_bytes(digest[:8], "big") << 64)


class Service(OffsetClock):
    """One embedded service: the engine, the simulated world on the same engine (read by the
    ``/sim`` surface), the simulated chains behind JSON-RPC (``/rpc/{chainId}``) and the relay
    between them, the scenario's registry, the clock, and the event-stream bookkeeping.

    The service is the :class:`~toolkit.clock.OffsetClock` its chains' JSON-RPC runs on:
    ``offset`` (seconds) is added to ``clock``, the chains' development namespace
    (``evm_increaseTime``, ``evm_mine``, ``evm_revert``) moves it, so every timer of the
    service (reservations, the filler, the chains' blocks) moves with it.

    >>> from toolkit.scenario import load_scenario
    >>> from toolkit.clock import VirtualClock
    >>> service = Service(load_scenario("single-pool"), clock=VirtualClock(100.0))
    >>> service.now()
    100.0
    >>> service.next_nonce() + 1 == service.next_nonce()
    True
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        clock: Clock = WALL,
        heartbeat: float = 15.0,
        tick: float = 1.0,
        max_events: int = 100_000,
        seed: int = 0,
    ) -> None:
        if not isinstance(scenario, Scenario):
            raise TypeError("scenario: must be a toolkit.scenario.Scenario")
        super().__init__(clock)  # refuses what is not callable
        for name, value in (("heartbeat", heartbeat), ("tick", tick)):
            number(value, name, above=0)
        self.scenario = scenario
        # A bounded log: a long-running server must not grow without end. Streams further
        # behind than the log reaches get a fresh snapshot (see toolkit.server.events).
        self.engine = Engine(scenario, seed=seed, max_events=max_events)
        self.registry = registry_for(scenario)
        self.world = World(scenario, self.engine)
        self.heartbeat = float(heartbeat)
        self.tick = float(tick)
        self._nonces = _Nonces.for_scenario(scenario, seed)
        self._nonce_count = 0
        self._pools: dict[str, Pool] = {pool.id: pool for pool in scenario.pools}
        self._waiters: set[asyncio.Future[None]] = set()
        self._waiters_lock = threading.Lock()
        self._closed = False
        self._open_streams = 0
        self.chains = Chains.at_genesis(scenario, genesis=self.now())
        self.chains.connect_pools(self.pool_figures)
        self.relay = Relay(self.world, self.chains)
        self.relay.fund(self.now())
        #: Held by whatever reads or writes the state (see the module docstring).
        self.lock = FairLock()
        self.rpc = Rpc(self.chains, self, before=self.sync, lock=self.lock)

    # -- time and nonces ----------------------------------------------------------------------

    def now(self) -> float:
        """The clock's time plus the offset, never earlier than the engine's (a wall clock may
        step back, and ``evm_revert`` may restore a smaller offset)."""
        now = float(self.base()) + self.offset
        if not math.isfinite(now):
            raise ValueError("clock: returned a non-finite time")
        engine_clock = self.engine.clock
        return engine_clock if now < engine_clock else now

    def save(self) -> tuple[Any, ...]:
        """What ``evm_snapshot`` keeps beside the ledgers: the clock offset, the engine and the
        world (reservations, orders, the filler), the relay's progress and the nonce counter.
        An event stream opened before a revert keeps following the state it started on."""
        engine, world = copy.deepcopy((self.engine, self.world))  # one copy: shared references
        return (self.offset, engine, world, self.relay.save(), self._nonce_count)

    def restore(self, state: tuple[Any, ...]) -> None:
        """Go back to a :meth:`save`; the saved copies stay intact for a later revert."""
        offset, engine, world, relay, nonce_count = state
        self.engine, self.world = copy.deepcopy((engine, world))
        self.relay.restore(self.world, relay)
        self.offset, self._nonce_count = offset, nonce_count
        self.notify()

    def sync(self, now: float | None = None) -> None:
        """Bring the world up to the chains at ``now`` (default: the clock): escrow events
        reach the engine, the filler fills and settles what is due (:mod:`toolkit.world.relay`).
        """
        if self.relay.sync(self.now() if now is None else now):
            self.notify()

    def pool_figures(self, pool_id: str) -> PoolState:
        """Pool ``pool_id``'s figures now, from the engine (what the chains' pool contracts
        answer to ``eth_call``)."""
        return self.engine.pool(pool_id, self.now())

    def next_nonce(self) -> int:
        """The next order or borrow nonce of this app."""
        self._nonce_count += 1
        return self._nonces.base + self._nonce_count

    def pool_config(self, pool_id: str) -> Pool:
        """The scenario's description of a pool (chain, token, type, address)."""
        return self._pools[pool_id]

    # -- event streams ------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once :meth:`close_streams` was called: open streams end, new ones end at once."""
        return self._closed

    @property
    def open_streams(self) -> int:
        """How many event streams are open now."""
        return self._open_streams

    def stream_opened(self) -> None:
        """Count an event stream in (its generator calls this, and :meth:`stream_closed`)."""
        self._open_streams += 1

    def stream_closed(self) -> None:
        """Count an event stream out."""
        self._open_streams -= 1

    def notify(self) -> None:
        """Wake every stream waiting for a change (call after the engine logged events)."""
        with self._waiters_lock:
            waiters = list(self._waiters)
            self._waiters.clear()
        for waiter in waiters:
            _wake(waiter)

    def close_streams(self) -> None:
        """End every event stream (thread-safe): used at shutdown so that uvicorn can stop."""
        self._closed = True
        self.notify()

    async def wait_for_change(self, timeout: float) -> None:
        """Return on the next :meth:`notify`, on :meth:`close_streams`, or after ``timeout``."""
        if self._closed:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self._waiters_lock:
            self._waiters.add(waiter)
        try:
            if self._closed:
                return
            await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            pass
        finally:
            with self._waiters_lock:
                self._waiters.discard(waiter)


def _wake(waiter: asyncio.Future[None]) -> None:
    loop = waiter.get_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        if not waiter.done():
            waiter.set_result(None)
    elif not loop.is_closed():
        loop.call_soon_threadsafe(_settle, waiter)


def _settle(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
