"""Admission to a simulated chain's transaction pool, as geth's pool checks it.

Chain id, signature, nonce (no gaps: a nonce above the next one is refused rather than queued),
fee caps against the base fee, gas limit against the intrinsic gas and the block limit, funds
for ``gas × maxFee + value`` counting the sender's pooled transactions. A refusal is
:class:`Rejected` with geth's message.

>>> from toolkit.world.evm.records import Tx
>>> tx = Tx(sender="0x" + "11" * 20, to="0x" + "22" * 20, nonce=0, gas=20_000, max_fee=10,
...         max_priority_fee=0, value=0, data=b"", chain_id=8453, type=2, hash="0x01")
>>> admit(tx, 8453, base_fee=10, state_nonce=0, mine=[], balance=10**18)
Traceback (most recent call last):
...
toolkit.world.evm.admission.Rejected: intrinsic gas too low: gas 20000, minimum needed 21000
"""

from __future__ import annotations

from collections.abc import Sequence

from toolkit.errors import ChainError
from toolkit.world.evm import gas
from toolkit.world.evm.records import Tx

__all__ = ["Rejected", "admit"]


class Rejected(ChainError):
    """A transaction the pool refuses; the message is geth's."""


def admit(
    tx: Tx, chain_id: int, base_fee: int, state_nonce: int, mine: Sequence[Tx], balance: int
) -> None:
    """Check ``tx`` against the chain and the sender's state (``state_nonce``, native
    ``balance``) and pooled transactions (``mine``); :class:`Rejected` when geth would refuse
    it."""
    if tx.chain_id is not None and tx.chain_id != chain_id:
        raise Rejected("invalid chain id for signer")
    if tx.to is None:
        raise Rejected("contract creation is not supported by the simulated chain")
    if tx.gas > gas.BLOCK_GAS_LIMIT:
        raise Rejected("exceeds block gas limit")
    floor = gas.intrinsic(tx.data)
    if tx.gas < floor:
        raise Rejected(f"intrinsic gas too low: gas {tx.gas}, minimum needed {floor}")
    if tx.type == 2 and tx.max_priority_fee > tx.max_fee:
        raise Rejected(
            f"max priority fee per gas higher than max fee per gas: address {tx.sender}, "
            f"maxPriorityFeePerGas: {tx.max_priority_fee}, maxFeePerGas: {tx.max_fee}"
        )
    if tx.max_fee < base_fee:
        raise Rejected(
            f"max fee per gas less than block base fee: address {tx.sender}, "
            f"maxFeePerGas: {tx.max_fee}, baseFee: {base_fee}"
        )
    expected = state_nonce + len(mine)
    if tx.nonce < expected:
        raise Rejected(f"nonce too low: address {tx.sender}, tx: {tx.nonce} state: {expected}")
    if tx.nonce > expected:
        raise Rejected(f"nonce too high: address {tx.sender}, tx: {tx.nonce} state: {expected}")
    balance = balance - sum(p.max_cost for p in mine)
    if balance < tx.max_cost:
        raise Rejected(
            f"insufficient funds for gas * price + value: balance {max(balance, 0)}, "
            f"tx cost {tx.max_cost}, overshot {tx.max_cost - max(balance, 0)}"
        )
