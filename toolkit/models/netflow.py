"""Net flow: which way the orders move the service's inventory, per chain and per route.

An order from chain ``src`` to chain ``dst`` is paid for on ``src`` (the escrow releases the
user's input there, to the filler) and delivered on ``dst`` (the filler sends the output
there). So, for the service, every order *receives* its ``input_amount`` on its origin and
*delivers* its ``output_amount`` on its destination; a chain whose deliveries outrun its
receipts is drained, and only a rebalancing transfer brings inventory back.

Input (one row per order; extra columns are kept out of the result):

- ``src_chain``, ``dst_chain`` (integers), ``token`` (the symbol: routes move one token);
- ``input_amount``, ``output_amount``: exact integers in the token's smallest units.

Where the rows come from: a backtest's filled requests (``result.requests`` filtered on
``outcome == "filled"``), the orders the chains saw (:func:`toolkit.store.orders.chain_orders`
through :func:`observed_orders`: what the escrow released and the settler delivered), or a
generated flow's or the market's requests, whose ``amount`` stands for both sides
(:func:`requested_orders`: fees of a few bps left out). A row's side of zero amount (an order
filled whose input is not released yet) does not touch its chain.

Uncertainty. Orders arrive as a (possibly time-varying) Poisson process with independent
sizes, so a chain's net amount over the span is a compound Poisson sum: its variance is
estimated by the sum of squared contributions, ``Σ c_i²`` (an order contributes ``+input`` to
its origin and ``−output`` to its destination; a same-chain order both). The 95 % interval of
the net rate per hour is ``net/h ± 1.96·√(Σ c_i²)/h``: a normal approximation, good once a
chain sees a few dozen orders (``n`` is in the frame). The tests hold its coverage to 95 %
on seeded flows whose true rate is known. ``Σ c_i²/h`` is also in the frame
(``net_variance_per_h``): the variance the net amount gains per hour, the random walk's
variance rate (:mod:`toolkit.models.inventory` drains inventory with it).

>>> import polars as pl
>>> orders = pl.DataFrame({"src_chain": [1, 1, 8453], "dst_chain": [8453, 8453, 1],
...     "token": ["USDC"] * 3, "input_amount": [100, 100, 50], "output_amount": [99, 99, 49]})
>>> net_flow(orders, span_s=3600.0).select("chain", "received", "delivered", "net", "n").rows()
[(1, 200, 49, 151, 3), (8453, 50, 198, -148, 3)]
"""

from __future__ import annotations

import polars as pl

from toolkit.arguments import number
from toolkit.models.frames import Kind, prepare
from toolkit.models.intervals import Z95

__all__ = [
    "OBSERVED_SPEC",
    "ORDER_SPEC",
    "net_flow",
    "observed_orders",
    "requested_orders",
    "route_flow",
]

#: The columns an order frame must hold, and their kinds.
ORDER_SPEC: dict[str, Kind] = {
    "src_chain": "int",
    "dst_chain": "int",
    "token": "str",
    "input_amount": "amount",
    "output_amount": "amount",
}

_HOUR_S = 3600.0


def _per_hour(total: pl.Expr, square_sum: pl.Expr, hours: float, name: str) -> list[pl.Expr]:
    rate = total.cast(pl.Float64) / hours
    half = Z95 * square_sum.sqrt() / hours
    return [
        rate.alias(f"{name}_per_h"),
        (rate - half).alias(f"{name}_per_h_low"),
        (rate + half).alias(f"{name}_per_h_high"),
    ]


