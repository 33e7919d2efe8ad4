"""A replay's figures: :class:`BacktestSummary`, built from the loop's trace by
:func:`summarize`.

Counts are requests or RFQ attempts; shares are in [0, 1]; amounts are exact integers in the
token's smallest units, by pool id (``chain:TOKEN:name``), by holding (``chain:TOKEN``) or by
token symbol; USD figures are floats at the scenario's prices (NaN for a token it does not
price); times are virtual seconds.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from toolkit.backtest.inventory import rebalancing_figures, usd
from toolkit.backtest.loop import EXPIRED, FILLED, NO_CAPACITY, NO_ROUTE, Trace
from toolkit.flows import FlowColumns
from toolkit.models.economics import YEAR_S
from toolkit.models.health.results import Row
from toolkit.scenario import Scenario

__all__ = ["BacktestSummary", "summarize"]


@dataclass(frozen=True)
class BacktestSummary(Row):
    """The figures of one replay of ``scenario`` with ``seed``.

    - counts: ``requests``, ``attempts`` (RFQs sent, retries included), ``rejected_attempts``
      (answered 404) and one per outcome: ``filled``, ``expired``, ``no_capacity``,
      ``no_route``;
    - shares: ``fill_share`` and ``no_capacity_share`` of requests, ``rfq_404_share`` of
      attempts; ``mean_attempts`` per request;
    - ``end_s``: when the last reservation lapsed or the last fill settled (every pool is idle
      from then on);
    - by pool id: ``fee_revenue``, ``balance_start``, ``balance_end`` (read from the engine, so
      that it can be checked against the revenue), ``peak_utilization_share`` and
      ``mean_utilization_share`` (over the samples);
    - by token symbol: ``fee_revenue_by_token`` and ``volume_by_token`` (filled output);
    - the rebalancing ``policy`` these figures assume; ``transfers`` sent, by token
      ``rebalanced_by_token`` (amounts sent) and ``rebalancing_fees_by_token`` (the bridges'
      fees), and in USD ``rebalanced_volume_usd``, ``rebalancing_fees_usd``,
      ``rebalancing_gas_usd`` (the source transactions) and ``rebalancing_cost_usd`` (both),
      ``rebalancing_cost_bps`` of ``filled_volume_usd``;
    - economics in USD: ``capital_usd`` (the pools' opening balances), ``fee_revenue_usd``
      (what the service earned: input less output less the fills' gas), ``fill_gas_usd`` (that
      gas, paid in the native coin: a cost line), ``annualised_return_pct`` (fee revenue over
      capital, as a simple annual rate over ``end_s``) and ``net_annualised_return_pct`` (the
      same net of rebalancing);
    - by holding (``chain:TOKEN``): ``inventory_start`` and ``inventory_end``, the tokens the
      service held there at the first and last samples.

    :meth:`to_frame` gives the scalar figures as one row, :meth:`by_pool`, :meth:`by_token`
    and :meth:`by_chain` the mappings as one row per pool, token or holding.

    >>> from toolkit.backtest import generate_flow, replay
    >>> s = replay(generate_flow("single-pool", span_h=0.1, seed=1), "single-pool").summary
    >>> s.requests, s.to_frame().columns[:4]
    (180, ['scenario', 'seed', 'requests', 'attempts'])
    >>> s.by_pool().columns[:4]
    ['pool', 'balance_start', 'balance_end', 'fee_revenue']
    """

    scenario: str
    seed: int
    requests: int
    attempts: int
    rejected_attempts: int
    filled: int
    expired: int
    no_capacity: int
    no_route: int
    fill_share: float
    no_capacity_share: float
    rfq_404_share: float
    mean_attempts: float
    end_s: float
    fee_revenue: dict[str, int]
    fee_revenue_by_token: dict[str, int]
    volume_by_token: dict[str, int]
    balance_start: dict[str, int]
    balance_end: dict[str, int]
    peak_utilization_share: dict[str, float]
    mean_utilization_share: dict[str, float]
    policy: str
    filled_volume_usd: float
    capital_usd: float
    fee_revenue_usd: float
    fill_gas_usd: float
    transfers: int
    rebalanced_volume_usd: float
    rebalancing_fees_usd: float
    rebalancing_gas_usd: float
    rebalancing_cost_usd: float
    rebalancing_cost_bps: float
    annualised_return_pct: float
    net_annualised_return_pct: float
    rebalanced_by_token: dict[str, int]
    rebalancing_fees_by_token: dict[str, int]
    inventory_start: dict[str, int]
    inventory_end: dict[str, int]

    def to_frame(self) -> pl.DataFrame:
        """The scalar figures as a one-row polars frame (the mappings: :meth:`by_pool`,
        :meth:`by_token`)."""
        return pl.DataFrame([{k: v for k, v in self.as_dict().items() if not isinstance(v, dict)}])

    def by_pool(self) -> pl.DataFrame:
        """One row per pool of the scenario: ``pool``, ``balance_start``, ``balance_end``,
        ``fee_revenue`` (smallest units, exact) and the utilization shares."""
        pools = list(self.balance_start)
        return pl.DataFrame(
            {
                "pool": pools,
                "balance_start": [self.balance_start[p] for p in pools],
                "balance_end": [self.balance_end.get(p) for p in pools],
                "fee_revenue": [self.fee_revenue.get(p, 0) for p in pools],
                "peak_utilization_share": [self.peak_utilization_share[p] for p in pools],
                "mean_utilization_share": [self.mean_utilization_share[p] for p in pools],
            },
            schema={
                "pool": pl.String,
                "balance_start": pl.Int128,
                "balance_end": pl.Int128,
                "fee_revenue": pl.Int128,
                "peak_utilization_share": pl.Float64,
                "mean_utilization_share": pl.Float64,
            },
        )

    def by_token(self) -> pl.DataFrame:
        """One row per token symbol: ``token``, ``fee_revenue`` and ``volume`` (filled output),
        smallest units, exact."""
        tokens = list(self.fee_revenue_by_token)
        return pl.DataFrame(
            {
                "token": tokens,
                "fee_revenue": [self.fee_revenue_by_token[t] for t in tokens],
                "volume": [self.volume_by_token[t] for t in tokens],
            },
            schema={"token": pl.String, "fee_revenue": pl.Int128, "volume": pl.Int128},
        )

    def by_chain(self) -> pl.DataFrame:
        """One row per holding (chain and token): ``chain``, ``token``, ``on_chain_start``,
        ``on_chain_end`` and ``change`` (smallest units, exact).

        >>> from toolkit.backtest import generate_flow, replay
        >>> s = replay(generate_flow("single-pool", span_h=0.1, seed=1), "single-pool").summary
        >>> s.by_chain().select("chain", "token", "change").rows()[0][:2]
        (1, 'USDC')
        """
        keys = list(self.inventory_start)
        start = [self.inventory_start[k] for k in keys]
        end = [self.inventory_end[k] for k in keys]
        return pl.DataFrame(
            {
                "chain": [int(k.split(":")[0]) for k in keys],
                "token": [k.split(":")[1] for k in keys],
                "on_chain_start": start,
                "on_chain_end": end,
                "change": [b - a for a, b in zip(start, end, strict=True)],
            },
            schema={
                "chain": pl.Int64,
                "token": pl.String,
                "on_chain_start": pl.Int128,
                "on_chain_end": pl.Int128,
                "change": pl.Int128,
            },
        )


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def _per_pool_utilization(
    scenario: Scenario, pools: pl.DataFrame
) -> tuple[dict[str, float], dict[str, float]]:
    """Each pool's peak and mean utilization over the samples (0 for a pool never sampled)."""
    per_pool: dict[str, list[float]] = {p.id: [] for p in scenario.pools}
    for pool_id, u in zip(pools["pool"].to_list(), pools["utilization"].to_list(), strict=True):
        per_pool[pool_id].append(u)
    peak = {pool_id: max(values) if values else 0.0 for pool_id, values in per_pool.items()}
    # fsum is exactly rounded, so the mean does not depend on summation order.
    mean = {
        pool_id: math.fsum(values) / len(values) if values else 0.0
        for pool_id, values in per_pool.items()
    }
    return peak, mean


def _per_token(
    scenario: Scenario, flow: FlowColumns, trace: Trace
) -> tuple[dict[str, int], dict[str, int]]:
    """Fee revenue and filled volume by token symbol, in smallest units."""
    by_token = {p.token: 0 for p in scenario.pools}
    volume = {p.token: 0 for p in scenario.pools}
    symbols = [symbol for _, _, symbol in flow.routes]
    route, outputs, earned = flow.route, trace.output_amount, trace.earned
    # Summed in Python: polars sums of Int128 columns wrap around silently on overflow.
    for k in [k for k, filled in enumerate(trace.filled_at) if filled is not None]:
        symbol = symbols[route[k]]
        volume[symbol] += outputs[k]  # type: ignore[operator]
        gained = earned[k]
        if gained is not None:
            by_token[symbol] += gained
    return by_token, volume


def _holdings(trace: Trace) -> tuple[dict[str, int], dict[str, int]]:
    """Each holding's ``on_chain`` at the first and at the last inventory sample."""
    samples = trace.inventory
    times = samples["t"]
    first, last = times[0] if times else None, times[-1] if times else None
    start: dict[str, int] = {}
    end: dict[str, int] = {}
    for t, chain, token, held in zip(
        times, samples["chain"], samples["token"], samples["on_chain"], strict=True
    ):
        if t == first:
            start[f"{chain}:{token}"] = held
        if t == last:
            end[f"{chain}:{token}"] = held
    return start, end


def _economics(
    scenario: Scenario, flow: FlowColumns, trace: Trace, volume: Mapping[str, int]
) -> dict[str, float]:
    """The USD figures of the summary's economics (see :class:`BacktestSummary`)."""
    symbols = [symbol for _, _, symbol in flow.routes]
    revenue: list[float] = []
    gas: list[float] = []
    for k, filled in enumerate(trace.filled_at):
        earned = trace.earned[k]
        if filled is None or earned is None:
            continue
        symbol = symbols[flow.route[k]]
        revenue.append(usd(scenario, symbol, earned))
        cost = trace.input_amount[k] - trace.output_amount[k] - earned  # type: ignore[operator]
        gas.append(usd(scenario, symbol, cost))
    capital = math.fsum(usd(scenario, p.token, p.balance) for p in scenario.pools)
    filled_usd = math.fsum(usd(scenario, symbol, amount) for symbol, amount in volume.items())
    return {
        "filled_volume_usd": filled_usd,
        "capital_usd": capital,
        "fee_revenue_usd": math.fsum(revenue),
        "fill_gas_usd": math.fsum(gas),
    }


def _annualised_pct(revenue_usd: float, capital_usd: float, span_s: float) -> float:
    if not capital_usd > 0 or not span_s > 0:
        return math.nan
    return 100.0 * revenue_usd / capital_usd * YEAR_S / span_s


def summarize(
    scenario: Scenario,
    seed: int,
    flow: FlowColumns,
    trace: Trace,
    pools: pl.DataFrame,
    final_balances: Mapping[str, int],
) -> BacktestSummary:
    """The :class:`BacktestSummary` of a replay of ``flow`` on ``scenario``: its ``trace``,
    its ``pools`` samples and the engine's ``final_balances`` by pool id."""
    n = len(flow.t)
    tally = Counter(trace.outcome)
    attempts = sum(trace.attempts)
    by_token, volume = _per_token(scenario, flow, trace)
    peak, mean = _per_pool_utilization(scenario, pools)
    money = _economics(scenario, flow, trace, volume)
    moved = rebalancing_figures(trace.transfers, scenario)
    start, end = _holdings(trace)
    filled_usd = money["filled_volume_usd"]
    return BacktestSummary(
        scenario=scenario.name,
        seed=seed,
        requests=n,
        attempts=attempts,
        rejected_attempts=trace.rejected,
        filled=tally[FILLED],
        expired=tally[EXPIRED],
        no_capacity=tally[NO_CAPACITY],
        no_route=tally[NO_ROUTE],
        fill_share=_ratio(tally[FILLED], n),
        no_capacity_share=_ratio(tally[NO_CAPACITY], n),
        rfq_404_share=_ratio(trace.rejected, attempts),
        mean_attempts=_ratio(attempts, n),
        end_s=trace.end,
        fee_revenue=dict(trace.revenue),
        fee_revenue_by_token=by_token,
        volume_by_token=volume,
        balance_start={p.id: p.balance for p in scenario.pools},
        # Read from the engine, not derived from revenue, so that the two can be checked.
        balance_end=dict(final_balances),
        peak_utilization_share=peak,
        mean_utilization_share=mean,
        policy=trace.policy,
        **money,
        transfers=moved.transfers,
        rebalanced_volume_usd=moved.volume_usd,
        rebalancing_fees_usd=moved.fees_usd,
        rebalancing_gas_usd=moved.gas_usd,
        rebalancing_cost_usd=moved.cost_usd,
        rebalancing_cost_bps=1e4 * moved.cost_usd / filled_usd if filled_usd else 0.0,
        annualised_return_pct=_annualised_pct(
            money["fee_revenue_usd"], money["capital_usd"], trace.end
        ),
        net_annualised_return_pct=_annualised_pct(
            money["fee_revenue_usd"] - moved.cost_usd, money["capital_usd"], trace.end
        ),
        rebalanced_by_token=moved.volume_by_token,
        rebalancing_fees_by_token=moved.fees_by_token,
        inventory_start=start,
        inventory_end=end,
    )
