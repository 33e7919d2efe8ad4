"""Installed filters of one chain, as geth keeps them for ``eth_newFilter`` and
``eth_newBlockFilter`` (polled with ``eth_getFilterChanges``).

A filter remembers the last block it reported (``seen``, the latest block when it was
installed): a poll reports what the blocks after it hold, up to the latest block, and moves
``seen`` there, so each new block's logs (or hash) are reported once, and nothing mined before
the filter was installed is reported as a change (``eth_getFilterLogs`` reads the whole range).
Nothing is buffered between polls: a filter costs the same whether polled every block or never.

:class:`Criteria` is the address and topic part of a log query, with geth's semantics: an empty
or missing address list matches any address; a topic position that is None or an empty OR-list
matches anything; a log with fewer topics than positions given does not match.

Filters live in the ledger (:attr:`toolkit.world.evm.Ledger.filters`), so ``evm_snapshot`` and
``evm_revert`` take them along with the chain: after a revert, a filter installed after the
snapshot is gone (``filter not found``) and one installed before it reports again from where it
stood at the snapshot. Ids are never reused, not even across a revert (the serial is kept).

Geth uninstalls a filter nobody polled for five minutes of wall time; the simulated chain's time
jumps (``evm_increaseTime``) and has no wall time, so instead at most :data:`MAX_FILTERS` stay
installed per chain and installing one more uninstalls the one polled (or installed) longest ago.

>>> filters = Filters(8453)
>>> fid = filters.install(BlockFilter(seen=0))
>>> fid.startswith("0x"), filters.get(fid), filters.uninstall(fid), filters.uninstall(fid)
(True, BlockFilter(seen=0), True, False)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Protocol

from eth_utils import keccak

from toolkit.world.evm.records import Block, Log

__all__ = [
    "MAX_FILTERS",
    "BlockFilter",
    "Criteria",
    "Filter",
    "Filters",
    "LogFilter",
    "changes",
]

#: Installed filters kept per chain; the least recently polled goes first.
MAX_FILTERS: Final = 1024


class _Log(Protocol):
    @property
    def address(self) -> str: ...

    @property
    def topics(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class Criteria:
    """Which logs a query wants: ``addresses`` (None or empty: any) and ``topics`` by position
    (None: any; otherwise an OR-set of 32-byte topics, lowercase ``0x`` hex).

    >>> log = type("L", (), {"address": "0xaa", "topics": ("0x01", "0x02")})()
    >>> Criteria(frozenset(), (None, frozenset({"0x02", "0x03"}))).matches(log)
    True
    >>> Criteria(None, (None, None, None)).matches(log)  # more positions than topics
    False
    """

    addresses: frozenset[str] | None = None
    topics: tuple[frozenset[str] | None, ...] = ()

    def matches(self, log: _Log) -> bool:
        """True when ``log`` passes the address and topic rules."""
        if self.addresses and log.address not in self.addresses:
            return False
        topics = log.topics
        if len(self.topics) > len(topics):
            return False
        return all(wanted is None or topics[i] in wanted for i, wanted in enumerate(self.topics))


@dataclass(slots=True)
class LogFilter:
    """``eth_newFilter``: criteria and a block range; ``first``/``last`` None stand for
    ``latest`` (no bound for changes; the latest block for ``eth_getFilterLogs``). ``block`` is
    the block number of a ``blockHash`` filter (its changes are always empty: a mined block
    gets no new logs)."""

    criteria: Criteria
    first: int | None
    last: int | None
    block: int | None = None
    seen: int = 0


@dataclass(slots=True)
class BlockFilter:
    """``eth_newBlockFilter``: the hashes of the blocks after ``seen``."""

    seen: int


Filter = LogFilter | BlockFilter


class Filters:
    """The filters installed on one chain, by id (see the module docstring)."""

    def __init__(self, chain_id: int) -> None:
        self.chain_id = chain_id
        #: How many filters were ever installed (the next id's seed; never goes back).
        self.serial = 0
        self._installed: dict[str, Filter] = {}

    def __len__(self) -> int:
        return len(self._installed)

    def install(self, flt: Filter) -> str:
        """Install ``flt``; its id (``0x`` and up to 32 hex digits, as geth's)."""
        self.serial += 1
        digest = keccak(
            b"toolkit filter" + self.chain_id.to_bytes(8, "big") + self.serial.to_bytes(8, "big")
        )
        fid = "0x" + (digest[:16].hex().lstrip("0") or "0")
        while len(self._installed) >= MAX_FILTERS:
            del self._installed[next(iter(self._installed))]
        self._installed[fid] = flt
        return fid

    def get(self, fid: str) -> Filter | None:
        """The filter ``fid`` (now the most recently used), or None."""
        flt = self._installed.pop(fid, None)
        if flt is not None:
            self._installed[fid] = flt
        return flt

    def uninstall(self, fid: str) -> bool:
        """Remove ``fid``; False when no such filter is installed."""
        return self._installed.pop(fid, None) is not None


def changes(
    flt: Filter,
    latest: int,
    blocks: Callable[[int, int], Iterable[Block]],
    block_hash: Callable[[int], str],
    limit: int | None = None,
) -> list[Log] | list[str]:
    """What ``flt`` has not reported yet when ``latest`` is the chain's latest block: the logs
    (a log filter) or the block hashes (a block filter) of the blocks since its last poll,
    ``blocks(first, last)`` being the stored blocks of a range. With ``limit``, the oldest
    blocks' changes up to about that many items (whole blocks, at least one): the rest are the
    next poll's. Moves the filter's ``seen`` to the last block reported."""
    start = flt.seen + 1
    if isinstance(flt, BlockFilter):
        last = latest if limit is None else min(latest, start + limit - 1)
        flt.seen = max(flt.seen, last)
        return [block_hash(n) for n in range(start, last + 1)]
    if flt.block is not None:
        flt.seen = max(flt.seen, latest)
        return []
    first = start if flt.first is None else max(start, flt.first)
    last = latest if flt.last is None else min(latest, flt.last)
    found: list[Log] = []
    reached = latest
    for block in blocks(first, last):
        matched = [log for r in block.receipts for log in r.logs if flt.criteria.matches(log)]
        if limit is not None and found and len(found) + len(matched) > limit:
            reached = block.number - 1
            break
        found.extend(matched)
    flt.seen = max(flt.seen, reached)
    return found
