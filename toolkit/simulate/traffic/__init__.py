"""Other users' order flow, swaps and credit activity on a live embedded service, so that
collectors observe a market.

A :class:`Traffic` thread replays an order-flow frame (the backtests' flow: one row per RFQ with
``t``, route, token, amount, type, ``converts`` and ``convert_delay``; see
:func:`toolkit.flows.generate_flow`) against an embedded service, in-process or served over
HTTP (``toolkit serve --traffic``), on the client's clock: each
RFQ at its time, and each converting quote ``convert_delay`` later through the transaction
endpoint, then on chain as a user would: the development account that asked approves the escrow
once per token and sends the ``open()`` transaction with ``eth_sendTransaction``. The escrow's
``Open`` event reaches the engine, the service's filler fills on the destination chain and the
escrow settles, so reservations are made, converted, filled and released at the scenario's
rates, and the liquidity stream carries what a real market would.

Optional swap and credit flows (:func:`toolkit.flows.generate_swap_flow` and
:func:`toolkit.flows.generate_credit_flow`) join the same time-ordered schedule. A swap asks
the swap endpoint for a route, approves the route's ``target`` for ``tokenIn`` (a plain ERC-20
allowance, once per account, token and spender) and sends the route's ``callData``. A credit
action (lock, draw, repay, unlock) asks the credit endpoint for its calls and sends them. Both
send from the development accounts with ``eth_sendTransaction``; their receipts are read a
couple of blocks later on the same schedule, so a reverted swap or call is counted without
the thread waiting for a block.

It is never used against a real service, and its requests are not a collector's: they are the
market the collectors observe. What it did is counted (:attr:`counts`), so
a report can set the collectors' own requests against it; :attr:`Traffic.outcomes` keeps each
RFQ and the service's answer, and :func:`record_traffic` stores them as the market's
observations (a run of kind ``traffic``).
"""

from toolkit.simulate.traffic.actions import GAS as GAS
from toolkit.simulate.traffic.actions import MAX_APPROVAL as MAX_APPROVAL
from toolkit.simulate.traffic.actions import RECEIPT_BLOCKS as RECEIPT_BLOCKS
from toolkit.simulate.traffic.actions import RECEIPT_TRIES as RECEIPT_TRIES
from toolkit.simulate.traffic.record import MARKET_KIND, record_traffic
from toolkit.simulate.traffic.replay import LATE_S as LATE_S
from toolkit.simulate.traffic.replay import WAIT_SLICE_S as WAIT_SLICE_S
from toolkit.simulate.traffic.replay import Traffic

__all__ = [
    "MARKET_KIND",
    "Traffic",
    "record_traffic",
]
