"""The engine's books against the chains': the service's holdings per (chain, token).

The engine says what the service holds of each token on each chain
(:meth:`toolkit.engine.Engine.inventory`, ``on_chain``: its pools' ``balance − outstanding`` and
the unallocated balance); on the simulated chains the service's tokens are the filler's balance
there. The two differ only by the service's own transactions that the engine has booked and
the chain has not mined yet, all of which the relay knows:

- a fill sent and not mined: the engine spent its output when the fill was sent;
- a rebalancing transfer's out transaction sent and not mined: the engine debited the source
  when it sent the transfer;
- a transfer the engine landed whose delivery is not mined: the engine credited the
  destination at ``arrives_at``;
- a loan the engine authorized whose transfer to the borrower is not mined (or waits for a
  delivery): the engine spent the pool's chain at the authorization;
- what a borrower paid the filler on its loan's repayment chain that covers no whole loan yet:
  the engine books a repayment only for the whole ``requiredInput``
  (:mod:`toolkit.world.lending`).

Settlements need no term: the engine books a settlement when the ``finalise`` receipt
succeeds, which is when the escrow paid the filler; nor do whole loan repayments, booked when
the relay reads the borrower's transfer. So, per (chain, token): ``filler balance − unmined
fills − unmined transfer outs + undelivered arrivals − unmined loans − unbooked repayment
credit`` must equal the engine's ``on_chain``; :func:`compare` lists where it does not.

>>> compare({(8453, "USDC"): 10}, {(8453, "USDC"): 12}, {(8453, "USDC"): 2})
[]
>>> compare({(8453, "USDC"): 10}, {(8453, "USDC"): 11}, {})
[Mismatch(chain=8453, symbol='USDC', engine=10, chain_figure=11, balance=11, unmined=0)]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

__all__ = ["Mismatch", "compare"]


class Mismatch(NamedTuple):
    """Where the books disagree: the engine's ``on_chain`` figure, the chain's
    (``balance − unmined``), the filler's ``balance`` and the ``unmined`` net outflow the
    relay accounted for (fills, transfer outs and loans sent, and repayment credit not booked,
    less deliveries owed), smallest units."""

    chain: int
    symbol: str
    engine: int
    chain_figure: int
    balance: int
    unmined: int


def compare(
    engine: Mapping[tuple[int, str], int],
    balances: Mapping[tuple[int, str], int],
    unmined: Mapping[tuple[int, str], int],
) -> list[Mismatch]:
    """The (chain, symbol) keys of ``engine`` whose figure differs from the filler's balance
    less the ``unmined`` net outflow, in ``engine``'s order."""
    out = []
    for key, figure in engine.items():
        balance = balances.get(key, 0)
        pending = unmined.get(key, 0)
        if balance - pending != figure:
            out.append(Mismatch(key[0], key[1], figure, balance - pending, balance, pending))
    return out
