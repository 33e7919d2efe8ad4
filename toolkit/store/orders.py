"""Orders seen on chain: the settlers' logs the chain collector decoded
(:mod:`toolkit.collect.order_events`) joined into one row per order, :func:`chain_orders`.

An order is known from the escrow's ``Open`` on its origin chain (its terms: one row per input
and output in ``escrow_order_legs``); what became of it from the logs of every chain collected:
the output settler's ``OutputFilled`` on the destination (``output_fills``), the escrow's
``Finalised`` or ``Refunded`` on the origin (``escrow_events``). Block times come from
``chain_blocks`` and token names from ``tokens`` (both written by the same collector).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from toolkit.store.store import Store

__all__ = ["chain_orders"]

# Each order opened on an input settler escrow, with one input and one output (the shape the
# service's transaction endpoint builds), joined with what the chains did with it: its fills on
# the destination (by order id and that chain), its Finalised or Refunded on the origin, block
# times from chain_blocks and token names from tokens.
_CHAIN_ORDERS = """
WITH legs AS (
    SELECT chain, order_id, any_value(escrow) AS escrow,
           min(block_number) AS opened_block, any_value(tx_hash) AS opened_tx,
           count(*) FILTER (WHERE leg = 'input') AS inputs,
           count(*) FILTER (WHERE leg = 'output') AS outputs,
           any_value(token) FILTER (WHERE leg = 'input') AS input_token,
           any_value(amount) FILTER (WHERE leg = 'input') AS input_amount,
           any_value(leg_chain) FILTER (WHERE leg = 'output') AS dst_chain,
           any_value(token) FILTER (WHERE leg = 'output') AS output_token,
           any_value(amount) FILTER (WHERE leg = 'output') AS output_amount
    FROM escrow_order_legs GROUP BY chain, order_id
),
closed AS (
    SELECT e.chain, e.order_id,
           bool_or(e.event = 'finalised') AS finalised,
           min(to_timestamp(b.timestamp)) FILTER (WHERE e.event = 'finalised') AS finalised_at,
           min(to_timestamp(b.timestamp)) FILTER (WHERE e.event = 'refunded') AS refunded_at
    FROM escrow_events e
    LEFT JOIN chain_blocks b ON b.chain = e.chain AND b.number = e.block_number
    WHERE e.event IN ('finalised', 'refunded') GROUP BY e.chain, e.order_id
),
fills AS (
    SELECT f.chain, f.order_id, sum(f.amount) AS delivered_amount,
           max(to_timestamp(b.timestamp)) AS filled_at
    FROM output_fills f
    LEFT JOIN chain_blocks b ON b.chain = f.chain AND b.number = f.block_number
    GROUP BY f.chain, f.order_id
),
names AS (SELECT chain, address, any_value(upper(symbol)) AS symbol FROM tokens GROUP BY ALL)
SELECT l.order_id, l.escrow, l.chain AS src_chain, l.dst_chain, l.input_token, l.output_token,
       coalesce(i.symbol, l.input_token) AS input_symbol,
       coalesce(o.symbol, l.output_token) AS output_symbol,
       l.input_amount, l.output_amount,
       CASE WHEN coalesce(c.finalised, false) THEN l.input_amount ELSE 0 END
           ::HUGEINT AS released_amount,
       coalesce(f.delivered_amount, 0)::HUGEINT AS delivered_amount,
       to_timestamp(b.timestamp) AS opened_at, f.filled_at, c.finalised_at, c.refunded_at,
       l.opened_block, l.opened_tx
FROM legs l
LEFT JOIN chain_blocks b ON b.chain = l.chain AND b.number = l.opened_block
LEFT JOIN closed c ON c.chain = l.chain AND c.order_id = l.order_id
LEFT JOIN fills f ON f.chain = l.dst_chain AND f.order_id = l.order_id
LEFT JOIN names i ON i.chain = l.chain AND i.address = l.input_token
LEFT JOIN names o ON o.chain = l.dst_chain AND o.address = l.output_token
WHERE l.inputs = 1 AND l.outputs = 1
ORDER BY opened_at, l.chain, l.opened_block, l.order_id
"""


def chain_orders(store: Store) -> pl.DataFrame:
    """The orders the chain collector saw opened, one row per order, oldest first: the input
    of :func:`toolkit.models.netflow.observed_orders`.

    Built from the settlers' logs (``escrow_events``, ``escrow_order_legs``,
    ``output_fills``; :mod:`toolkit.collect.order_events`) of every chain collected: an order
    is known from its ``Open`` on the origin chain, and what happened to it from the logs of
    the chains collected since.

    Columns: ``order_id``, ``escrow``, ``src_chain`` (where it was opened), ``dst_chain``
    (where its output is owed), ``input_token`` and ``output_token`` (addresses),
    ``input_symbol`` and ``output_symbol`` (upper case from the ``tokens`` names, which the
    collector caches; the address where none is known), ``input_amount`` and
    ``output_amount`` (the order's terms), ``released_amount`` (the input when the escrow's
    ``Finalised`` was seen, else 0: the escrow pays the inputs whole), ``delivered_amount``
    (the ``OutputFilled`` amounts seen on the destination, else 0), all exact in smallest
    units; ``opened_at``, ``filled_at`` (the last fill), ``finalised_at``, ``refunded_at``
    (block times, null where not seen), ``opened_block`` and ``opened_tx``.

    Orders of several inputs or outputs (OIF's format allows them; the service's transaction
    endpoint never builds one) are not in it: their legs are in ``escrow_order_legs``. A fill
    whose ``Open`` was not collected (another chain, or blocks before the run) is not either.

    >>> from toolkit.store import Store
    >>> with Store(":memory:") as store:
    ...     chain_orders(store).columns[2:4]
    ['src_chain', 'dst_chain']
    """
    return store.query(_CHAIN_ORDERS)
