"""The service's filler on the simulated chains: it fills by transaction, reads its receipts,
and finalises once the fill is proven on the origin chain.

:class:`Filler` keeps every order the relay saw opened (:meth:`Filler.track`) and moves it on at
each sync (:meth:`Filler.receipts`, then :meth:`Filler.run`):

1. **open**: once the quote's eta passed, :meth:`~toolkit.world.World.fill` (the engine's fill:
   the capacity is committed when the transaction is sent), then ``fill`` on the destination's
   output settler (``fill_sent``). An order the engine refuses now (capacity, price) is tried
   again at the next sync, until its ``fillDeadline``; so is an order whose output waits for a
   rebalancing delivery to its chain (the engine counted the arrival, the chain has not minted
   it yet: :class:`~toolkit.world.bridging.TransferMirror`), which its fill would spend.
2. **filling**: the fill's receipt. Success is ``filled``: the block's timestamp is the solve
   timestamp. Reverted (or dropped from the pool) is ``fill_reverted``: the world and the engine
   undo the fill (:meth:`~toolkit.world.World.unfill`: the order is Deposited again and holds
   no liquidity), and it is tried again one destination block later while its fillDeadline
   allows, else left to refund. ``AlreadyFilled()`` (another solver delivered the output) and
   ``FillDeadline()`` are not retried.
3. **filled**: the proof. The filler knows its fill's payload hash (the fill description of its
   solver, the orderId, the fill's block timestamp and the output) and watches the origin's
   input oracle for its ``OutputProven`` event (:meth:`Filler.proven`, fed by the relay's log
   reading: one look-up per event, not a call per order and block); once it is there,
   ``finalise`` on the origin escrow (``finalise_sent``), with the filler as solver and
   destination.
4. **finalising**: the receipt. Success is ``settled``: :meth:`~toolkit.world.World.settle`
   books the input on the origin chain, as the engine's books say. Reverted is
   ``finalise_reverted``: back to 3, sent again one origin block later.

Transactions are the filler's (:func:`~toolkit.world.sender.send`); every step is logged on
``toolkit.world.filler``. :meth:`Filler.unmined_fills` is what reconciliation subtracts: the
outputs of fills sent and not mined, which the engine already spent.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Final

from eth_utils import function_signature_to_4byte_selector

from toolkit.codecs import abi
from toolkit.codecs.escrow import MandateOutput, StandardOrder, to_bytes32
from toolkit.codecs.functions import encode_call
from toolkit.codecs.proofs import fill_description, payload_hash
from toolkit.engine import CapacityExhausted, FillRejected, UnknownReservation
from toolkit.world.evm import Chains, Receipt
from toolkit.world.order import OrderStatus, WorldError
from toolkit.world.sender import Step, send
from toolkit.world.world import World

__all__ = ["FILLER_GAS", "Filler"]

log = logging.getLogger(__name__)

#: The gas limit of the filler's transactions (above what fill and finalise use).
FILLER_GAS: Final = 500_000
_LABEL: Final = b"toolkit filler tx"
_FINAL: Final = tuple(
    function_signature_to_4byte_selector(e) for e in ("AlreadyFilled()", "FillDeadline()")
)
OPEN, FILLING, FILLED, FINALISING = "open", "filling", "filled", "finalising"


@dataclass
class _Tracked:
    order: StandardOrder
    origin: int
    due: float
    stage: str = OPEN
    tx: str = ""
    fill_timestamp: int = 0
    payload: str = ""
    proven: bool = False


@dataclass
class Filler:
    """The filler's orders and transactions on ``chains`` (see the module docstring).

    >>> from toolkit.scenario import load_scenario
    >>> from toolkit.world.evm import Chains
    >>> filler = Filler(Chains(load_scenario("single-pool"), genesis=0.0))
    >>> filler.solver[-40:] == filler.address[2:], filler.unmined_fills()
    (True, {})
    """

    chains: Chains
    orders: dict[str, _Tracked] = field(default_factory=dict)
    #: The payload hash of each mined fill awaiting its proof → its order id.
    payloads: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        scenario = self.chains.scenario
        self.address = scenario.filler.lower()
        self.solver = to_bytes32(self.address)
        self._escrows = {c.id: c.escrow.lower() for c in scenario.chains}

    def save(self) -> Any:
        """The orders tracked and their payloads (copied by the relay's snapshot)."""
        return (self.orders, self.payloads)

    def track(self, key: str, order: StandardOrder, origin: int, due: float) -> None:
        """Fill order ``key``, opened on ``origin``, once ``due``."""
        self.orders[key] = _Tracked(order, origin, due)

    def forget(self, key: str) -> None:
        """Stop acting on ``key`` (refunded)."""
        tracked = self.orders.pop(key, None)
        if tracked is not None:
            self.payloads.pop(tracked.payload, None)

    def proven(self, chain_id: int, application: str, digest: str) -> None:
        """An input oracle's ``OutputProven``: payload ``digest`` filled on ``chain_id`` by the
        output settler ``application`` (bytes32 words, ``0x`` hex) is attested."""
        key = self.payloads.get(digest)
        tracked = None if key is None else self.orders.get(key)
        if tracked is None:
            return  # another solver's fill
        output = tracked.order.outputs[0]
        if output.chain_id == chain_id and output.settler == application:
            tracked.proven = True

    def _symbol(self, output: MandateOutput) -> str:
        """The scenario symbol of an output's token ("" for a token the scenario lacks)."""
        address = abi.hexstr(bytes.fromhex(output.token[2:])[12:])
        token = self.chains.scenario.token_by_address(output.chain_id, address)
        return "" if token is None else token.symbol

    def unmined_fills(self) -> dict[tuple[int, str], int]:
        """Output amounts of fills sent and not mined, by (chain, token symbol)."""
        out: dict[tuple[int, str], int] = {}
        for tracked in self.orders.values():
            if tracked.stage == FILLING:
                output = tracked.order.outputs[0]
                key = (output.chain_id, self._symbol(output))
                out[key] = out.get(key, 0) + output.amount
        return out

    # -- receipts ---------------------------------------------------------------------------

    def receipts(self, world: World, now: float) -> list[Step]:
        """Act on the receipts of the fills and finalises mined by ``now``."""
        done: list[Step] = []
        for key, tracked in list(self.orders.items()):
            if tracked.stage not in (FILLING, FINALISING):
                continue
            chain = (
                tracked.order.outputs[0].chain_id if tracked.stage == FILLING else tracked.origin
            )
            ledger = self.chains.ledger(chain)
            found = ledger.transaction(tracked.tx, now)
            if found is not None and found[1] is None:
                continue  # still in the pool
            receipt = None if found is None else found[1]
            if tracked.stage == FILLING:
                done += self._fill_mined(world, key, tracked, receipt, now)
            else:
                done += self._finalise_mined(world, key, tracked, receipt, now)
        return done

    def _fill_mined(self, world: World, key: str, tracked: _Tracked, receipt: Receipt | None,
                    now: float) -> list[Step]:  # fmt: skip
        chain = tracked.order.outputs[0].chain_id
        if receipt is not None and receipt.status == 1:
            tracked.stage = FILLED
            tracked.fill_timestamp = self.chains.ledger(chain).block_timestamp(receipt.block_number)
            tracked.payload = self._payload(key, tracked)
            self.payloads[tracked.payload] = key
            tracked.due = now
            log.info("order %s filled on chain %s (tx %s)", key, chain, tracked.tx)
            return [Step("filled", key, chain, tracked.tx)]
        revert = b"" if receipt is None else receipt.revert
        try:
            world.unfill(key, now)
        except (UnknownReservation, WorldError) as exc:
            log.warning("order %s: its reverted fill was not undone: %s", key, exc)
        ledger = self.chains.ledger(chain)
        retry = now + ledger.block_time_s
        if revert[:4] in _FINAL or retry > tracked.order.fill_deadline:
            del self.orders[key]
            log.info("order %s: fill reverted (tx %s); not retried", key, tracked.tx)
        else:
            tracked.stage, tracked.due = OPEN, retry
            log.info("order %s: fill reverted (tx %s); retried at %s", key, tracked.tx, retry)
        return [Step("fill_reverted", key, chain, tracked.tx)]

    def _finalise_mined(self, world: World, key: str, tracked: _Tracked,
                        receipt: Receipt | None, now: float) -> list[Step]:  # fmt: skip
        if receipt is None or receipt.status != 1:
            tracked.stage = FILLED
            tracked.due = now + self.chains.ledger(tracked.origin).block_time_s
            log.info("order %s: finalise reverted (tx %s); sent again", key, tracked.tx)
            return [Step("finalise_reverted", key, tracked.origin, tracked.tx)]
        del self.orders[key]
        self.payloads.pop(tracked.payload, None)
        try:
            world.settle(key, now)
        except (UnknownReservation, WorldError) as exc:
            log.warning("order %s: finalised on chain but not settled: %s", key, exc)
            return []
        log.info("order %s settled on chain %s (tx %s)", key, tracked.origin, tracked.tx)
        return [Step("settled", key, tracked.origin, tracked.tx)]

    # -- sending ----------------------------------------------------------------------------

    def run(self, world: World, now: float, held: set[tuple[int, str]]) -> list[Step]:
        """Fill what is due and finalise what is proven at ``now``; ``held`` are the (chain,
        token symbol) whose deliveries the chain still owes (fills of them wait)."""
        done: list[Step] = []
        for key, tracked in list(self.orders.items()):
            if tracked.due > now:
                continue
            if tracked.stage == OPEN:
                done += self._fill(world, key, tracked, now, held)
            elif tracked.stage == FILLED and tracked.proven:
                done += self._finalise(key, tracked, now)
        return done

    def _fill(self, world: World, key: str, tracked: _Tracked, now: float,
              held: set[tuple[int, str]]) -> list[Step]:  # fmt: skip
        order = tracked.order
        if world.order(key).status is not OrderStatus.DEPOSITED:
            del self.orders[key]  # filled or refunded some other way (the World API)
            return []
        if now > order.fill_deadline:
            del self.orders[key]
            log.info("order %s missed its fillDeadline; refundable after expires", key)
            return []
        output = order.outputs[0]
        if (output.chain_id, self._symbol(output)) in held:
            return []  # its inventory is still in a bridge on chain: wait for the delivery
        try:
            world.fill(key, now)
        except (CapacityExhausted, FillRejected, WorldError) as exc:
            log.info("order %s not filled at %s (%s); retrying", key, now, exc)
            return []
        ledger = self.chains.ledger(output.chain_id)
        data = encode_call(
            "outputSettler.fill",
            key,
            output.as_abi(),
            order.fill_deadline,
            bytes.fromhex(self.solver[2:]),
        )
        settler = abi.hexstr(bytes.fromhex(output.settler[2:])[12:])
        tracked.tx = send(ledger, self.address, settler, data, now, gas=FILLER_GAS, label=_LABEL)
        tracked.stage = FILLING
        log.info("order %s: fill sent on chain %s (tx %s)", key, output.chain_id, tracked.tx)
        return [Step("fill_sent", key, output.chain_id, tracked.tx)]

    def _payload(self, key: str, tracked: _Tracked) -> str:
        output = tracked.order.outputs[0]
        return payload_hash(fill_description(self.solver, key, tracked.fill_timestamp, output))

    def _finalise(self, key: str, tracked: _Tracked, now: float) -> list[Step]:
        data = encode_call(
            "escrow.finalise",
            tracked.order.as_abi(),
            [(tracked.fill_timestamp, bytes.fromhex(self.solver[2:]))],
            self.solver,
            b"",
        )
        ledger = self.chains.ledger(tracked.origin)
        escrow = self._escrows[tracked.origin]
        tracked.tx = send(ledger, self.address, escrow, data, now, gas=FILLER_GAS, label=_LABEL)
        tracked.stage = FINALISING
        log.info("order %s: finalise sent on chain %s (tx %s)", key, tracked.origin, tracked.tx)
        return [Step("finalise_sent", key, tracked.origin, tracked.tx)]