def net_flow(orders: pl.DataFrame, *, span_s: float) -> pl.DataFrame:
    """What the orders make the service receive and deliver on each chain.

    Parameters
    ----------
    orders : polars.DataFrame
        One row per order with the columns of :data:`ORDER_SPEC` (module docstring).
    span_s : float
        The seconds the orders were drawn over (the rate's denominator).

    Returns
    -------
    polars.DataFrame
        One row per ``(chain, token)``, sorted by token then chain: ``received`` (inputs of
        the orders from this chain), ``delivered`` (outputs of the orders to it), ``net`` =
        received − delivered (all exact, smallest units; negative drains the chain), ``n``
        (orders touching the chain) and the net rate per hour with its 95 % interval
        (``net_per_h``, ``net_per_h_low``, ``net_per_h_high``), and ``net_variance_per_h``
        (``Σ c_i²`` per hour, in squared smallest units: the net amount's variance rate).

    Examples
    --------
    >>> import polars as pl
    >>> orders = pl.DataFrame({"src_chain": [1, 1], "dst_chain": [10, 10],
    ...     "token": ["USDC"] * 2, "input_amount": [100, 100], "output_amount": [99, 99]})
    >>> net_flow(orders, span_s=7200.0).select("chain", "net", "net_per_h").rows()
    [(1, 200, 100.0), (10, -198, -99.0)]
    """
    frame = prepare(orders, "net_flow", ORDER_SPEC)
    hours = number(span_s, "span_s", above=0) / _HOUR_S
    origin = frame.select(
        pl.col("src_chain").alias("chain"),
        "token",
        pl.col("input_amount").alias("received"),
        pl.lit(0, pl.Int128).alias("delivered"),
    )
    destination = frame.select(
        pl.col("dst_chain").alias("chain"),
        "token",
        pl.lit(0, pl.Int128).alias("received"),
        pl.col("output_amount").alias("delivered"),
    )
    # One row per (order, chain) it touches: a same-chain order contributes both sides once,
    # and a side that moves nothing (an output not delivered yet) touches nothing.
    legs = (
        pl.concat([origin.with_row_index("order"), destination.with_row_index("order")])
        .filter((pl.col("received") != 0) | (pl.col("delivered") != 0))
        .group_by("order", "chain", "token")
        .agg(pl.col("received").sum(), pl.col("delivered").sum())
        .with_columns((pl.col("received") - pl.col("delivered")).alias("contribution"))
    )
    square = pl.col("contribution").cast(pl.Float64).pow(2)
    return (
        legs.group_by("chain", "token")
        .agg(
            pl.col("received").sum(),
            pl.col("delivered").sum(),
            pl.col("contribution").sum().alias("net"),
            pl.len().cast(pl.Int64).alias("n"),
            square.sum().alias("_square"),
        )
        .with_columns(
            *_per_hour(pl.col("net"), pl.col("_square"), hours, "net"),
            (pl.col("_square") / hours).alias("net_variance_per_h"),
        )
        .drop("_square")
        .sort("token", "chain")
    )


def route_flow(orders: pl.DataFrame, *, span_s: float) -> pl.DataFrame:
    """How much each route moves, and takes out of its destination, per hour.

    Parameters
    ----------
    orders : polars.DataFrame
        One row per order with the columns of :data:`ORDER_SPEC`.
    span_s : float
        The seconds the orders were drawn over.

    Returns
    -------
    polars.DataFrame
        One row per route ``(src_chain, dst_chain, token)``: ``n`` orders, ``input`` and
        ``output`` volumes (exact), and the output volume per hour with its 95 % interval
        (``output_per_h``, ``output_per_h_low``, ``output_per_h_high``).

    Examples
    --------
    >>> import polars as pl
    >>> orders = pl.DataFrame({"src_chain": [1, 1], "dst_chain": [10, 10], "token": ["WETH"] * 2,
    ...     "input_amount": [5, 7], "output_amount": [4, 6]})
    >>> route_flow(orders, span_s=7200.0).select("n", "input", "output", "output_per_h").row(0)
    (2, 12, 10, 5.0)
    """
    frame = prepare(orders, "route_flow", ORDER_SPEC)
    hours = number(span_s, "span_s", above=0) / _HOUR_S
    square = pl.col("output_amount").cast(pl.Float64).pow(2)
    return (
        frame.group_by("src_chain", "dst_chain", "token")
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            pl.col("input_amount").sum().alias("input"),
            pl.col("output_amount").sum().alias("output"),
            square.sum().alias("_square"),
        )
        .with_columns(_per_hour(pl.col("output"), pl.col("_square"), hours, "output"))
        .drop("_square")
        .sort("token", "src_chain", "dst_chain")
    )


