"""Collateral on other chains reaching the credit hub: the relay's credit part.

The credit hub (:class:`~toolkit.world.evm.CreditHub`) keeps its books on its own chain;
collateral locked in a :class:`~toolkit.world.evm.RemoteEscrow` (Ethereum by default) counts
only once the hub has heard of it, which is once the source chain's confirmations
(``confirmation_s`` of the scenario's chain, as the partner-intents flow waits them) have
passed since the block that emitted the event. :class:`CollateralRelay` is fed the new logs by
:class:`~toolkit.world.relay.Relay` (so it runs before every JSON-RPC method and after time
moves) and acts, in the order the events become due:

- a remote ``Deposited`` is booked on the hub (:meth:`CreditHub.lock`);
- a remote ``WithdrawRequested`` is booked off the hub when the borrower has it booked and the
  position stays out of liquidation without it (:meth:`CreditHub.unlock_remote`), and then paid
  out on the source chain; otherwise the escrow hands it back to the locked collateral;
- a hub-escrow ``Seized`` of remote collateral (a liquidation on the hub), once the hub chain's
  confirmations have passed, is paid out to the liquidator on the collateral's chain.

The relay acts as the protocol's controller, directly on the contracts' state (no transaction
of its own); each action is a :class:`~toolkit.world.relay.Step`-like :class:`Move`.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from typing import Any, Final

from toolkit.codecs.events import EVENTS, decode_log
from toolkit.scenario.credit import CreditSettings
from toolkit.world.evm import Chains, CreditHub, Log, RemoteEscrow

__all__ = ["CollateralRelay", "Move"]

log = logging.getLogger(__name__)

_DEPOSITED: Final = EVENTS["collateralEscrow.Deposited"].topic0
_REQUESTED: Final = EVENTS["collateralEscrow.WithdrawRequested"].topic0
_SEIZED: Final = EVENTS["collateralEscrow.Seized"].topic0


@dataclass(frozen=True, slots=True)
class Move:
    """One collateral event the relay acted on: ``kind`` (``locked``, ``unlocked``,
    ``refused``, ``seized``), the chain it came from, the user, token and amount, and the
    transaction that emitted it."""

    kind: str
    chain_id: int
    user: str
    token: str
    amount: int
    tx_hash: str


@dataclass(frozen=True, slots=True)
class _Due:
    due: int
    order: int
    kind: str
    chain_id: int
    user: str
    token: str
    amount: int
    to: str
    tx_hash: str


@dataclass
class CollateralRelay:
    """Carries remote collateral events to the credit hub (see the module docstring)."""

    chains: Chains
    moves: list[Move] = field(default_factory=list)
    _queue: list[_Due] = field(default_factory=list)
    _count: int = 0

    def __post_init__(self) -> None:
        scenario = self.chains.scenario
        self.settings: CreditSettings | None = scenario.credit
        self._confirmations = {c.id: c.confirmation_s for c in scenario.chains}
        s = self.settings
        self._escrow = "" if s is None else s.escrow.lower()
        self._remote = set() if s is None else set(s.remote_chains)
        self._hub_chain = 0 if s is None or not self._remote else s.chain

    def save(self) -> tuple[Any, ...]:
        """This relay's progress (moves made, events queued), for a snapshot."""
        return copy.deepcopy((self.moves, self._queue, self._count))

    def restore(self, state: tuple[Any, ...]) -> None:
        """Go back to a :meth:`save`."""
        self.moves, self._queue, self._count = copy.deepcopy(state)

    def watches(self, chain_id: int, address: str) -> bool:
        """Whether a log of ``address`` on ``chain_id`` is one this relay reads."""
        if chain_id not in self._remote and chain_id != self._hub_chain:
            return False
        return address == self._escrow

    def observe(self, chain_id: int, entry: Log, timestamp: int) -> None:
        """Queue a watched log mined at ``timestamp``, due after the chain's confirmations."""
        assert self.settings is not None
        topic = entry.topics[0] if entry.topics else ""
        if chain_id == self._hub_chain:
            if topic != _SEIZED:
                return
            kind = "seized"
        elif topic == _DEPOSITED:
            kind = "locked"
        elif topic == _REQUESTED:
            kind = "unlocked"
        else:
            return
        args = decode_log(entry.topics, entry.data).args
        token = str(args["token"]).lower()
        c = self.settings.collateral_at(token)
        if c is None or c.chain is None:
            return  # hub-chain collateral: the hub's own escrow booked it
        self._count += 1
        self._queue.append(
            _Due(
                timestamp + self._confirmations.get(chain_id, 0),
                self._count,
                kind,
                c.chain,
                str(args["user"]).lower(),
                token,
                int(args["amount"]),
                str(args.get("to", "")).lower(),
                entry.tx_hash,
            )
        )

    def run(self, now: float) -> list[Move]:
        """Act on every queued event due at ``now``, oldest first; the moves made."""
        due = sorted((d for d in self._queue if d.due <= now), key=lambda d: (d.due, d.order))
        if not due:
            return []
        assert self.settings is not None
        s = self.settings
        self._queue = [d for d in self._queue if d.due > now]
        hub_ledger = self.chains.ledger(s.chain)
        hub = hub_ledger.contract(s.hub.lower())
        assert isinstance(hub, CreditHub)
        done: list[Move] = []
        for d in due:
            ledger = self.chains.ledger(d.chain_id)
            escrow = ledger.contract(self._escrow)
            assert isinstance(escrow, RemoteEscrow)
            kind = d.kind
            if kind == "locked":
                hub.lock(hub_ledger.direct(now), d.user, d.token, d.amount)
            elif kind == "unlocked":
                paid = hub.unlock_remote(hub_ledger.direct(now), d.user, d.token, d.amount)
                escrow.settle_withdrawal(ledger.direct(now), d.user, d.token, d.amount, paid=paid)
                kind = "unlocked" if paid else "refused"
            else:
                escrow.pay_seized(ledger.direct(now), d.user, d.token, d.to, d.amount)
            log.info("%s %s of %s for %s (tx %s)", kind, d.amount, d.token, d.user, d.tx_hash)
            done.append(Move(kind, d.chain_id, d.user, d.token, d.amount, d.tx_hash))
        self.moves += done
        return done
