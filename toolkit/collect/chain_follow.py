"""Following a chain's head, reorg-safe: :class:`ChainFollower`.

Each poll reads the next range of blocks after the stored tip, up to the head (``chunk``
blocks at most, halved when the node refuses a range), with the logs of the chosen events, as
:class:`~toolkit.collect.ChainCollector` does, and the header of every block the node does not
call final yet, whose parent hash must be the stored hash of the block before it:

- the stored tip is checked first (its hash at the node, and that the head has not gone
  below it): a mismatch walks back over the stored headers to the highest one the node still
  has, and :meth:`~toolkit.store.Store.drop_orphaned` deletes every row of the blocks after it
  in one transaction (logs, decoded tables, blocks, pool events and snapshots, ranges), which
  the next polls read again from the new branch;
- a range is written only when it is consistent: consecutive headers link, every log names its
  block's hash, and rows already stored in those blocks (by an earlier run, or a flush a
  ``kill -9`` cut short) have the same hashes, or are deleted first;
- headers are written first in each flush and the range's ``chain_ranges`` record last, so a
  restart resumes after the last range recorded and rewrites nothing twice.

Finality: ``chain_blocks.finality`` is ``finalized``/``safe`` from the node's tags, or on a
node without them ``finalized`` once ``confirmations`` blocks deep; ``unsafe`` otherwise. Stored
blocks are promoted at every poll.

A new run starts after the last block an earlier chain run with the same events stored on the
chain, else at the head (``from_block`` overrides); a resumed run after its own last range.

>>> ChainFollower.kind
'chain'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import polars as pl
from web3 import Web3

from toolkit.arguments import whole
from toolkit.collect.chain import ChainCollector
from toolkit.collect.follow import RunFollower, log_event
from toolkit.collect.logs import block_row
from toolkit.collect.rpc import RpcFailure, hex_int, hex_text, range_too_large
from toolkit.errors import ChainError
from toolkit.store import Store, polars_schema

__all__ = ["DEFAULT_CONFIRMATIONS", "ChainFollower"]

#: Blocks deep a block is final on a node without ``finalized``/``safe`` tags.
DEFAULT_CONFIRMATIONS: Final = 12
_WALK_BATCH = 32  # headers fetched at a time while walking back to the fork
_MAX_WALK = 10_000  # a deeper reorg is refused rather than silently deleting a chain


class ChainFollower(RunFollower):
    """Follow ``chain``'s head through ``w3`` every ``poll_s`` seconds (module docstring)."""

    kind = "chain"

    def __init__(
        self,
        w3: Web3,
        store: Store,
        *,
        chain: int | None = None,
        from_block: int | None = None,
        events: Sequence[str] | None = None,
        chunk: int = 2000,
        confirmations: int = DEFAULT_CONFIRMATIONS,
        poll_s: float = 2.0,
        name: str | None = None,
        resume: str | None = None,
    ) -> None:
        collector = ChainCollector(
            w3, store, from_block=from_block or 0, chain=chain, events=events, chunk=chunk,
            progress=False,
        )  # fmt: skip
        self.start_given = from_block is not None
        self.confirmations = whole(confirmations, "confirmations", minimum=0)
        default = "chain" if chain is None else f"chain:{chain}"
        super().__init__(collector, every_s=poll_s, name=name or default, resume=resume)
        self.chain_collector = collector
        self._tip_time: int | None = None
        self.next_block = 0
        self.tip: tuple[int, str] | None = None  # the stored tip: number, hash
        # The range queued in the writer: first, last, its logs, its blocks' hashes.
        self._range: tuple[int, int, int, dict[int, str]] | None = None
        self._final = (-1, -1)  # the node's finalized and safe blocks at the last poll

    def __repr__(self) -> str:
        return f"ChainFollower(name={self.name!r}, target={self.status.target_url!r})"

    @property
    def chain(self) -> int:
        """The chain followed (the node's, checked at start)."""
        assert self.chain_collector.chain is not None
        return self.chain_collector.chain

    def _call(self, method: str, params: list[Any]) -> Any:
        return self.chain_collector._call(method, params)

    # -- the plan ------------------------------------------------------------------------

    def parameters(self) -> dict[str, Any]:
        return super().parameters() | {"confirmations": self.confirmations, "to_block": None}

    def begin(self, resumed: bool) -> None:
        if resumed:
            last = self._last_range("run_id = $run", {"run": self.run_id})
            self.next_block = self.chain_collector.from_block if last is None else last + 1
        else:
            self.next_block = self.chain_collector.from_block
        self.tip = self._stored_tip(self.next_block - 1)
        log_event("plan", follower=self.name, chain=self.chain, from_block=self.next_block)

    def restore(self, parameters: Mapping[str, Any]) -> None:
        collector = self.chain_collector
        collector.chain = int(parameters["chain"])
        collector.from_block = int(parameters["from_block"])
        collector.events = collector._events(parameters["events"])
        collector.chunk = collector.size = int(parameters.get("chunk") or collector.chunk)
        self.confirmations = int(parameters.get("confirmations", self.confirmations))
        collector._check_chain()

    def prepare(self) -> None:
        self.chain_collector._check_chain()
        if self.start_given:
            return
        earlier = self._last_range(
            "chain = $chain AND run_id IN (SELECT run_id FROM collection_runs WHERE kind = "
            "'chain' AND json_extract(parameters, '$.events') = $events::JSON)",
            {"chain": self.chain, "events": _json_list(self.chain_collector.events)},
        )
        head = hex_int(self._call("eth_blockNumber", []))
        self.chain_collector.from_block = head if earlier is None else earlier + 1

    def _last_range(self, where: str, params: Mapping[str, Any]) -> int | None:
        frame = self.store.query(
            f"SELECT max(to_block) AS b FROM chain_ranges WHERE {where}", params
        )
        value = frame["b"][0]
        return None if value is None else int(value)

    def _stored_tip(self, number: int) -> tuple[int, str] | None:
        hashes = self._stored_hashes(number, number)
        return (number, hashes[number]) if number in hashes else None

    def _stored_hashes(self, first: int, last: int) -> dict[int, str]:
        frame = self.store.query(
            "SELECT number, hash FROM chain_blocks WHERE chain = $c AND number BETWEEN $a AND $b",
            {"c": self.chain, "a": first, "b": last},
        )
        return dict(zip(frame["number"].to_list(), frame["hash"].to_list(), strict=True))

    # -- one poll ------------------------------------------------------------------------

    def step(self, now: float) -> bool:
        head = hex_int(self._call("eth_blockNumber", []))
        self._final = self._finality(head)
        self.status.head_block = head
        if self.tip is not None and self._tip_orphaned(head):
            self._walk_back(head)
        first = self.next_block
        if first > head:
            self._lag(head)
            return False
        last = self._read(first, min(head, first + self.chain_collector.size - 1))
        self._lag(head)
        return last is None or last < head

    def _finality(self, head: int) -> tuple[int, int]:
        """The node's finalized and safe block numbers, or ``head - confirmations`` for both
        on a node without the tags."""
        found = []
        for tag in ("finalized", "safe"):
            try:
                block = self._call("eth_getBlockByNumber", [tag, False])
            except RpcFailure:
                block = None
            found.append(None if block is None else hex_int(block["number"]))
        if found[0] is None:
            depth = head - self.confirmations
            return depth, depth
        return found[0], found[1] if found[1] is not None else found[0]

    def _tip_orphaned(self, head: int) -> bool:
        assert self.tip is not None
        number, stored = self.tip
        if number > head:
            return True
        block = self._call("eth_getBlockByNumber", [hex(number), False])
        return block is None or hex_text(block["hash"]) != stored

    def _walk_back(self, head: int) -> None:
        """Find the highest stored block the node still has, and drop every row after it."""
        assert self.tip is not None
        tip, tip_hash = self.tip
        top = min(tip, head)
        stored = self._stored_hashes(max(0, tip - _MAX_WALK), tip)
        candidates = sorted((n for n in stored if n <= top), reverse=True)
        fork = None
        for i in range(0, len(candidates), _WALK_BATCH):
            part = candidates[i : i + _WALK_BATCH]
            for n, header in zip(part, self._headers(part), strict=True):
                if hex_text(header["hash"]) == stored[n]:
                    fork = n + 1
                    break
            if fork is not None:
                break
        if fork is None:
            if tip - min(stored, default=tip) >= _MAX_WALK:
                raise ChainError(
                    f"chain {self.chain}: no stored block the node still has within "
                    f"{_MAX_WALK} blocks of the tip {tip}; refusing to delete further"
                )
            fork = min(stored, default=tip)
        if fork > tip:  # the tip is the node's after all (it answered another block before)
            return
        new_hash = hex_text(self._headers([fork])[0]["hash"]) if fork <= head else None
        deleted = self.store.drop_orphaned(
            self.chain, fork, old_hash=stored.get(fork, tip_hash), new_hash=new_hash,
            run_id=self.run_id,
        )  # fmt: skip
        log_event(
            "reorg", follower=self.name, chain=self.chain, fork_block=fork,
            depth=tip - fork + 1, rows_deleted=sum(deleted.values()),
            below_final=fork <= self._final[0],
        )  # fmt: skip
        self.status.reorgs += 1
        self.next_block = min(self.next_block, fork)
        self.tip = (fork - 1, stored[fork - 1]) if fork - 1 in stored else None

    def _headers(self, numbers: Sequence[int]) -> list[Mapping[str, Any]]:
        return self.chain_collector._blocks(list(numbers))

    def _read(self, first: int, last: int) -> int | None:
        """Read ``[first, last]`` (halving on a refusal) and queue its rows; the last block
        read, or None when the node changed under the read (the next poll reads it again)."""
        while True:
            try:
                logs = self.chain_collector._logs(first, last)
                break
            except RpcFailure as exc:
                if not range_too_large(exc) or last == first:
                    raise
                last = first + max(1, (last - first + 1) // 2) - 1
                self.chain_collector.size = last - first + 1
        finalized = self._final[0]
        wanted = {hex_int(log["blockNumber"]) for log in logs} | {last}
        wanted |= set(range(max(first, finalized + 1), last + 1))
        headers = {hex_int(h["number"]): h for h in self._headers(sorted(wanted))}
        if not self._consistent(first, last, headers, logs):
            return None
        self._queue(first, last, headers, logs)
        return last

    def _consistent(
        self,
        first: int,
        last: int,
        headers: Mapping[int, Mapping[str, Any]],
        logs: Sequence[Mapping[str, Any]],
    ) -> bool:
        hashes = {n: hex_text(h["hash"]) for n, h in headers.items()}
        for n, header in headers.items():
            parent = hex_text(header["parentHash"])
            before = hashes.get(n - 1) if n > first else self._tip_hash_before(n)
            if before is not None and parent != before:
                log_event("retry", follower=self.name, block=n, reason="parent hash changed")
                return False
        for log in logs:
            block_hash = log.get("blockHash")
            if block_hash is not None and hashes[hex_int(log["blockNumber"])] != hex_text(
                block_hash
            ):
                log_event("retry", follower=self.name, block=hex_int(log["blockNumber"]),
                          reason="log of another branch")  # fmt: skip
                return False
        return True

    def _tip_hash_before(self, number: int) -> str | None:
        """The stored tip's hash when it is the block before ``number``."""
        return self.tip[1] if self.tip is not None and self.tip[0] == number - 1 else None

    def before_flush(self) -> None:
        """Delete rows stored in the queued range's blocks under other hashes (another run's,
        or a flush a kill cut short) before writing it."""
        if self._range is None:
            return
        first, last, _, hashes = self._range
        frame = self.store.query(
            "SELECT number, hash FROM chain_blocks WHERE chain = $c AND number BETWEEN $a AND $b "
            "UNION SELECT DISTINCT block_number, block_hash FROM chain_logs WHERE chain = $c "
            "AND block_number BETWEEN $a AND $b AND block_hash IS NOT NULL",
            {"c": self.chain, "a": first, "b": last},
        )
        stale = [(n, h) for n, h in frame.iter_rows() if n in hashes and hashes[n] != h]
        if stale:
            number, old = min(stale)
            self.store.drop_orphaned(
                self.chain, number, old_hash=old, new_hash=hashes[number], run_id=self.run_id
            )
            self.status.reorgs += 1
            log_event("reorg", follower=self.name, chain=self.chain, fork_block=number,
                      reason="stored rows of another branch")  # fmt: skip

    def _queue(
        self,
        first: int,
        last: int,
        headers: Mapping[int, Mapping[str, Any]],
        logs: Sequence[Mapping[str, Any]],
    ) -> None:
        finalized, safe = self._final
        blocks = []
        for n in sorted(headers):
            row = block_row(self.chain, headers[n], self.run_id)
            row["finality"] = "finalized" if n <= finalized else "safe" if n <= safe else "unsafe"
            blocks.append(row)
        self.writer.add("chain_blocks", blocks)  # first: a cut flush leaves hashes to check
        for table, rows in self.chain_collector._tables(self.chain, logs, self.run_id).items():
            if rows:
                self.writer.add(table, rows)
        hashes = {n: hex_text(h["hash"]) for n, h in headers.items()}
        self._range = (first, last, len(logs), hashes)
        self.tip = (last, hex_text(headers[last]["hash"]))
        self.next_block = last + 1
        self.status.stored_block = last
        self._tip_time = hex_int(headers[last]["timestamp"])

    def after_flush(self) -> None:
        if self._range is not None:
            first, last, count, _ = self._range
            row = {"run_id": self.run_id, "chain": self.chain, "from_block": first,
                   "to_block": last, "logs": count}  # fmt: skip
            self.store.append(
                "chain_ranges", pl.DataFrame([row], schema=polars_schema("chain_ranges"))
            )
            self._range = None
        finalized, safe = self._final
        if finalized >= 0 or safe >= 0:
            self.store.mark_finality(self.chain, finalized=finalized, safe=safe)

    def _lag(self, head: int) -> None:
        """Lag in seconds: chain time between the head and the stored tip."""
        if self.tip is None:
            return
        self.status.stored_block = self.tip[0]
        if self.tip[0] >= head:
            self.status.lag_s = 0.0
            return
        block = self._call("eth_getBlockByNumber", [hex(head), False])
        if block is not None and self._tip_time is not None:
            self.status.lag_s = float(max(0, hex_int(block["timestamp"]) - self._tip_time))


def _json_list(values: Sequence[str]) -> str:
    return "[" + ",".join(f'"{v}"' for v in values) + "]"
