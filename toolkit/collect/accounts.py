"""Credit accounts discovered from the chain: every borrower the credit hubs' and collateral
escrows' events name, read through ``eth_getLogs`` in block-range chunks.

The events are public on any chain: ``Deposited(user, token, amount)`` of each collateral escrow
(the protocol's ``escrowAddress``) and ``CreditDrawn(borrower, receiver, amount, fee)`` and
``OperatorSet(borrower, operator)`` of each credit hub. A range a node refuses is halved, as in
:class:`~toolkit.collect.ChainCollector`.

A credit run scanning for accounts (:func:`discover_into`) stores each chunk's logs in
``chain_logs`` and then the chunk in ``chain_ranges`` under its run id, as a chain run does, so
the scan is resumable by range: an interrupted run continues after its last stored range, and
a later run on the same target starts after the last block any earlier credit run scanned
(:func:`scanned_to`), adding the accounts of the new blocks to those already found
(:func:`stored_accounts`).

>>> from toolkit.client import EmbeddedService, chain_web3
>>> service = EmbeddedService("single-pool", env={})
>>> found = discover_accounts(chain_web3(8453, embedded=service), [], [])
>>> found.accounts, found.to_block >= 0
([], True)
>>> service.close()
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import polars as pl
from web3.exceptions import Web3RPCError

from toolkit.arguments import whole
from toolkit.codecs.events import EVENTS
from toolkit.collect.logs import log_rows
from toolkit.collect.rpc import RpcFailure, range_too_large
from toolkit.collect.writer import BatchWriter
from toolkit.store import Store, polars_schema

__all__ = [
    "DISCOVERY_EVENTS",
    "Discovery",
    "discover_accounts",
    "discover_into",
    "scanned_to",
    "stored_accounts",
]

#: event key → the indexed argument naming the account (its topic position).
DISCOVERY_EVENTS: Final = {
    "collateralEscrow.Deposited": 1,
    "creditHub.CreditDrawn": 1,
    "creditHub.OperatorSet": 1,
}


@dataclass(frozen=True)
class Discovery:
    """Accounts found (lowercase, sorted), the blocks scanned, logs and requests read."""

    accounts: list[str]
    from_block: int
    to_block: int
    logs: int
    requests: int


def discover_accounts(
    w3: Any,
    hubs: Sequence[str],
    escrows: Sequence[str],
    *,
    from_block: int = 0,
    to_block: int | None = None,
    chunk: int = 5000,
    on_range: Callable[[int, int, list[Any]], None] | None = None,
    events: Mapping[str, int] = DISCOVERY_EVENTS,
) -> Discovery:
    """The accounts named by the hubs' and escrows' ``events`` (event key → the topic naming
    the account; :data:`DISCOVERY_EVENTS` by default) in ``from_block``..``to_block``
    (default: the chain head), read in chunks of ``chunk`` blocks (halved when the node
    refuses a range or an answer's size, in any provider's words:
    :func:`toolkit.collect.rpc.range_too_large`). ``on_range(first, last, logs)`` is called
    after each chunk read (to store it). A ``from_block`` past the head (nothing new since the
    last scan) scans nothing."""
    head = int(w3.eth.block_number)
    end = head if to_block is None else whole(to_block, "to_block", minimum=0)
    if end > head:
        raise ValueError(f"to_block: {end} is beyond the chain head ({head})")
    start = whole(from_block, "from_block", minimum=0)
    size = whole(chunk, "chunk", minimum=1)
    addresses = [w3.to_checksum_address(a) for a in (*hubs, *escrows)]
    position = {EVENTS[key].topic0: place for key, place in events.items()}
    topics = [list(position)]
    found: set[str] = set()
    logs = requests = 0
    block = start
    while addresses and block <= end:
        last = min(end, block + size - 1)
        requests += 1
        try:
            batch = w3.eth.get_logs(
                {"fromBlock": block, "toBlock": last, "address": addresses, "topics": topics}
            )
        except Web3RPCError as exc:
            if size == 1 or not range_too_large(_failure(exc)):
                raise
            size = max(1, size // 2)
            continue
        if on_range is not None:
            on_range(block, last, list(batch))
        for log in batch:
            logs += 1
            words = [t.hex() if isinstance(t, bytes | bytearray) else str(t) for t in log["topics"]]
            word = words[position.get("0x" + words[0].removeprefix("0x"), 1)]
            found.add("0x" + word.removeprefix("0x")[-40:].lower())
        block = last + 1
    return Discovery(sorted(found), start, end, logs, requests)


def _failure(exc: Web3RPCError) -> RpcFailure:
    """web3's error of a refused request as the collectors read one (code, message, data)."""
    error = exc.rpc_response.get("error") if isinstance(exc.rpc_response, Mapping) else None
    if not isinstance(error, Mapping):
        return RpcFailure("eth_getLogs", None, str(exc))
    code = error.get("code")
    return RpcFailure(
        "eth_getLogs",
        code if isinstance(code, int) else None,
        str(error.get("message")),
        error.get("data"),
    )


def _topics() -> list[str]:
    return [EVENTS[key].topic0 for key in DISCOVERY_EVENTS]


def scanned_to(store: Store, chain: int, target_url: str, run_id: str | None = None) -> int | None:
    """The last block of ``chain`` a credit run on ``target_url`` scanned for accounts (only
    run ``run_id``'s when given); None when none did.

    >>> scanned_to(Store(":memory:"), 8453, "http://h")
    """
    frame = store.query(
        "SELECT max(r.to_block) AS b FROM chain_ranges r JOIN collection_runs c USING (run_id) "
        "WHERE c.kind = 'credit' AND r.chain = $chain AND c.target_url = $target "
        "AND ($run IS NULL OR r.run_id = $run)",
        {"chain": chain, "target": target_url, "run": run_id},
    )
    value = frame["b"][0]
    return None if value is None else int(value)


def stored_accounts(store: Store, target_url: str) -> list[str]:
    """Every account the discovery logs stored by credit runs on ``target_url`` name.

    >>> stored_accounts(Store(":memory:"), "http://h")
    []
    """
    frame = store.query(
        "SELECT DISTINCT '0x' || right(l.topic1, 40) AS account FROM chain_logs l "
        "JOIN collection_runs c USING (run_id) WHERE c.kind = 'credit' "
        "AND c.target_url = $target AND l.topic1 IS NOT NULL AND list_contains($topics, l.topic0)",
        {"target": target_url, "topics": _topics()},
    )
    return sorted(str(a).lower() for a in frame["account"].to_list())


def discover_into(
    store: Store,
    writer: BatchWriter,
    w3: Any,
    *,
    chain: int,
    hubs: Sequence[str],
    escrows: Sequence[str],
    run_id: str,
    from_block: int,
    chunk: int = 5000,
) -> Discovery:
    """:func:`discover_accounts` from ``from_block``, storing each chunk's logs in
    ``chain_logs`` and then the chunk itself in ``chain_ranges`` (under ``run_id``), so that an
    interruption loses at most the chunk being read."""

    def store_range(first: int, last: int, logs: list[Any]) -> None:
        writer.add("chain_logs", log_rows(chain, logs, run_id)["chain_logs"])
        writer.flush()  # the logs first, then the record that the range is stored
        row = {"run_id": run_id, "chain": chain, "from_block": first, "to_block": last,
               "logs": len(logs)}  # fmt: skip
        store.append("chain_ranges", pl.DataFrame([row], schema=polars_schema("chain_ranges")))

    return discover_accounts(
        w3, hubs, escrows, from_block=from_block, chunk=chunk, on_range=store_range
    )
