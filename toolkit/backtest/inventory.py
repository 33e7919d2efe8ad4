"""A replay's inventory and rebalancing: the frames and the figures the summary reads.

``inventory`` (one row per (chain, token) per sample, every ``interval`` seconds of virtual
time): ``t``, ``chain``, ``token``; the service's holding there in smallest units, exact
(Int128): ``on_chain`` (tokens it holds there: its pools' balance less what they lent, plus
``unallocated``, what settlements and transfers left outside any pool), ``reserved``,
``outstanding`` (lent from this chain, owed elsewhere), ``receivable_in`` (owed here by
settlements to come), ``in_flight_in`` and ``in_flight_out`` (what bridges carry to and from
it, fees off); and ``share``, the chain's share of the token that the rebalancing policy reads
(``on_chain + in_flight_in + receivable_in`` over the same sum across the token's chains).

``transfers`` (one row per rebalancing transfer, in the order sent): ``transfer_id``,
``token``, ``src_chain``, ``dst_chain``, ``amount`` (debited at the source), ``fee`` (the
bridge's), ``received`` (``amount - fee``), ``sent_at``, ``arrives_at``, ``latency_s``,
``arrived``, ``bridge`` (the ``[[bridges]]`` entry's name), and in USD at the scenario's prices
``amount_usd``, ``fee_usd``, ``gas_usd`` (the source transaction, paid in the native coin) and
``cost_usd`` (fee and gas). USD figures are NaN for a token the scenario does not price.

>>> from toolkit.backtest import generate_flow, replay
>>> result = replay(generate_flow("default", span_h=0.2, seed=1), "default", seed=1)
>>> result.inventory.columns[:4], result.transfers.columns[:3]
(['t', 'chain', 'token', 'on_chain'], ['transfer_id', 'token', 'src_chain'])
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import polars as pl

from toolkit.backtest.sampler import INVENTORY_FIELDS
from toolkit.engine import Transfer
from toolkit.scenario import Scenario

__all__ = [
    "INVENTORY_SCHEMA",
    "TRANSFERS_SCHEMA",
    "RebalancingCost",
    "inventory_frame",
    "rebalancing_figures",
    "transfers_frame",
    "usd",
]

#: The ``inventory`` frame's columns and types.
INVENTORY_SCHEMA: dict[str, pl.DataType] = {
    "t": pl.Float64(),
    "chain": pl.Int64(),
    "token": pl.String(),
    **{name: pl.Int128() for name in INVENTORY_FIELDS},
    "share": pl.Float64(),
}
#: The ``transfers`` frame's columns and types.
TRANSFERS_SCHEMA: dict[str, pl.DataType] = {
    "transfer_id": pl.Int64(),
    "token": pl.String(),
    "src_chain": pl.Int64(),
    "dst_chain": pl.Int64(),
    "amount": pl.Int128(),
    "fee": pl.Int128(),
    "received": pl.Int128(),
    "sent_at": pl.Float64(),
    "arrives_at": pl.Float64(),
    "latency_s": pl.Float64(),
    "arrived": pl.Boolean(),
    "bridge": pl.String(),
    "amount_usd": pl.Float64(),
    "fee_usd": pl.Float64(),
    "gas_usd": pl.Float64(),
    "cost_usd": pl.Float64(),
}


def usd(scenario: Scenario, symbol: str, amount: int) -> float:
    """``amount`` smallest units of ``symbol`` in USD at the scenario's price (NaN unpriced).

    >>> from toolkit.scenario import load_scenario
    >>> usd(load_scenario("default"), "WETH", 10**18), usd(load_scenario("single-pool"), "USDC", 1)
    (3000.0, nan)
    """
    price = scenario.pricing.price_usd(symbol)
    if price is None:
        return math.nan
    decimals = next(t.decimals for t in scenario.tokens if t.symbol == symbol)
    return amount / 10**decimals * float(price)


def inventory_frame(samples: Mapping[str, list[Any]]) -> pl.DataFrame:
    """The ``inventory`` frame from the sampler's columns (see the module docstring)."""
    figure: dict[tuple[float, str], int] = {}
    for t, token, held, coming, owed in zip(
        samples["t"],
        samples["token"],
        samples["on_chain"],
        samples["in_flight_in"],
        samples["receivable_in"],
        strict=True,
    ):
        figure[(t, token)] = figure.get((t, token), 0) + held + coming + owed
    shares = [
        (held + coming + owed) / figure[(t, token)] if figure[(t, token)] else 0.0
        for t, token, held, coming, owed in zip(
            samples["t"],
            samples["token"],
            samples["on_chain"],
            samples["in_flight_in"],
            samples["receivable_in"],
            strict=True,
        )
    ]
    columns = {name: samples[name] for name in ("t", "chain", "token", *INVENTORY_FIELDS)}
    return pl.DataFrame({**columns, "share": shares}, schema=INVENTORY_SCHEMA)


def transfers_frame(transfers: Iterable[Transfer], scenario: Scenario) -> pl.DataFrame:
    """The ``transfers`` frame (see the module docstring).

    >>> from toolkit.scenario import load_scenario
    >>> transfers_frame([], load_scenario("default")).height
    0
    """
    rows = []
    for t in transfers:
        fee_usd = usd(scenario, t.token, t.fee)
        rows.append(
            (
                t.id,
                t.token,
                t.src_chain,
                t.dst_chain,
                t.amount,
                t.fee,
                t.amount - t.fee,
                t.sent_at,
                t.arrives_at,
                t.arrives_at - t.sent_at,
                t.arrived,
                t.bridge,
                usd(scenario, t.token, t.amount),
                fee_usd,
                t.gas_usd,
                fee_usd + t.gas_usd,
            )
        )
    return pl.DataFrame(rows, schema=TRANSFERS_SCHEMA, orient="row")


class RebalancingCost(NamedTuple):
    """What rebalancing moved and cost over a run: ``transfers`` (a count), the volume sent and
    the bridges' fees by token (smallest units, exact), and in USD the volume, the fees, the
    source transactions' gas and their sum, ``cost_usd``."""

    transfers: int
    volume_by_token: dict[str, int]
    fees_by_token: dict[str, int]
    volume_usd: float
    fees_usd: float
    gas_usd: float
    cost_usd: float


def rebalancing_figures(transfers: Iterable[Transfer], scenario: Scenario) -> RebalancingCost:
    """The :class:`RebalancingCost` figures of ``transfers`` at ``scenario``'s prices.

    >>> from toolkit.scenario import load_scenario
    >>> rebalancing_figures([], load_scenario("default")).cost_usd
    0.0
    """
    volume: dict[str, int] = {}
    fees: dict[str, int] = {}
    count = 0
    gas: list[float] = []
    for t in transfers:
        count += 1
        volume[t.token] = volume.get(t.token, 0) + t.amount
        fees[t.token] = fees.get(t.token, 0) + t.fee
        gas.append(t.gas_usd)
    volume_usd = math.fsum(usd(scenario, s, a) for s, a in volume.items())
    fees_usd = math.fsum(usd(scenario, s, a) for s, a in fees.items())
    gas_usd = math.fsum(gas)
    return RebalancingCost(count, volume, fees, volume_usd, fees_usd, gas_usd, fees_usd + gas_usd)
