"""The attestation messenger: fills proven on their origin chain after a stated delay.

An off-chain actor, as Polymer's or Wormhole's relayers are: it reads the ``OutputFilled``
events of every scenario chain's output settler and, once the delay has passed since the
fill's block, sends the event to the input oracle of the order's origin chain
(``receiveMessage``, :mod:`toolkit.world.evm.input_oracle`) from its own account
(:data:`~toolkit.world.evm.input_oracle.ATTESTER`). Its transactions are ledger transactions
like any other (pooled, mined in the origin's next block, with receipts and the oracle's
``OutputProven`` log); a reverted one is sent again one delay later.

**The delay** is the scenario's ``windows.settlement_delay_s``: the time from a fill's block
until its attestation is sent to the origin (it is on chain from the origin's next block). One
setting for every route, as the backtests' settlement delay is one setting: the world's fast
path settles that long after a fill, and the chains then agree with it (the finalise follows
the proof within a block or two). A per-route figure (Polymer's proofs wait for the
destination's block to reach the origin's view of it, seconds on the OP Stack, longer from
Ethereum) would need a scenario key of its own.

The messenger learns each order's origin from the escrows' ``Open`` events (:meth:`opened`):
an ``OutputFilled`` event does not say which chain its order came from. Fills of orders no
scenario escrow opened are not attested (logged). An ``OutputFilled`` exists only in a mined,
successful fill: a reverted fill emits nothing, so it is never attested.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Final

from toolkit.codecs.events import EVENTS
from toolkit.codecs.functions import encode_call
from toolkit.world.evm import Chains, Log
from toolkit.world.evm.input_oracle import ATTESTER
from toolkit.world.sender import Step, send

__all__ = ["AttestationMessenger"]

log = logging.getLogger(__name__)

_FILLED: Final = EVENTS["outputSettler.OutputFilled"].topic0
#: The gas limit of an attestation (above what ``receiveMessage`` uses).
ATTEST_GAS: Final = 200_000
_LABEL: Final = b"toolkit attestation tx"


@dataclass
class _Fill:
    """An ``OutputFilled`` to carry: when, where from and to, and the event itself."""

    due: float
    origin: int
    chain_id: int
    emitter: str
    topics: tuple[str, ...]
    data: str
    order_id: str
    tx: str = ""


@dataclass
class AttestationMessenger:
    """Carries fills to their origin's input oracle (see the module docstring).

    >>> from toolkit.scenario import load_scenario
    >>> from toolkit.world.evm import Chains
    >>> s = load_scenario("single-pool")
    >>> messenger = AttestationMessenger(Chains(s, genesis=0.0))
    >>> settler = s.chain(8453).output_settler.lower()
    >>> messenger.delay_s == s.windows.settlement_delay_s, messenger.watches(8453, settler)
    (True, True)
    """

    chains: Chains
    queue: list[_Fill] = field(default_factory=list)
    origins: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        scenario = self.chains.scenario
        self.delay_s = scenario.windows.settlement_delay_s
        self._settlers = {c.id: c.output_settler.lower() for c in scenario.chains}
        self._oracles = {c.id: c.oracle.lower() for c in scenario.chains}

    def save(self) -> Any:
        """The fills queued or in flight and the orders' origins (copied by the relay)."""
        return (self.queue, self.origins)

    def watches(self, chain_id: int, address: str) -> bool:
        """Whether a log of ``address`` on ``chain_id`` is one the messenger reads."""
        return self._settlers.get(chain_id) == address

    def opened(self, origin: int, order_id: str) -> None:
        """An escrow on ``origin`` opened ``order_id``."""
        self.origins[order_id] = origin

    def closed(self, order_id: str) -> None:
        """``order_id`` was finalised or refunded: nothing of it is left to attest."""
        self.origins.pop(order_id, None)

    def observe(self, chain_id: int, entry: Log, timestamp: int) -> None:
        """Queue an ``OutputFilled`` mined at ``timestamp`` for its origin's oracle."""
        if len(entry.topics) != 2 or entry.topics[0] != _FILLED:
            return
        order_id = entry.topics[1]
        origin = self.origins.get(order_id)
        if origin is None:
            log.info(
                "fill of %s on chain %s: no escrow opened it; not attested", order_id, chain_id
            )
            return
        due = timestamp + self.delay_s
        self.queue.append(
            _Fill(due, origin, chain_id, entry.address, entry.topics, entry.data, order_id)
        )

    def run(self, now: float) -> list[Step]:
        """Read the attestations' receipts, then send every attestation due at ``now``."""
        done: list[Step] = []
        for item in list(self.queue):
            if item.tx:
                done += self._receipt(item, now)
            elif item.due <= now:
                done += self._send(item, now)
        return done

    def _send(self, item: _Fill, now: float) -> list[Step]:
        data = encode_call(
            "inputOracle.receiveMessage",
            item.chain_id,
            item.emitter,
            [bytes.fromhex(t[2:]) for t in item.topics],
            bytes.fromhex(item.data[2:]),
        )
        ledger = self.chains.ledger(item.origin)
        oracle = self._oracles[item.origin]
        item.tx = send(ledger, ATTESTER, oracle, data, now, gas=ATTEST_GAS, label=_LABEL)
        log.info("fill of %s attested to chain %s (tx %s)", item.order_id, item.origin, item.tx)
        return []

    def _receipt(self, item: _Fill, now: float) -> list[Step]:
        found = self.chains.ledger(item.origin).transaction(item.tx, now)
        if found is not None and found[1] is None:
            return []  # still in the pool
        tx, item.tx = item.tx, ""
        if found is not None and found[1] is not None and found[1].status == 1:
            self.queue.remove(item)
            return [Step("attested", item.order_id, item.origin, tx)]
        item.due = now + self.delay_s  # a refused attestation is not sent at every pass
        log.warning("attestation of %s reverted (tx %s); sent again at %s", item.order_id, tx,
                    item.due)  # fmt: skip
        return [Step("attestation_reverted", item.order_id, item.origin, tx)]
