"""How the service's own accounts send transactions on the simulated chains.

The filler (fills, finalises, loans), the attestation messenger, the bridge's relayer and the
operator's caller send unsigned transactions (the development namespace's kind: the chains
accept them from accounts the simulation runs) of type 2 at twice the chain's base fee. Each
actor's hashes are ``keccak(label ‖ chain id ‖ nonce ‖ calldata)``, so a run repeats its
hashes exactly. An account is given gas money again when it falls below half of
:data:`NATIVE_FUNDING`: gas is a cost line in the native coin, never the token inventory the
engine books.

>>> from toolkit.world.evm import Ledger
>>> ledger = Ledger(8453, block_time_s=2.0, base_fee=10, genesis=0.0)
>>> tx_hash = send(ledger, "0x" + "11" * 20, "0x" + "22" * 20, "0x", 1.0, gas=21_000,
...                label=b"example")
>>> ledger.mine().receipts[0].tx.hash == tx_hash
True
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from eth_utils import keccak

from toolkit.world.evm import Ledger, Rejected, Tx
from toolkit.world.evm.accounts import NATIVE_FUNDING

__all__ = ["Step", "send"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Step:
    """One thing a service actor did: ``kind``, the order id (a transfer's ``tr_<id>``), the
    chain and the transaction hash (the event's, or the actor's own).

    Kinds: ``opened``, ``refunded``, ``rejected`` (an escrow event read); ``fill_sent``,
    ``filled``, ``fill_reverted``, ``finalise_sent``, ``settled``, ``finalise_reverted`` (the
    filler's transactions and their receipts); ``attested``, ``attestation_reverted`` (the
    messenger's); ``transfer_sent``, ``transfer_delivered``, ``transfer_failed`` (a
    rebalancing transfer's two legs); ``loan_sent``, ``lent``, ``loan_failed``, ``repaid`` (a
    loan's transfer to its borrower and the borrower's repayment, under the borrow quote id)."""

    kind: str
    order_id: str
    chain_id: int
    tx_hash: str


def send(ledger: Ledger, sender: str, to: str, data: str, now: float, *, gas: int,
         label: bytes) -> str:  # fmt: skip
    """Pool ``sender``'s transaction calling ``to`` with ``data`` (``0x`` hex) on ``ledger``
    at ``now``; its hash."""
    if ledger.state.balances.get(sender, 0) < NATIVE_FUNDING // 2:
        ledger.state.balances[sender] = NATIVE_FUNDING
    nonce = ledger.nonce(sender, now, pending=True)
    raw = bytes.fromhex(data[2:])
    digest = keccak(label + ledger.chain_id.to_bytes(8, "big") + nonce.to_bytes(32, "big") + raw)
    tx = Tx(
        "0x" + digest.hex(),
        2,
        ledger.chain_id,
        sender,
        nonce,
        to.lower(),
        0,
        raw,
        gas,
        2 * ledger.base_fee,
        0,
    )
    try:
        return ledger.submit(tx, now)
    except Rejected as exc:  # pragma: no cover - the sender is funded above
        log.error("a transaction of %s on chain %s was refused: %s", sender, ledger.chain_id, exc)
        return tx.hash