def requested_orders(requests: pl.DataFrame) -> pl.DataFrame:
    """Orders as requested, ``amount`` standing for both sides.

    For a generated flow, or RFQs observed without their quotes. The fee, a few bps, is left
    out: net flows from this are the demand's, within that.

    Parameters
    ----------
    requests : polars.DataFrame
        ``src_chain``, ``dst_chain``, ``token`` and ``amount`` (exact, smallest units).

    Returns
    -------
    polars.DataFrame
        The columns of :data:`ORDER_SPEC`, with ``input_amount = output_amount = amount``.

    Examples
    --------
    >>> import polars as pl
    >>> flow = pl.DataFrame({"src_chain": [1], "dst_chain": [10], "token": ["USDC"],
    ...     "amount": [10**9]})
    >>> requested_orders(flow).select("input_amount", "output_amount").row(0)
    (1000000000, 1000000000)
    """
    frame = prepare(
        requests,
        "requested_orders",
        {"src_chain": "int", "dst_chain": "int", "token": "str", "amount": "amount"},
    )
    return frame.select(
        "src_chain",
        "dst_chain",
        "token",
        pl.col("amount").alias("input_amount"),
        pl.col("amount").alias("output_amount"),
    )


#: The columns :func:`observed_orders` reads (:func:`toolkit.store.orders.chain_orders`'s).
OBSERVED_SPEC: dict[str, Kind] = {
    "src_chain": "int",
    "dst_chain": "int",
    "input_symbol": "str",
    "output_symbol": "str",
    "released_amount": "amount",
    "delivered_amount": "amount",
}


def observed_orders(orders: pl.DataFrame) -> pl.DataFrame:
    """Orders as the chains moved the service's inventory, for :func:`net_flow`.

    An order pays the service on its origin when the escrow releases its input (``Finalised``:
    the filler's inventory there grows) and costs it on its destination when the output is
    delivered (``OutputFilled``: the inventory there shrinks); an order only opened, or
    refunded, moved nothing of the service's. So ``input_amount`` is what was released and
    ``output_amount`` what was delivered, each 0 until it happens (a zero side touches no
    chain in :func:`net_flow`), and orders that moved nothing are left out. An order whose
    input and output tokens differ (by symbol) becomes two rows, one per token, so each
    token's flow stays its own.

    Parameters
    ----------
    orders : polars.DataFrame
        The columns of :data:`OBSERVED_SPEC`: ``src_chain``, ``dst_chain``, ``input_symbol``,
        ``output_symbol``, ``released_amount`` and ``delivered_amount`` (exact), as
        :func:`toolkit.store.orders.chain_orders` gives them.

    Returns
    -------
    polars.DataFrame
        The columns of :data:`ORDER_SPEC`, one row per order and token moved.

    Examples
    --------
    >>> import polars as pl
    >>> seen = pl.DataFrame({"src_chain": [1, 1, 8453], "dst_chain": [8453, 8453, 1],
    ...     "input_symbol": ["USDC"] * 3, "output_symbol": ["USDC"] * 3,
    ...     "released_amount": [100, 0, 0], "delivered_amount": [100, 50, 0]})
    >>> observed_orders(seen).select("input_amount", "output_amount").rows()
    [(100, 100), (0, 50)]
    """
    frame = prepare(orders, "observed_orders", OBSERVED_SPEC)
    moved = frame.filter(
        (pl.col("released_amount") > 0) | (pl.col("delivered_amount") > 0)
    ).with_row_index("_order")
    same = pl.col("input_symbol") == pl.col("output_symbol")
    zero = pl.lit(0, pl.Int128)
    released, delivered = pl.col("released_amount"), pl.col("delivered_amount")
    sides = [  # (rows, token, input, output): whole orders, then each side of a crossed one
        (moved.filter(same), "input_symbol", released, delivered),
        (moved.filter(~same), "input_symbol", released, zero),
        (moved.filter(~same), "output_symbol", zero, delivered),
    ]
    rows = [
        part.select(
            "_order",
            "src_chain",
            "dst_chain",
            pl.col(token).alias("token"),
            given.alias("input_amount"),
            owed.alias("output_amount"),
        )
        for part, token, given, owed in sides
    ]
    return (
        pl.concat(rows)
        .filter((pl.col("input_amount") > 0) | (pl.col("output_amount") > 0))
        .sort("_order", maintain_order=True)
        .drop("_order")
    )
