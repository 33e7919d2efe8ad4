"""The capital-placement inputs from a scenario and a flow, and the scenario a placement makes.

:mod:`toolkit.models.placement` searches capital and policy on a surrogate that knows nothing
of scenarios; this module feeds it and turns its answer back into something the engine runs:

- :func:`holding_demands`: each (chain, token) holding's net flow (drift and variance from
  :func:`toolkit.models.netflow.net_flow` of the flow's converted orders), what it delivers, the
  receivables settlements owe it (received × ``settlement_delay_s``), the RFQs it must deliver,
  their sizes and mean reservation (a quote that lapses holds ``quote_s``; a converted one from
  the RFQ to the fill: its conversion delay plus the route's eta), all in USD at the scenario's
  prices;
- :func:`holding_bridgings`: how a transfer reaches each holding: the latency laws, fees and gas
  of every route into it (the ``[[bridges]]`` entries through the engine's bridge model), three
  quantiles of each latency, equally weighted;
- :func:`placement_scenario`: the scenario with a placement's capital (in the holding's largest
  pool: one pool serves an RFQ, so split capital serves smaller orders) and policy: explicit
  ``[[rebalancing.targets]]`` at each holding's share of the token's capital, thresholds at
  ``κ`` times that.

>>> from toolkit.flows import generate_flow
>>> from toolkit.scenario import load_scenario
>>> s = load_scenario("default")
>>> demands = holding_demands(s, generate_flow(s, span_h=24.0, rate_per_s=0.03, seed=1))
>>> [(d.chain, d.token) for d in demands][:2], round(demands[0].hold_s)
([(1, 'USDC'), (1, 'WETH')], 18)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from decimal import ROUND_DOWN, Decimal
from statistics import NormalDist

import numpy as np
import polars as pl

from toolkit.engine.bridges import Bridges
from toolkit.models.inventory import Bridging, HoldingDemand
from toolkit.models.netflow import net_flow, requested_orders
from toolkit.scenario import Scenario
from toolkit.scenario.rebalancing import PERIODIC, THRESHOLD, RebalanceTarget

__all__ = [
    "holding_bridgings",
    "holding_demands",
    "holding_keys",
    "placement_scenario",
    "token_usd",
]

#: Quantiles of a route's latency law that stand for it (equally weighted).
_LATENCY_QUANTILES = (0.2, 0.5, 0.8)
_SHARE_DIGITS = Decimal("0.000000001")


def holding_keys(scenario: Scenario) -> list[tuple[int, str]]:
    """The (chain, token) holdings that have pools, in the scenario's ``[[tokens]]`` order.

    >>> from toolkit.scenario import load_scenario
    >>> holding_keys(load_scenario("single-pool"))
    [(8453, 'USDC')]
    """
    pooled = {(p.chain, p.token) for p in scenario.pools}
    return [(t.chain, t.symbol) for t in scenario.tokens if (t.chain, t.symbol) in pooled]


def token_usd(scenario: Scenario, symbol: str) -> float:
    """USD per smallest unit of ``symbol`` (``ValueError`` naming it when it has no price).

    >>> from toolkit.scenario import load_scenario
    >>> token_usd(load_scenario("default"), "USDC")
    1e-06
    """
    price = scenario.pricing.price_usd(symbol)
    if price is None:
        raise ValueError(f"prices: the scenario has no USD price for {symbol}")
    decimals = next(t.decimals for t in scenario.tokens if t.symbol == symbol)
    return float(price) / 10**decimals


def _holds(scenario: Scenario, flow: pl.DataFrame) -> pl.DataFrame:
    """Each RFQ's destination, token, size in smallest units and mean reservation (s)."""
    etas = pl.DataFrame(
        [(r.src, r.dst, r.token, float(scenario.eta(r.src, r.dst))) for r in scenario.routes],
        schema={
            "src_chain": pl.Int64,
            "dst_chain": pl.Int64,
            "token": pl.String,
            "eta": pl.Float64,
        },
        orient="row",
    )
    quote = float(scenario.windows.quote_s)
    return flow.join(etas, on=["src_chain", "dst_chain", "token"], how="left").select(
        pl.col("dst_chain").alias("chain"),
        "token",
        "amount",
        pl.when(pl.col("converts"))
        .then(pl.col("convert_delay") + pl.col("eta"))
        .otherwise(quote)
        .alias("hold_s"),
    )


def holding_demands(
    scenario: Scenario, flow: pl.DataFrame, *, span_s: float | None = None
) -> list[HoldingDemand]:
    """What ``flow`` asks of each pooled holding of ``scenario`` (module docstring).

    ``flow`` is a flow frame (:data:`toolkit.flows.FLOW_SCHEMA`); ``span_s`` defaults to its
    length in whole hours. Holdings no RFQ reaches get zero figures.
    """
    if span_s is None:
        last = flow["t"].max()
        end = float(last) if isinstance(last, int | float) else 0.0
        span_s = max(3600.0, math.ceil(end / 3600.0) * 3600.0)
    converted = requested_orders(flow.filter(pl.col("converts")))
    net = {
        (r["chain"], r["token"]): r
        for r in net_flow(converted, span_s=span_s).iter_rows(named=True)
    }
    holds = _holds(scenario, flow)
    delay = float(scenario.windows.settlement_delay_s)
    out = []
    for chain, symbol in holding_keys(scenario):
        usd = token_usd(scenario, symbol)
        row = net.get((chain, symbol))
        mine = holds.filter((pl.col("chain") == chain) & (pl.col("token") == symbol))
        sizes = mine["amount"].cast(pl.Float64).to_numpy() * usd
        per_h = 3600.0
        out.append(
            HoldingDemand(
                chain=chain,
                token=symbol,
                drain_usd_per_s=0.0 if row is None else -row["net_per_h"] * usd / per_h,
                variance_usd2_per_s=0.0
                if row is None
                else row["net_variance_per_h"] * usd * usd / per_h,
                delivered_usd_per_s=0.0 if row is None else float(row["delivered"]) * usd / span_s,
                receivable_usd=0.0
                if row is None
                else float(row["received"]) * usd / span_s * delay,
                rfq_per_s=mine.height / span_s,
                hold_s=float(mine["hold_s"].mean() or 0.0),  # type: ignore[arg-type]
                sizes_usd=np.asarray(sizes, dtype=np.float64),
            )
        )
    return out


