"""The partner-intents flow on the simulated chains: the world learns of orders from the escrow's
``Open`` events, and the service's filler acts by transactions.

:class:`Relay` is called with the time (:meth:`Relay.sync`, run before every JSON-RPC request
and by the simulation's reads). Each call:

1. mines what is due on every chain and reads the new blocks' logs: an escrow ``Open`` is
   decoded into the world's :class:`~toolkit.world.order.EscrowOrder` by the same
   :func:`~toolkit.world.escrow.escrow_order` the calldata path uses and deposited with
   :meth:`World.deposit` (the reservation was re-keyed to the orderId by the transaction
   endpoint); an escrow ``Refunded`` is :meth:`World.refund`;
2. fills every chain order whose quote eta has passed (source confirmations plus destination
   fill time after its deposit): :meth:`World.fill` (the engine's fill: the reservation is
   consumed, the pool pays out), then the filler's ``fill`` transaction on the destination's
   output settler; an order the engine refuses now is retried at the next sync until its
   ``fillDeadline``;
3. settles every chain order whose settlement delay has passed since its fill:
   :meth:`World.settle` (the pool is repaid), then the filler's ``finalise`` on the origin
   escrow, which releases the inputs to the filler.

The engine stays the authority on pools: the filler's token balance on each chain mirrors it
only at the start (:meth:`Relay.fund`: each pool's balance minted to the filler, who approves
the output settler without limit); fills spend it, settlements pay the inputs to the filler on
the origin chain, and nothing rebalances it. The filler's transactions are unsigned (the
development namespace's kind) with fixed gas and twice the base fee. Orders deposited without a
chain (the backtests' fast path) are left to :meth:`World.advance`; the relay drives only the
orders it saw opened. Every step is logged on ``toolkit.world.relay``.

The same pass carries collateral locked on other chains to the credit hub once the source
chain's confirmations have passed (:class:`~toolkit.world.collateral.CollateralRelay`, fed the
credit escrows' logs here), and sends the auto top-ups that are due
(:class:`~toolkit.world.topup.AutoTopUps`: the operator's caller draws for a card whose balance
fell below its threshold).

The service calls :meth:`Relay.sync` before every JSON-RPC method and again after one that moved
the clock (``evm_increaseTime``, ``evm_setNextBlockTimestamp``, ``evm_mine``), so moving time
over JSON-RPC is what makes the filler fill and settle. ``evm_revert`` restores the relay's
progress (:meth:`save`/:meth:`restore`) together with the world and the chains; a chain found
behind the blocks already read is rescanned from its new head.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from typing import Any, Final

from eth_utils import keccak

from toolkit.codecs import abi
from toolkit.codecs.escrow import SELECTOR, StandardOrder, decode_open, to_bytes32
from toolkit.codecs.events import EVENTS
from toolkit.codecs.functions import encode_call
from toolkit.engine import CapacityExhausted, FillRejected
from toolkit.world.collateral import CollateralRelay
from toolkit.world.escrow import escrow_order
from toolkit.world.evm import ERC20, Chains, Ledger, Rejected, Tx
from toolkit.world.evm.accounts import NATIVE_FUNDING
from toolkit.world.order import OrderStatus, WorldError
from toolkit.world.topup import AutoTopUps
from toolkit.world.world import World

__all__ = ["Relay", "Step"]

log = logging.getLogger(__name__)

_OPEN: Final = EVENTS["escrow.Open"].topic0
_REFUNDED: Final = EVENTS["escrow.Refunded"].topic0
#: The gas limit of the filler's transactions (above what fill and finalise use).
FILLER_GAS: Final = 500_000


@dataclass(frozen=True, slots=True)
class Step:
    """One thing the relay did: ``kind`` (opened, refunded, filled, settled, rejected), the
    order, the chain and the transaction hash (the event's, or the filler's)."""

    kind: str
    order_id: str
    chain_id: int
    tx_hash: str


@dataclass
class _Tracked:
    order: StandardOrder
    chain_id: int
    due: float
    filled: bool = False
    settle_due: float = 0.0
    fill_timestamp: int = 0


@dataclass
class Relay:
    """Watches ``chains`` for escrow events and drives ``world``'s filler over transactions."""

    world: World
    chains: Chains
    steps: list[Step] = field(default_factory=list)
    _seen: dict[int, int] = field(default_factory=dict)
    _orders: dict[str, _Tracked] = field(default_factory=dict)

    def save(self) -> tuple[Any, ...]:
        """This relay's progress (blocks seen, orders tracked, steps, the collateral relay's
        queue, the auto top-up records), for a snapshot."""
        return copy.deepcopy(
            (self._seen, self._orders, self.steps, self.collateral.save(), self.topups.save())
        )

    def restore(self, world: World, state: tuple[Any, ...]) -> None:
        """Go back to saved progress, driving ``world`` (the restored one) from now on."""
        self.world = world
        self._seen, self._orders, self.steps, collateral, topups = copy.deepcopy(state)
        self.collateral.restore(collateral)
        self.topups.restore(topups)

    def __post_init__(self) -> None:
        scenario = self.chains.scenario
        self.filler = scenario.filler.lower()
        self._escrows = {c.id: c.escrow.lower() for c in scenario.chains}
        self._confirmations = {c.id: c.confirmation_s for c in scenario.chains}
        self._fill_seconds = {c.id: c.fill_s for c in scenario.chains}
        self._settle_delay = scenario.windows.settlement_delay_s
        self.collateral = CollateralRelay(self.chains)
        self.topups = AutoTopUps(self.chains)

    def fund(self, now: float) -> None:
        """Give the filler gas money and each pool's balance in its token on its chain, and
        approve every output settler for every token without limit."""
        scenario = self.chains.scenario
        for chain in scenario.chains:
            ledger = self.chains.ledger(chain.id)
            run = ledger.direct(now)
            ledger.state.balances[self.filler] = NATIVE_FUNDING
            settler = chain.output_settler.lower()
            for contract in ledger.state.contracts.values():
                if isinstance(contract, ERC20):
                    contract.allowances[(self.filler, settler)] = 2**256 - 1
            for pool in scenario.pools:
                if pool.chain != chain.id:
                    continue
                token = scenario.token(chain.id, pool.token).address.lower()
                held = ledger.contract(token)
                if isinstance(held, ERC20):
                    held.mint(run, self.filler, pool.balance)

    def sync(self, now: float) -> list[Step]:
        """Read new blocks, then fill and settle what is due at ``now``; the steps taken."""
        done: list[Step] = []
        for chain_id, ledger in self.chains.ledgers.items():
            latest = ledger.block_number(now)
            first = self._seen.get(chain_id, 0) + 1
            if first > latest + 1:
                first = latest + 1  # reverted to a snapshot: carry on from the new head
            for entry in ledger.logs(first, latest):
                if self.collateral.watches(chain_id, entry.address):
                    stamp = ledger.block_timestamp(entry.block_number)
                    self.collateral.observe(chain_id, entry, stamp)
                    continue
                if entry.address != self._escrows[chain_id] or not entry.topics:
                    continue
                if entry.topics[0] == _OPEN:
                    done += self._opened(chain_id, ledger, entry.data, entry.tx_hash, now)
                elif entry.topics[0] == _REFUNDED:
                    done += self._refunded(chain_id, entry.topics[1], entry.tx_hash, now)
            self._seen[chain_id] = latest
        self.collateral.run(now)
        self.topups.run(now)
        for key, tracked in list(self._orders.items()):
            if not tracked.filled and tracked.due <= now:
                done += self._fill(key, tracked, now)
            elif tracked.filled and tracked.settle_due <= now:
                done += self._settle(key, tracked, now)
        self.steps += done
        return done

    # -- events ---------------------------------------------------------------------------------

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
        terms = escrowed.terms
        due = now + self._confirmations[chain_id] + self._fill_seconds.get(terms.dst_chain, 0)
        self._orders[key] = _Tracked(order, chain_id, due)
        log.info("order %s opened on chain %s (tx %s); fill due at %s", key, chain_id, tx_hash, due)
        return [Step("opened", key, chain_id, tx_hash)]

    def _refunded(self, chain_id: int, topic: str, tx_hash: str, now: float) -> list[Step]:
        key = abi.hexstr(bytes.fromhex(topic[2:]))
        self._orders.pop(key, None)
        try:
            self.world.refund(key, now)
        except WorldError as exc:
            log.warning("escrow Refunded %s not taken by the world: %s", key, exc)
        log.info("order %s refunded on chain %s (tx %s)", key, chain_id, tx_hash)
        return [Step("refunded", key, chain_id, tx_hash)]

    # -- the filler -----------------------------------------------------------------------------

    def _fill(self, key: str, tracked: _Tracked, now: float) -> list[Step]:
        order = tracked.order
        if self.world.order(key).status is not OrderStatus.DEPOSITED:
            del self._orders[key]  # filled or refunded some other way (the World API)
            return []
        if now > order.fill_deadline:
            del self._orders[key]
            log.info("order %s missed its fillDeadline; refundable after expires", key)
            return []
        try:
            self.world.fill(key, now)
        except (CapacityExhausted, FillRejected, WorldError) as exc:
            log.info("order %s not filled at %s (%s); retrying", key, now, exc)
            return []
        output = order.outputs[0]
        ledger = self.chains.ledger(output.chain_id)
        data = encode_call(
            "outputSettler.fill",
            key,
            output.as_abi(),
            order.fill_deadline,
            bytes.fromhex(to_bytes32(self.filler)[2:]),
        )
        tx_hash = self._send(ledger, abi.hexstr(bytes.fromhex(output.settler[2:])[12:]), data, now)
        tracked.filled = True
        tracked.settle_due = now + self._settle_delay
        tracked.fill_timestamp = ledger.block_timestamp(ledger.pending()[1])
        log.info("order %s filled on chain %s (tx %s)", key, output.chain_id, tx_hash)
        return [Step("filled", key, output.chain_id, tx_hash)]

    def _settle(self, key: str, tracked: _Tracked, now: float) -> list[Step]:
        try:
            self.world.settle(key, now)
        except WorldError as exc:
            log.warning("order %s not settled: %s", key, exc)
            del self._orders[key]
            return []
        del self._orders[key]
        ledger = self.chains.ledger(tracked.chain_id)
        solver = bytes.fromhex(to_bytes32(self.filler)[2:])
        data = encode_call(
            "escrow.finalise",
            tracked.order.as_abi(),
            [(tracked.fill_timestamp, solver)],
            to_bytes32(self.filler),
            b"",
        )
        tx_hash = self._send(ledger, self._escrows[tracked.chain_id], data, now)
        log.info("order %s settled on chain %s (tx %s)", key, tracked.chain_id, tx_hash)
        return [Step("settled", key, tracked.chain_id, tx_hash)]

    def _send(self, ledger: Ledger, to: str, data: str, now: float) -> str:
        nonce = ledger.nonce(self.filler, now, pending=True)
        raw = bytes.fromhex(data[2:])
        digest = keccak(
            b"toolkit filler tx"
            + ledger.chain_id.to_bytes(8, "big")
            + nonce.to_bytes(32, "big")
            + raw
        )
        fee = 2 * ledger.base_fee
        tx = Tx(
            "0x" + digest.hex(),
            2,
            ledger.chain_id,
            self.filler,
            nonce,
            to.lower(),
            0,
            raw,
            FILLER_GAS,
            fee,
            0,
        )
        try:
            return ledger.submit(tx, now)
        except Rejected as exc:  # pragma: no cover - the filler is funded at start
            log.error("the filler's transaction on chain %s was refused: %s", ledger.chain_id, exc)
            return tx.hash
