"""The partner-intents flow on the simulated chains: the world learns of orders from the escrow's
``Open`` events, and the service's actors act by transactions and read their receipts.

:class:`Relay` is called with the time (:meth:`Relay.sync`, run before every JSON-RPC request
and after one that moved the clock). Each call, in this order:

1. mines what is due on every chain and reads the new blocks' logs: an escrow ``Open`` is
   decoded into the world's :class:`~toolkit.world.order.EscrowOrder` by the same
   :func:`~toolkit.world.escrow.escrow_order` the calldata path uses and deposited with
   :meth:`World.deposit` (the reservation was re-keyed to the orderId by the transaction
   endpoint), and the filler tracks it; an escrow ``Refunded`` is :meth:`World.refund`; an
   output settler's ``OutputFilled`` goes to the attestation messenger, an input oracle's
   ``OutputProven`` to the filler; remote collateral events go to the collateral relay; a
   borrower's token ``Transfer`` to the filler on its loan's repayment chain is that loan's
   repayment (:class:`~toolkit.world.lending.LoanMirror`: the engine settles the loan);
2. carries collateral and sends the auto top-ups due (:class:`CollateralRelay`,
   :class:`AutoTopUps`);
3. reads the filler's receipts (:class:`~toolkit.world.filler.Filler`): a mined fill is a fill,
   a reverted one is undone in the world and the engine (:meth:`World.unfill`) and retried
   within its fillDeadline; a mined ``finalise`` is the settlement (:meth:`World.settle`);
4. sends the attestations due (:class:`~toolkit.world.messenger.AttestationMessenger`: a fill
   is proven on its origin ``windows.settlement_delay_s`` after its block);
5. delivers the rebalancing transfers the engine landed
   (:class:`~toolkit.world.bridging.TransferMirror`), before any fill of this pass;
6. fills what is due (the engine's fill when the transaction is sent) and finalises what the
   origin's input oracle has proven; reads the loans' receipts and sends the loan transfers
   that waited for a delivery (a loan is sent by :meth:`Relay.lend` when the signature
   endpoint authorizes it);
7. sends the out transaction of every transfer the engine sent meanwhile.

The engine stays the authority on pools; the chains hold what it books. :meth:`Relay.fund`
mints each pool's balance to the filler on its chain at the start (and approves the output
settlers and the bridges without limit); from then on fills spend it, settlements pay the
inputs to the filler on the origin chain, transfers move it between chains, and loans move
it to their borrowers and back on the repayment chain, each as a transaction.
:meth:`Relay.reconcile` checks that the filler's holdings per (chain, token) equal the
engine's (:mod:`toolkit.world.reconcile`). Orders deposited without a chain (the backtests'
fast path) are left to :meth:`World.advance`; the relay drives only the orders it saw opened.

``evm_revert`` restores the relay's progress (:meth:`save`/:meth:`restore`) together with the
world and the chains; a chain found behind the blocks already read is rescanned from its new
head.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from typing import Any, Final

from toolkit.codecs import abi
from toolkit.codecs.escrow import SELECTOR, decode_open
from toolkit.codecs.events import EVENTS
from toolkit.engine import Loan
from toolkit.world.bridging import TransferMirror
from toolkit.world.collateral import CollateralRelay
from toolkit.world.escrow import escrow_order
from toolkit.world.evm import ERC20, Chains, Ledger, Log
from toolkit.world.evm.accounts import NATIVE_FUNDING
from toolkit.world.evm.bridge import BRIDGE
from toolkit.world.filler import Filler
from toolkit.world.lending import LoanMirror
from toolkit.world.messenger import AttestationMessenger
from toolkit.world.order import WorldError
from toolkit.world.reconcile import Mismatch, compare
from toolkit.world.sender import Step
from toolkit.world.topup import AutoTopUps
from toolkit.world.world import World

__all__ = ["Relay"]

log = logging.getLogger(__name__)

_OPEN: Final = EVENTS["escrow.Open"].topic0
_REFUNDED: Final = EVENTS["escrow.Refunded"].topic0
_FINALISED: Final = EVENTS["escrow.Finalised"].topic0
_PROVEN: Final = EVENTS["inputOracle.OutputProven"].topic0


@dataclass
class Relay:
    """Watches ``chains`` for the flow's events and drives ``world``'s filler, the attestation
    messenger and the bridges' transactions (see the module docstring)."""

    world: World
    chains: Chains
    steps: list[Step] = field(default_factory=list)
    _seen: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        scenario = self.chains.scenario
        self.filler = Filler(self.chains)
        self.messenger = AttestationMessenger(self.chains)
        self.mirror = TransferMirror(self.chains)
        self.loans = LoanMirror(self.chains)
        self._escrows = {c.id: c.escrow.lower() for c in scenario.chains}
        self._oracles = {c.id: c.oracle.lower() for c in scenario.chains}
        self._confirmations = {c.id: c.confirmation_s for c in scenario.chains}
        self._fill_seconds = {c.id: c.fill_s for c in scenario.chains}
        self.collateral = CollateralRelay(self.chains)
        self.topups = AutoTopUps(self.chains)

    def save(self) -> tuple[Any, ...]:
        """This relay's progress (blocks seen, steps, the filler's orders, the messenger's
        queue, the transfers mirrored, the loans, the collateral relay's queue, the top-up
        records), for a snapshot."""
        return copy.deepcopy(
            (
                self._seen,
                self.steps,
                self.filler.save(),
                self.messenger.save(),
                self.mirror.save(),
                self.loans.save(),
                self.collateral.save(),
                self.topups.save(),
            )
        )

    def restore(self, world: World, state: tuple[Any, ...]) -> None:
        """Go back to saved progress, driving ``world`` (the restored one) from now on."""
        self.world = world
        saved = copy.deepcopy(state)
        self._seen, self.steps, filled, queued, mirrored, loans, collateral, topups = saved
        self.filler.orders, self.filler.payloads = filled
        self.messenger.queue, self.messenger.origins = queued
        self.mirror.restore(mirrored)
        self.loans.restore(loans)
        self.collateral.restore(collateral)
        self.topups.restore(topups)

    def fund(self, now: float) -> None:
        """Give the filler gas money and each pool's balance in its token on its chain, and
        approve every output settler and bridge for every token without limit."""
        scenario = self.chains.scenario
        filler = self.filler.address
        for chain in scenario.chains:
            ledger = self.chains.ledger(chain.id)
            run = ledger.direct(now)
            ledger.state.balances[filler] = NATIVE_FUNDING
            spenders = (chain.output_settler.lower(), BRIDGE)
            for contract in ledger.state.contracts.values():
                if isinstance(contract, ERC20):
                    for spender in spenders:
                        contract.allowances[(filler, spender)] = 2**256 - 1
            for pool in scenario.pools:
                if pool.chain != chain.id:
                    continue
                token = scenario.token(chain.id, pool.token).address.lower()
                held = ledger.contract(token)
                if isinstance(held, ERC20):
                    held.mint(run, filler, pool.balance)

    def sync(self, now: float) -> list[Step]:
        """Read new blocks, then act on what is due at ``now`` (see the module docstring); the
        steps taken."""
        done: list[Step] = []
        for chain_id, ledger in self.chains.ledgers.items():
            done += self._read(chain_id, ledger, now)
        self.collateral.run(now)
        self.topups.run(now)
        world = self.world
        engine = world.engine
        done += self.filler.receipts(world, now)
        done += self.messenger.run(now)
        done += self.mirror.deliver(engine, now)
        held = self.mirror.held()
        done += self.filler.run(world, now, held)
        done += self.loans.run(now, held)
        done += self.mirror.send(engine, now)
        self.steps += done
        return done

    def lend(self, loan: Loan, borrower: str, repayment_chain: int, now: float) -> list[Step]:
        """The engine authorized ``loan`` to ``borrower``, repaid on ``repayment_chain``: its
        transfer on the pool's chain (:meth:`LoanMirror.lend`); the steps taken.

        The transfers go as in :meth:`sync`: the deliveries due first (the engine may have
        landed a transfer since the last sync, and the loan may spend it), then the out
        transactions of the transfers the authorization made the policy send (an HTTP request
        runs no sync: left for the next one, a transfer could land unseen by the mirror)."""
        engine = self.world.engine
        done = self.mirror.deliver(engine, now)
        done += self.loans.lend(loan, borrower, repayment_chain, now, self.mirror.held())
        done += self.mirror.send(engine, now)
        self.steps += done
        return done

    def reconcile(self, now: float) -> list[Mismatch]:
        """Sync to ``now``, then compare the filler's balance of every scenario token on every
        chain with the engine's ``on_chain`` figure, accounting for the service's transactions
        booked and not mined (:mod:`toolkit.world.reconcile`); empty when the books agree.

        >>> from toolkit.engine import Engine
        >>> from toolkit.scenario import load_scenario
        >>> from toolkit.world.evm import Chains
        >>> s = load_scenario("single-pool")
        >>> relay = Relay(World(s, Engine(s)), Chains(s, genesis=0.0))
        >>> relay.fund(0.0)
        >>> relay.reconcile(0.0)
        []
        """
        self.sync(now)
        scenario = self.chains.scenario
        figures = {(h.chain, h.symbol): h.on_chain for h in self.world.engine.inventory(now)}
        balances: dict[tuple[int, str], int] = {}
        for chain_id, symbol in figures:
            ledger = self.chains.ledger(chain_id)
            ledger.mine_due(now)
            token = ledger.contract(scenario.token(chain_id, symbol).address.lower())
            if isinstance(token, ERC20):
                balances[(chain_id, symbol)] = token.balances.get(self.filler.address, 0)
        unmined = self.filler.unmined_fills()
        outs, ins = self.mirror.unmined()
        for key, amount in outs.items():
            unmined[key] = unmined.get(key, 0) + amount
        for key, amount in ins.items():
            unmined[key] = unmined.get(key, 0) - amount
        for key, amount in self.loans.unmined().items():
            unmined[key] = unmined.get(key, 0) + amount
        return compare(figures, balances, unmined)

    # -- events ---------------------------------------------------------------------------------

    def _read(self, chain_id: int, ledger: Ledger, now: float) -> list[Step]:
        """Act on the logs of ``chain_id``'s blocks mined since the last pass."""
        done: list[Step] = []
        latest = ledger.block_number(now)
        first = self._seen.get(chain_id, 0) + 1
        if first > latest + 1:
            first = latest + 1  # reverted to a snapshot: carry on from the new head
        escrow, oracle = self._escrows[chain_id], self._oracles[chain_id]
        for entry in ledger.logs(first, latest):
            if self.collateral.watches(chain_id, entry.address):
                self.collateral.observe(chain_id, entry, ledger.block_timestamp(entry.block_number))
            elif self.messenger.watches(chain_id, entry.address):
                self.messenger.observe(chain_id, entry, ledger.block_timestamp(entry.block_number))
            elif entry.address == escrow and entry.topics:
                done += self._escrow_event(chain_id, ledger, entry, now)
            elif self.loans.watches(chain_id, entry):
                done += self.loans.observe(self.world.engine, chain_id, entry, now)
            elif entry.address == oracle and entry.topics and entry.topics[0] == _PROVEN:
                words = entry.data[2:]  # chainid, remoteIdentifier, application, payloadHash
                self.filler.proven(int(words[:64], 16), "0x" + words[128:192], "0x" + words[192:])
        self._seen[chain_id] = latest
        return done

    def _escrow_event(self, chain_id: int, ledger: Ledger, entry: Log, now: float) -> list[Step]:
        topic = entry.topics[0]
        if topic == _OPEN:
            return self._opened(chain_id, ledger, entry.data, entry.tx_hash, now)
        key = abi.hexstr(bytes.fromhex(entry.topics[1][2:])) if len(entry.topics) > 1 else ""
        if topic == _REFUNDED:
            return self._refunded(chain_id, key, entry.tx_hash, now)
        if topic == _FINALISED:
            self.messenger.closed(key)
        return []

    def _opened(
        self, chain_id: int, ledger: Ledger, data: str, tx_hash: str, now: float
    ) -> list[Step]:
        order = decode_open(SELECTOR + data[2:])
        found = ledger.transaction(tx_hash, now)
        sender = found[0].sender if found is not None else order.user.lower()
        try:
            escrowed = escrow_order(self.chains.scenario, chain_id, order)
            key = self.world.deposit(escrowed, now, sender=sender)
        except WorldError as exc:
            log.warning("escrow Open on chain %s not taken by the world: %s", chain_id, exc)
            return [Step("rejected", "", chain_id, tx_hash)]
        self.messenger.opened(chain_id, key)
        terms = escrowed.terms
        due = now + self._confirmations[chain_id] + self._fill_seconds.get(terms.dst_chain, 0)
        self.filler.track(key, order, chain_id, due)
        log.info("order %s opened on chain %s (tx %s); fill due at %s", key, chain_id, tx_hash, due)
        return [Step("opened", key, chain_id, tx_hash)]

    def _refunded(self, chain_id: int, key: str, tx_hash: str, now: float) -> list[Step]:
        self.filler.forget(key)
        self.messenger.closed(key)
        try:
            self.world.refund(key, now)
        except WorldError as exc:
            log.warning("escrow Refunded %s not taken by the world: %s", key, exc)
        log.info("order %s refunded on chain %s (tx %s)", key, chain_id, tx_hash)
        return [Step("refunded", key, chain_id, tx_hash)]
