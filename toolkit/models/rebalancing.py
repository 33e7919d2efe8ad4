"""Rebalancing per chain: what the transfers moved and cost, beside the net flow that made them.

Input (pure frames):

- ``net``: :func:`toolkit.models.netflow.net_flow`'s frame (per ``chain, token``: ``received,
  delivered, net, n`` and the net rate per hour with its 95 % interval);
- ``transfers``: one row per rebalancing transfer, ``token, src_chain, dst_chain, amount, fee``
  (exact, smallest units) and ``gas_usd`` (the source transaction); ``cost_usd`` (fee and gas
  in USD) when the caller has priced it (:func:`toolkit.store.queries.backtest_transfers`, or a
  replay's ``result.transfers``).

A chain that drains (negative net) is topped up by transfers *in*; one that gathers sends
transfers *out*, and the bridge fee and the gas are paid where a transfer leaves.

>>> import polars as pl
>>> from toolkit.models.netflow import net_flow
>>> orders = pl.DataFrame({"src_chain": [1, 1], "dst_chain": [10, 10], "token": ["USDC"] * 2,
...     "input_amount": [100, 100], "output_amount": [99, 99]})
>>> moved = pl.DataFrame({"token": ["USDC"], "src_chain": [1], "dst_chain": [10],
...     "amount": [150], "fee": [1], "gas_usd": [0.5]})
>>> table = rebalancing_by_chain(net_flow(orders, span_s=3600.0), moved)
>>> table.select("chain", "net", "rebalanced_in", "rebalanced_out", "bridge_fees").rows()
[(1, 200, 0, 150, 1), (10, -198, 149, 0, 0)]
"""

from __future__ import annotations

import polars as pl

from toolkit.models.frames import Kind, prepare

__all__ = ["TRANSFER_SPEC", "rebalancing_by_chain"]

#: The columns a transfers frame must hold, and their kinds.
TRANSFER_SPEC: dict[str, Kind] = {
    "token": "str",
    "src_chain": "int",
    "dst_chain": "int",
    "amount": "amount",
    "fee": "amount",
    "gas_usd": "float",
}


def rebalancing_by_chain(net: pl.DataFrame, transfers: pl.DataFrame) -> pl.DataFrame:
    """Net flow, rebalanced volume and rebalancing cost per chain and token.

    Parameters
    ----------
    net : polars.DataFrame
        :func:`toolkit.models.netflow.net_flow`'s frame.
    transfers : polars.DataFrame
        The transfers (module docstring); ``cost_usd`` is summed when present.

    Returns
    -------
    polars.DataFrame
        One row per ``(chain, token)`` of either frame, sorted by token then chain: ``received,
        delivered, net, n, net_per_h, net_per_h_low, net_per_h_high`` (0 / null where the
        chain saw no order), ``transfers_in``, ``rebalanced_in`` (what arrived: amount less
        fee), ``transfers_out``, ``rebalanced_out`` (what was sent), ``bridge_fees`` (exact,
        smallest units), ``gas_usd`` and ``cost_usd`` (paid by the transfers out; ``cost_usd``
        null when ``transfers`` has no such column).

    Examples
    --------
    See the module docstring.
    """
    moved = prepare(transfers, "rebalancing_by_chain", TRANSFER_SPEC)
    priced = "cost_usd" in transfers.columns
    cost = transfers["cost_usd"].cast(pl.Float64) if priced else pl.lit(None, pl.Float64)
    moved = moved.with_columns(cost.alias("cost_usd"))
    incoming = moved.group_by(pl.col("dst_chain").alias("chain"), "token").agg(
        pl.len().cast(pl.Int64).alias("transfers_in"),
        (pl.col("amount") - pl.col("fee")).sum().alias("rebalanced_in"),
    )
    outgoing = moved.group_by(pl.col("src_chain").alias("chain"), "token").agg(
        pl.len().cast(pl.Int64).alias("transfers_out"),
        pl.col("amount").sum().alias("rebalanced_out"),
        pl.col("fee").sum().alias("bridge_fees"),
        pl.col("gas_usd").sum().alias("gas_usd"),
        # A sum of nulls is 0: unpriced transfers keep a null cost.
        (pl.col("cost_usd").sum() if priced else pl.lit(None, pl.Float64)).alias("cost_usd"),
    )
    keys = pl.concat(
        [
            net.select("chain", "token"),
            incoming.select("chain", "token"),
            outgoing.select("chain", "token"),
        ]
    ).unique()
    counts = ("transfers_in", "transfers_out")
    amounts = ("rebalanced_in", "rebalanced_out", "bridge_fees", "received", "delivered", "net")
    return (
        keys.join(net, on=["chain", "token"], how="left")
        .join(incoming, on=["chain", "token"], how="left")
        .join(outgoing, on=["chain", "token"], how="left")
        .with_columns(
            *(pl.col(c).fill_null(0) for c in counts),
            *(pl.col(c).fill_null(0).cast(pl.Int128) for c in amounts),
            pl.col("n").fill_null(0),
            pl.col("gas_usd").fill_null(0.0),
            pl.col("cost_usd").fill_null(0.0) if priced else pl.col("cost_usd"),
        )
        .sort("token", "chain")
    )
