"""The engine's rebalancing transfers as pairs of transactions on the simulated chains.

The engine decides every transfer and its timing (:mod:`toolkit.engine.transfers`: it debits
the source when it sends, credits the destination at ``arrives_at``); :class:`TransferMirror`
does the same on the chains' bridges (:mod:`toolkit.world.evm.bridge`):

- **out**: each transfer the engine sent since the last pass (``Engine.transfers_since``) is
  the filler's ``send(token, amount, dstChain, filler)`` on the source chain's bridge, sent in
  the sync that saw it (the tokens are burnt when it is mined): ``transfer_sent``;
- **in**: once the engine applied the arrival (``Engine.arrivals_since``, or the transfer
  already ``arrived`` when its out transaction was sent: one clock move past both) and the out
  transaction is mined, the bridge relayer's ``deliver(srcChain, id, token, amount, fee,
  filler)`` on the destination mints ``amount − fee`` to the filler and the fee to the bridge's
  fee account: ``transfer_delivered`` once mined. The relay sends deliveries before any fill
  of the same sync, so the inventory that made an output deliverable is on chain before the
  fill that spends it (in an earlier block, or earlier in the same one); while a delivery waits
  for its out transaction, fills of that chain and token wait too (:meth:`held`).

An out transaction that reverted (the filler lacked the tokens: the books disagreed) is
``transfer_failed`` and never delivered; reconciliation then shows the difference on both
chains. :meth:`unmined` gives what reconciliation accounts for: the outs sent and not mined
(the engine already debited them) and the arrivals not yet minted (the engine already credited
them).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Final

from toolkit.codecs.events import EVENTS
from toolkit.codecs.functions import encode_call
from toolkit.engine import Engine, Transfer
from toolkit.world.evm import Chains, Receipt
from toolkit.world.evm.bridge import BRIDGE, BRIDGE_RELAYER
from toolkit.world.sender import Step, send

__all__ = ["TransferMirror"]

log = logging.getLogger(__name__)

_SENT: Final = EVENTS["bridge.TransferSent"].topic0
#: The gas limit of a bridge transaction (above what send and deliver use).
BRIDGE_GAS: Final = 300_000
PENDING, MINED, FAILED = "pending", "mined", "failed"


@dataclass
class _Leg:
    """One transfer's pair: the out transaction, the bridge's id of its burn, the arrival and
    the in transaction."""

    transfer: Transfer
    out_tx: str
    out_state: str = PENDING
    bridge_id: int = 0
    arrived: bool = False
    in_tx: str = ""


@dataclass
class TransferMirror:
    """Mirrors the engine's transfers on ``chains`` (see the module docstring).

    >>> from toolkit.engine import Engine
    >>> from toolkit.scenario import load_scenario
    >>> from toolkit.world.evm import Chains
    >>> s = load_scenario("single-pool")
    >>> mirror = TransferMirror(Chains(s, genesis=0.0))
    >>> mirror.send(Engine(s), 0.0), mirror.held(), mirror.unmined()
    ([], set(), ({}, {}))
    """

    chains: Chains
    legs: dict[int, _Leg] = field(default_factory=dict)
    sent_upto: int = 0
    arrivals_seen: int = 0

    def __post_init__(self) -> None:
        self.filler = self.chains.scenario.filler.lower()

    def save(self) -> Any:
        """The legs under way and the engine positions read (copied by the relay)."""
        return (self.legs, self.sent_upto, self.arrivals_seen)

    def restore(self, state: Any) -> None:
        """Go back to a :meth:`save`."""
        self.legs, self.sent_upto, self.arrivals_seen = state

    def _token(self, chain_id: int, symbol: str) -> str:
        return self.chains.scenario.token(chain_id, symbol).address.lower()

    def send(self, engine: Engine, now: float) -> list[Step]:
        """Send the out transaction of every transfer the engine sent since the last pass."""
        done: list[Step] = []
        for transfer in engine.transfers_since(self.sent_upto):
            data = encode_call(
                "bridge.send",
                self._token(transfer.src_chain, transfer.token),
                transfer.amount,
                transfer.dst_chain,
                self.filler,
            )
            ledger = self.chains.ledger(transfer.src_chain)
            tx = send(ledger, self.filler, BRIDGE, data, now, gas=BRIDGE_GAS,
                      label=b"toolkit filler tx")  # fmt: skip
            # Already landed when a single clock move passed both its sending and its arrival
            # (a periodic tick): :meth:`deliver` saw the arrival before this leg existed.
            self.legs[transfer.id] = _Leg(transfer, tx, arrived=transfer.arrived)
            self.sent_upto = transfer.id
            log.info("transfer %s: %s %s sent from chain %s to %s (tx %s)", transfer.id,
                     transfer.amount, transfer.token, transfer.src_chain, transfer.dst_chain,
                     tx)  # fmt: skip
            done.append(Step("transfer_sent", f"tr_{transfer.id}", transfer.src_chain, tx))
        return done

    def deliver(self, engine: Engine, now: float) -> list[Step]:
        """Read the legs' receipts, note the engine's arrivals, and send the deliveries due."""
        engine.advance(now)
        for transfer in engine.arrivals_since(self.arrivals_seen):
            self.arrivals_seen += 1
            leg = self.legs.get(transfer.id)
            if leg is not None:
                leg.arrived = True
        done: list[Step] = []
        for number, leg in list(self.legs.items()):
            if leg.out_state == PENDING:
                done += self._out_mined(leg, now)
            if leg.in_tx:
                done += self._in_mined(number, leg, now)
            elif leg.arrived and leg.out_state == MINED:
                self._deliver(leg, now)
        return done

    def _receipt(self, chain_id: int, tx: str, now: float) -> Receipt | bool | None:
        """The receipt of ``tx``; True while it is pooled; None when it was dropped."""
        found = self.chains.ledger(chain_id).transaction(tx, now)
        if found is None:
            return None
        return True if found[1] is None else found[1]

    def _out_mined(self, leg: _Leg, now: float) -> list[Step]:
        t = leg.transfer
        receipt = self._receipt(t.src_chain, leg.out_tx, now)
        if receipt is True:
            return []
        if isinstance(receipt, Receipt) and receipt.status == 1:
            (burnt,) = [x for x in receipt.logs if x.address == BRIDGE and x.topics[0] == _SENT]
            leg.out_state, leg.bridge_id = MINED, int(burnt.topics[1], 16)
            return []
        leg.out_state = FAILED
        log.error("transfer %s: its send reverted on chain %s (tx %s); not delivered", t.id,
                  t.src_chain, leg.out_tx)  # fmt: skip
        return [Step("transfer_failed", f"tr_{t.id}", t.src_chain, leg.out_tx)]

    def _deliver(self, leg: _Leg, now: float) -> None:
        t = leg.transfer
        data = encode_call(
            "bridge.deliver",
            t.src_chain,
            leg.bridge_id,
            self._token(t.dst_chain, t.token),
            t.amount,
            t.fee,
            self.filler,
        )
        ledger = self.chains.ledger(t.dst_chain)
        leg.in_tx = send(ledger, BRIDGE_RELAYER, BRIDGE, data, now, gas=BRIDGE_GAS,
                         label=b"toolkit bridge relayer tx")  # fmt: skip

    def _in_mined(self, number: int, leg: _Leg, now: float) -> list[Step]:
        t = leg.transfer
        receipt = self._receipt(t.dst_chain, leg.in_tx, now)
        if receipt is True:
            return []
        tx, leg.in_tx = leg.in_tx, ""
        if isinstance(receipt, Receipt) and receipt.status == 1:
            del self.legs[number]
            log.info("transfer %s delivered on chain %s (tx %s)", t.id, t.dst_chain, tx)
            return [Step("transfer_delivered", f"tr_{t.id}", t.dst_chain, tx)]
        log.error("transfer %s: its delivery reverted (tx %s); sent again", t.id, tx)
        return []

    def held(self) -> set[tuple[int, str]]:
        """(chain, token symbol) whose arrived transfers wait for their out transaction."""
        return {
            (leg.transfer.dst_chain, leg.transfer.token)
            for leg in self.legs.values()
            if leg.arrived and not leg.in_tx and leg.out_state != FAILED
        }

    def unmined(self) -> tuple[dict[tuple[int, str], int], dict[tuple[int, str], int]]:
        """``(outs, ins)`` by (chain, token symbol): amounts of out transactions sent and not
        mined, and what arrived transfers deliver that is not minted yet."""
        outs: dict[tuple[int, str], int] = {}
        ins: dict[tuple[int, str], int] = {}
        for leg in self.legs.values():
            t = leg.transfer
            if leg.out_state == PENDING:
                outs[(t.src_chain, t.token)] = outs.get((t.src_chain, t.token), 0) + t.amount
            if leg.arrived and leg.out_state != FAILED:
                ins[(t.dst_chain, t.token)] = ins.get((t.dst_chain, t.token), 0) + t.received
        return outs, ins
