"""The followers of the collectors that can run for ever (besides the chain's,
:mod:`toolkit.collect.chain_follow`), each a :class:`~toolkit.collect.follow.RunFollower`:

- :class:`RoundFollower`: each poll is one round of a collector that works in rounds (the RFQ,
  borrow and swap sweeps: every grid point once; the credit snapshot, :class:`CreditFollower`:
  the protocol and every account once). A resumed run finishes its last round first.
- :class:`PoolFollower`: each poll scans the factories' logs of the new blocks for new pools
  and reads every known pool at the head (snapshot ``<run_id>:<block>``). A snapshot read at a
  block the chain has since replaced is deleted and read again at that height.
- :class:`LiquidityFollower`: the event stream, read by a background thread (it blocks between
  events); each poll writes what arrived since the last one.

>>> RoundFollower.__mro__[1].__name__
'RunFollower'
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Protocol

from web3 import Web3

from toolkit.client import StreamEvent
from toolkit.collect.credit import CreditCollector
from toolkit.collect.follow import RunFollower, log_event
from toolkit.collect.pools import PoolCollector
from toolkit.collect.rows import event_row
from toolkit.collect.rpc import hex_int, hex_text
from toolkit.collect.run import BaseCollector
from toolkit.collect.stream import LiquidityStream
from toolkit.collect.writer import BatchWriter
from toolkit.progress import progress_bar
from toolkit.store import Store

__all__ = [
    "DEFAULT_EVERY_S",
    "POLL_BUDGET_S",
    "RANGES_A_POLL",
    "CreditFollower",
    "LiquidityFollower",
    "PoolFollower",
    "RoundCollector",
    "RoundFollower",
    "follower_for",
]

#: Seconds between two polls of each kind when none is given: a sweep round every ten minutes,
#: the credit book every minute, pools every five, the event stream written every second.
DEFAULT_EVERY_S: Mapping[str, float] = MappingProxyType(
    {"rfq": 600.0, "borrow": 600.0, "swap": 600.0, "credit": 60.0, "pools": 300.0,
     "liquidity": 1.0, "chain": 2.0}
)  # fmt: skip


class RoundCollector(Protocol):
    """A collector that works in rounds of parts (a sweep's grid points, a credit round's
    protocol read and account batches)."""

    def next_round(self, run_id: str) -> tuple[int, set[int]]: ...

    def round_size(self) -> int: ...

    def visit_part(self, run_id: str, round_no: int, index: int, writer: BatchWriter) -> Any: ...


#: Ranges of the factories' logs a pool follower's poll reads at most while it catches up.
RANGES_A_POLL = 5

#: Seconds of parts one poll visits at most: a poll stays short, so a signal stops the loop
#: within seconds and the other followers of a watch keep their cadence.
POLL_BUDGET_S = 2.0


class RoundFollower(RunFollower):
    """One round of ``collector`` (an RFQ, borrow or swap sweep) every ``every_s`` seconds,
    visited in polls of at most :data:`POLL_BUDGET_S` seconds of parts each."""

    def __init__(
        self,
        collector: BaseCollector,
        *,
        every_s: float,
        name: str | None = None,
        resume: str | None = None,
    ) -> None:
        if not hasattr(collector, "visit_part"):
            raise TypeError(f"{type(collector).__name__} does not collect in rounds")
        super().__init__(collector, every_s=every_s, name=name, resume=resume)
        self.rounds: RoundCollector = collector  # type: ignore[assignment]
        self.round_no, self.skip = 0, set[int]()

    def prepare(self) -> None:
        # A followed sweep has no end: it plans its grid, not a number of rounds.
        plan = getattr(self.collector, "plan_grid", None)
        (plan or self.collector.prepare)()

    def begin(self, resumed: bool) -> None:
        if resumed:
            self.round_no, self.skip = self.rounds.next_round(self.run_id)

    def step(self, now: float) -> bool:
        started = time.monotonic()
        todo = [i for i in range(self.rounds.round_size()) if i not in self.skip]
        for index in todo:
            self.rounds.visit_part(self.run_id, self.round_no, index, self.writer)
            self.skip.add(index)
            if index != todo[-1] and time.monotonic() - started >= POLL_BUDGET_S:
                return True  # the rest of the round at the next poll, at once
        self.round_no, self.skip = self.round_no + 1, set()
        return False


class CreditFollower(RoundFollower):
    """The credit surface every ``every_s`` seconds: accounts discovered once at the start
    (``all_known``), then one round a poll; collateral read at a block a reorg replaced is read
    again first (the last ten rounds are checked)."""

    collector: CreditCollector

    def begin(self, resumed: bool) -> None:
        super().begin(resumed)
        if self.round_no == 0:
            self.collector.discover(self.run_id, self.writer, resumed)

    def step(self, now: float) -> bool:
        self._reread_orphaned()
        return super().step(now)

    def _reread_orphaned(self, rounds: int = 10) -> None:
        credit, store = self.collector, self.store
        frame = store.query(
            "SELECT DISTINCT round, hub_chain, block_number, block_hash FROM credit_collateral "
            "WHERE run_id = $run AND block_number IS NOT NULL AND round > "
            "(SELECT max(round) FROM credit_collateral WHERE run_id = $run) - $n",
            {"run": self.run_id, "n": rounds},
        )
        for round_no, chain, number, stored in frame.iter_rows():
            w3 = credit.mix.web3(chain)
            if w3 is None or _block_hash(w3, number) == stored:
                continue
            store.delete_rows(
                "credit_collateral", {"run_id": self.run_id, "round": round_no, "hub_chain": chain}
            )
            accounts = store.query(
                "SELECT DISTINCT account FROM credit_accounts WHERE run_id = $run AND round = $r",
                {"run": self.run_id, "r": round_no},
            )["account"].to_list()
            held = credit.mix.holdings(sorted(accounts), chains={chain})
            place = credit.place(self.run_id, round_no)
            self.writer.add(
                "credit_collateral", [place | r for rows in held.values() for r in rows]
            )
            self.status.reorgs += 1
            log_event("reread", follower=self.name, table="credit_collateral", round=round_no,
                      chain=chain, block=number)  # fmt: skip


def _block_hash(w3: Web3, number: int) -> str | None:
    answer = w3.provider.make_request("eth_getBlockByNumber", [hex(number), False])  # type: ignore[arg-type]
    block = answer.get("result") if isinstance(answer, dict) else None
    return None if block is None else hex_text(block["hash"])


class PoolFollower(RunFollower):
    """The pools among ``tokens`` on ``w3``'s chain, found and read at the head every
    ``every_s`` seconds (module docstring); ``options`` as :class:`PoolCollector` takes them."""

    collector: PoolCollector

    def __init__(
        self,
        w3: Web3,
        store: Store,
        *,
        every_s: float = 300.0,
        name: str | None = None,
        resume: str | None = None,
        **options: Any,
    ) -> None:
        collector = PoolCollector(w3, store, progress=False, **options)
        chain = options.get("chain")
        default = "pools" if chain is None else f"pools:{chain}"
        super().__init__(collector, every_s=every_s, name=name or default, resume=resume)
        self.scanned = -1

    def begin(self, resumed: bool) -> None:
        frame = self.store.query(
            "SELECT max(to_block) AS b FROM chain_ranges WHERE run_id = $run", {"run": self.run_id}
        )
        last = frame["b"][0]
        self.scanned = self.collector.from_block - 1 if last is None else int(last)

    def step(self, now: float) -> bool:
        pools = self.collector
        head = hex_int(pools._call("eth_blockNumber", []))
        self.status.head_block = head
        if head > self.scanned:
            # A first scan from the factories' deployment is long: ranges a poll at most, so
            # a signal still stops the loop within seconds.
            last = min(head, self.scanned + pools.chunk * RANGES_A_POLL)
            pools.from_block, pools.to_block = self.scanned + 1, last
            bar = progress_bar(total=None, desc=self.name, unit="block", enabled=False)
            pools.collect_ranges(self.run_id, self.writer, bar)
            self.scanned = last
            if last < head:
                return True
        self._reread_orphaned(head)
        snapshot_id = f"{self.run_id}:{head}"
        if not self._snapshot_stored(snapshot_id):
            pools.snapshot_at(snapshot_id, head, self.writer)
        self.status.stored_block = head
        self.status.lag_s = 0.0
        return False

    def _snapshot_stored(self, snapshot_id: str) -> bool:
        frame = self.store.query(
            "SELECT count(*) AS n FROM amm_pool_snapshots WHERE snapshot_id = $id",
            {"id": snapshot_id},
        )
        return bool(frame["n"][0])

    def _reread_orphaned(self, head: int, last: int = 10) -> None:
        """Read again, at the same height, the last snapshots read at a replaced block."""
        frame = self.store.query(
            "SELECT DISTINCT snapshot_id, block_number, block_hash FROM amm_pool_snapshots "
            "WHERE starts_with(snapshot_id, $prefix) AND block_hash IS NOT NULL "
            "ORDER BY block_number DESC LIMIT $n",
            {"prefix": f"{self.run_id}:", "n": last},
        )
        for snapshot_id, number, stored in frame.iter_rows():
            if _block_hash(self.collector.w3, number) == stored:
                continue
            for table in ("amm_pool_ticks", "amm_pool_snapshots"):
                self.store.delete_rows(table, {"snapshot_id": snapshot_id})
            if number <= head:
                self.collector.snapshot_at(snapshot_id, number, self.writer)
            self.status.reorgs += 1
            log_event("reread", follower=self.name, table="amm_pool_snapshots", block=number)


class LiquidityFollower(RunFollower):
    """The liquidity event stream, written every ``every_s`` seconds (module docstring)."""

    collector: LiquidityStream

    def __init__(
        self,
        stream: LiquidityStream,
        *,
        every_s: float = 1.0,
        name: str | None = None,
        resume: str | None = None,
    ) -> None:
        super().__init__(stream, every_s=every_s, name=name, resume=resume)
        self._events: queue.Queue[StreamEvent | BaseException] = queue.Queue()
        self._stopping = threading.Event()
        self._reader: threading.Thread | None = None

    def begin(self, resumed: bool) -> None:
        self._start_reader()

    def _start_reader(self) -> None:
        last = self.store.last_event_id(self.collector.source)
        self._reader = threading.Thread(
            target=self._read, args=(last,), name=f"{self.name}-stream", daemon=True
        )
        self._reader.start()

    def _read(self, last: int | None) -> None:
        """The stream's events into the queue until stopped (its error, if it ends on one)."""
        stream = self.collector
        events = stream.client.liquidity_events(stream.protocol, last_event_id=last)
        try:
            for event in events:
                self._events.put(event)
                if self._stopping.is_set():
                    break
        except BaseException as exc:  # handed to the polling thread, which decides
            self._events.put(exc)
        finally:
            events.close()

    def step(self, now: float) -> bool:
        if self._reader is not None and not self._reader.is_alive() and self._events.empty():
            self._start_reader()  # the stream ended (its error was raised by a poll): reconnect
        while True:
            try:
                item = self._events.get_nowait()
            except queue.Empty:
                return False
            if isinstance(item, BaseException):
                raise item
            stream = self.collector
            if item.snapshot:
                stream.snapshot(self.run_id, item, stream.clock(), self.writer)
            else:
                row = event_row(stream.source, self.run_id, item, stream.clock())
                self.writer.add("liquidity_events", [row])

    def stop(self, state: str) -> None:
        self._stopping.set()
        super().stop(state)


def follower_for(
    collector: BaseCollector,
    *,
    every_s: float | None = None,
    name: str | None = None,
    resume: str | None = None,
) -> RunFollower:
    """The follower of a service collector: a credit snapshot, the event stream, or a sweep
    (RFQ, borrow, swap) in rounds; ``every_s`` defaults to :data:`DEFAULT_EVERY_S` of its kind
    (a sweep's own ``interval_s`` when it was given one).

    >>> from toolkit.collect import LiquidityStream
    >>> follower_for(LiquidityStream(client, Store(":memory:"), progress=False)).every_s
    1.0
    """
    if every_s is None:
        given = getattr(collector, "_given", ())
        interval = getattr(collector, "interval_s", None) if "interval" in given else None
        every_s = interval or DEFAULT_EVERY_S[collector.kind]
    if isinstance(collector, CreditCollector):
        return CreditFollower(collector, every_s=every_s, name=name, resume=resume)
    if isinstance(collector, LiquidityStream):
        return LiquidityFollower(collector, every_s=every_s, name=name, resume=resume)
    return RoundFollower(collector, every_s=every_s, name=name, resume=resume)