def holding_bridgings(scenario: Scenario) -> dict[tuple[int, str], Bridging]:
    """How a transfer reaches each pooled holding: every route into it from another chain that
    holds the token, three latency quantiles each, their mean fee share and gas (module
    docstring). A holding no bridge reaches gets no entry."""
    bridges = Bridges(scenario, seed=0)
    keys = holding_keys(scenario)
    out: dict[tuple[int, str], Bridging] = {}
    for chain, symbol in keys:
        latencies: list[float] = []
        fees: list[float] = []
        gas: list[float] = []
        for src, other in keys:
            if other != symbol or src == chain or scenario.bridge(symbol, src, chain) is None:
                continue
            route = bridges.route(symbol, src, chain)
            law = NormalDist(route.mu, route.sigma) if route.sigma > 0 else None
            latencies += [
                route.median_s if law is None else math.exp(law.inv_cdf(q))
                for q in _LATENCY_QUANTILES
            ]
            fees.append(float(route.fee_share))
            gas.append(route.gas_usd)
        if latencies:
            out[(chain, symbol)] = Bridging(
                tuple(latencies), math.fsum(fees) / len(fees), math.fsum(gas) / len(gas)
            )
    return out


def _into_one(pools: list[int], total: int) -> list[int]:
    """``total`` into the pool with the largest opening balance (the first of equals), one
    smallest unit in each other pool: an RFQ is served by one pool, so capital split over pools
    cannot serve an order larger than the largest part."""
    main = max(range(len(pools)), key=lambda i: (pools[i], -i))
    return [total - (len(pools) - 1) if i == main else 1 for i in range(len(pools))]


def placement_scenario(
    scenario: Scenario,
    capital: Mapping[tuple[int, str], int],
    *,
    policy: str,
    threshold_fraction: Mapping[tuple[int, str], float] | None = None,
    period_s: int | None = None,
) -> Scenario:
    """``scenario`` with ``capital`` (smallest units per pooled holding) and ``policy``.

    Under ``threshold`` every pooled holding gets an explicit target, its share of the token's
    capital (rounded down to 1e-9), and a threshold of ``threshold_fraction`` times that;
    ``periodic`` takes ``period_s`` (else the scenario's). The other ``[rebalancing]`` keys and
    the bridges are the scenario's.

    >>> from toolkit.scenario import load_scenario
    >>> s = placement_scenario(load_scenario("single-pool"), {(8453, "USDC"): 10**9},
    ...     policy="none")
    >>> s.pools[0].balance, s.rebalancing.policy
    (1000000000, 'none')
    """
    keys = holding_keys(scenario)
    missing = [k for k in keys if k not in capital]
    if missing or any(k not in keys for k in capital):
        raise ValueError(f"capital: must name every pooled holding {keys} and no other")
    pools_of = {k: sum(1 for p in scenario.pools if (p.chain, p.token) == k) for k in keys}
    for key, amount in capital.items():
        if type(amount) is not int or amount < pools_of[key]:
            raise ValueError(
                f"capital[{key}]: must be a whole number of smallest units >= {pools_of[key]} "
                "(one per pool)"
            )
    balances: dict[int, int] = {}
    for key in keys:
        members = [i for i, p in enumerate(scenario.pools) if (p.chain, p.token) == key]
        parts = _into_one([scenario.pools[i].balance for i in members], capital[key])
        balances.update(zip(members, parts, strict=True))
    pools = tuple(dataclasses.replace(p, balance=balances[i]) for i, p in enumerate(scenario.pools))
    rebalancing = dataclasses.replace(
        scenario.rebalancing,
        policy=policy,
        period_s=period_s if period_s is not None else scenario.rebalancing.period_s,
        targets=_targets(keys, capital, threshold_fraction) if policy == THRESHOLD else (),
    )
    if policy == PERIODIC and rebalancing.period_s is None:
        raise ValueError("period_s: is required for policy periodic")
    return dataclasses.replace(scenario, pools=pools, rebalancing=rebalancing)


def _targets(
    keys: list[tuple[int, str]],
    capital: Mapping[tuple[int, str], int],
    fraction: Mapping[tuple[int, str], float] | None,
) -> tuple[RebalanceTarget, ...]:
    if fraction is None or any(k not in fraction for k in keys):
        raise ValueError("threshold_fraction: must give every pooled holding's κ for threshold")
    totals: dict[str, int] = {}
    for (_, symbol), amount in capital.items():
        totals[symbol] = totals.get(symbol, 0) + amount
    out = []
    for chain, symbol in keys:
        kappa = float(fraction[(chain, symbol)])
        if not 0 <= kappa < 1:
            raise ValueError(f"threshold_fraction[{(chain, symbol)}]: must be in [0, 1)")
        target = (Decimal(capital[(chain, symbol)]) / Decimal(totals[symbol])).quantize(
            _SHARE_DIGITS, rounding=ROUND_DOWN
        )
        threshold = (target * Decimal(str(kappa))).quantize(_SHARE_DIGITS, rounding=ROUND_DOWN)
        out.append(RebalanceTarget(chain, symbol, target, min(threshold, target)))
    return tuple(out)
