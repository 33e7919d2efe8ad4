"""The economics of the backtest: fee revenue in USD, return on pool capital, and capital
against the 404 rate across backtests that differ only in ``pool_scale``.

Capital is each pool's balance at the backtest's first sample; revenue its cumulative fee
revenue at the last (both exact integers in the store, converted here at the default
scenario's USD prices). The annualised return is simple (not compounded):
``revenue / capital × (365 days / span)``.

>>> annualised_pct(10.0, 1_000.0, 86_400.0)
365.0
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import Any

import polars as pl

from toolkit.report.units import chain_name, usd, whole_tokens

__all__ = [
    "YEAR_S",
    "annualised_pct",
    "capital_assumptions",
    "capital_sweep",
    "economics_assumptions",
    "pool_economics",
]

YEAR_S = 365 * 86_400.0


def annualised_pct(revenue: float, capital: float, span_s: float) -> float | None:
    """``revenue / capital`` over ``span_s`` seconds as a simple annual rate in %."""
    if capital <= 0 or span_s <= 0:
        return None
    return 100.0 * revenue / capital * YEAR_S / span_s


def pool_economics(totals: pl.DataFrame, run: str) -> pl.DataFrame:
    """One row per pool of backtest ``run`` (``label``: chain, token and type for people) and
    a ``total`` row (USD columns only):
    capital and fee revenue in whole tokens and USD, return over the span and annualised (%),
    mean utilization (%)."""
    rows: list[dict[str, Any]] = []
    for r in totals.filter(pl.col("run_id") == run).sort("pool").iter_rows(named=True):
        chain, token = r["chain"], r["token"]
        capital_usd = usd(r["capital"], chain, token)
        revenue_usd = usd(r["fee_revenue"], chain, token)
        span = float(r["end_t"] - r["start_t"])
        rows.append(
            {
                "pool": r["pool"],
                "label": f"{chain_name(chain)} {token} ({r['pool_type']})",
                "chain": chain_name(chain),
                "token": token,
                "pool_type": r["pool_type"],
                "capital_tokens": whole_tokens(r["capital"], chain, token),
                "capital_usd": capital_usd,
                "fee_revenue_tokens": whole_tokens(r["fee_revenue"], chain, token),
                "fee_revenue_usd": revenue_usd,
                "return_pct": None
                if not capital_usd or revenue_usd is None
                else 100 * revenue_usd / capital_usd,
                "annualised_return_pct": None
                if capital_usd is None or revenue_usd is None
                else annualised_pct(revenue_usd, capital_usd, span),
                "mean_utilization_pct": 100 * r["mean_utilization"],
                "span_hours": span / 3600,
            }
        )
    frame = pl.DataFrame(rows, schema=_SCHEMA, orient="row")
    if frame.height == 0:
        return frame
    capital = math.fsum(v for v in frame["capital_usd"].to_list() if v is not None)
    revenue = math.fsum(v for v in frame["fee_revenue_usd"].to_list() if v is not None)
    span_h = float(frame["span_hours"].max())  # type: ignore[arg-type]
    total = {
        "pool": "total",
        "label": "all pools",
        "capital_usd": capital,
        "fee_revenue_usd": revenue,
        "return_pct": 100 * revenue / capital if capital else None,
        "annualised_return_pct": annualised_pct(revenue, capital, span_h * 3600),
        "mean_utilization_pct": frame["mean_utilization_pct"].mean(),
        "span_hours": span_h,
    }
    return pl.concat([frame, pl.DataFrame([total], schema=_SCHEMA, orient="row")])


_SCHEMA = {
    "pool": pl.String,
    "label": pl.String,
    "chain": pl.String,
    "token": pl.String,
    "pool_type": pl.String,
    "capital_tokens": pl.Float64,
    "capital_usd": pl.Float64,
    "fee_revenue_tokens": pl.Float64,
    "fee_revenue_usd": pl.Float64,
    "return_pct": pl.Float64,
    "annualised_return_pct": pl.Float64,
    "mean_utilization_pct": pl.Float64,
    "span_hours": pl.Float64,
}


def _flow_key(parameters: dict[str, Any]) -> str:
    """What must match for two backtests to differ only in ``pool_scale``."""
    overrides = {k: v for k, v in dict(parameters.get("overrides") or {}).items()}
    overrides.pop("pool_scale", None)
    same = {k: v for k, v in parameters.items() if k != "overrides"}
    return json.dumps({**same, "overrides": overrides}, sort_keys=True)


def capital_sweep(runs: pl.DataFrame, totals: pl.DataFrame) -> pl.DataFrame:
    """Capital against 404 rate: the largest set of stored backtests that replayed the same
    flow (scenario, seed, requests, other overrides) at two or more ``pool_scale`` values,
    one row per value (the latest run of each); empty when no such set is stored.

    Columns: ``pool_scale, run_id, capital_usd, requests, refused, share_404_pct,
    fee_revenue_usd, annualised_return_pct``.
    """
    groups: dict[str, dict[float, str]] = defaultdict(dict)
    for run_id, text in runs.select("run_id", "parameters").iter_rows():
        parameters = json.loads(text) if text else {}
        scale = float(dict(parameters.get("overrides") or {}).get("pool_scale", 1.0))
        groups[_flow_key(parameters)][scale] = run_id  # runs come oldest first
    best = max(groups.values(), key=len, default={})
    rows = []
    if len(best) >= 2:
        counts = {r: (n, x) for r, n, x in runs.select("run_id", "requests", "refused").rows()}
        for scale in sorted(best):
            run = best[scale]
            economics = pool_economics(totals, run)
            if economics.height == 0:
                continue
            total = economics.row(economics.height - 1, named=True)
            requests, refused = counts[run]
            rows.append(
                (
                    scale,
                    run,
                    total["capital_usd"],
                    requests,
                    refused,
                    100 * refused / requests if requests else None,
                    total["fee_revenue_usd"],
                    total["annualised_return_pct"],
                )
            )
    return pl.DataFrame(
        rows,
        schema={
            "pool_scale": pl.Float64,
            "run_id": pl.String,
            "capital_usd": pl.Float64,
            "requests": pl.Int64,
            "refused": pl.Int64,
            "share_404_pct": pl.Float64,
            "fee_revenue_usd": pl.Float64,
            "annualised_return_pct": pl.Float64,
        },
        orient="row",
    )


def economics_assumptions(pools: pl.DataFrame) -> str:
    """What the return figures assume, in one line to print on or beside them.

    >>> frame = pl.DataFrame({"pool": ["total"], "capital_usd": [2e7], "span_hours": [24.0]})
    >>> economics_assumptions(frame).split(";")[0]
    'Assumptions: fee revenue of one simulated 24 h backtest on $20.0M of pool capital'
    """
    total = pools.filter(pl.col("pool") == "total")
    if total.height == 0:
        return "Assumptions: no backtest stored"
    span = float(total["span_hours"][0])
    capital = float(total["capital_usd"][0])
    return (
        f"Assumptions: fee revenue of one simulated {span:g} h backtest on "
        f"${capital / 1e6:.1f}M of pool capital; capital = each pool's starting balance; "
        "annualised simply (× 365 days / span, no compounding); USD at the scenario's prices; "
        "no gas, rebalancing or hedging costs deducted"
    )


def capital_assumptions(sweep: pl.DataFrame) -> str:
    """What the capital-against-404 figure assumes, in one line.

    >>> frame = pl.DataFrame({"requests": [2_600, 2_600]})
    >>> capital_assumptions(frame).split(";")[0]
    'Assumptions: the same flow of 2,600 requests replayed at every pool_scale'
    """
    requests = int(sweep["requests"].max()) if sweep.height else 0  # type: ignore[arg-type]
    return (
        f"Assumptions: the same flow of {requests:,} requests replayed at every pool_scale; "
        "404 share = requests refused for capacity; return annualised simply from the "
        "backtest's span, capital = starting balances, no costs deducted"
    )
