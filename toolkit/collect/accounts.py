"""Credit accounts discovered from the chain: every borrower the credit hubs' and collateral
escrows' events name, read through ``eth_getLogs`` in block-range chunks.

The events are public on any chain: ``Deposited(user, token, amount)`` of each collateral escrow
(the protocol's ``escrowAddress``) and ``CreditDrawn(borrower, receiver, amount, fee)`` and
``OperatorSet(borrower, operator)`` of each credit hub. A range a node refuses is halved, as in
:class:`~toolkit.collect.ChainCollector`. A credit run records the block it scanned to per chain
(``discovered_to_block`` in its parameters); ``from_block`` starts a scan after it.

>>> from toolkit.client import EmbeddedService, chain_web3
>>> service = EmbeddedService("single-pool", env={})
>>> found = discover_accounts(chain_web3(8453, embedded=service), [], [])
>>> found.accounts, found.to_block >= 0
([], True)
>>> service.close()
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from web3.exceptions import Web3RPCError

from toolkit.arguments import whole
from toolkit.codecs.events import EVENTS

__all__ = ["DISCOVERY_EVENTS", "Discovery", "discover_accounts"]

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
) -> Discovery:
    """The accounts named by the hubs' and escrows' events in ``from_block``..``to_block``
    (default: the chain head), read in chunks of ``chunk`` blocks (halved on a refusal)."""
    head = int(w3.eth.block_number)
    end = head if to_block is None else whole(to_block, "to_block", minimum=0)
    if end > head:
        raise ValueError(f"to_block: {end} is beyond the chain head ({head})")
    start = whole(from_block, "from_block", minimum=0)
    size = whole(chunk, "chunk", minimum=1)
    addresses = [w3.to_checksum_address(a) for a in (*hubs, *escrows)]
    topics = [[EVENTS[key].topic0 for key in DISCOVERY_EVENTS]]
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
        except (ValueError, Web3RPCError):
            if size == 1:
                raise
            size = max(1, size // 2)
            continue
        for log in batch:
            logs += 1
            topic = log["topics"][1]
            word = topic.hex() if isinstance(topic, bytes | bytearray) else str(topic)
            found.add("0x" + word.removeprefix("0x")[-40:].lower())
        block = last + 1
    return Discovery(sorted(found), start, end, logs, requests)
