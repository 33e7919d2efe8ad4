"""The economics of a backtest: fee revenue, return on pool capital before and net of
rebalancing, and capital against the 404 rate across backtests that differ only in
``pool_scale`` and the rebalancing policy.

Input (the frame schema; :func:`toolkit.store.queries.backtest_pool_totals` gives the exact
columns, and the caller prices them into :data:`POOLS_SCHEMA`):

- ``pools``: one row per pool of one or more backtest runs: ``run_id``, ``pool``, ``label``,
  ``chain``, ``token``, ``pool_type`` (text for people), ``capital_tokens`` and
  ``capital_usd`` (the pool's balance at the backtest's first sample), ``fee_revenue_tokens``
  and ``fee_revenue_usd`` (its cumulative fee revenue at the last), ``start_t`` and ``end_t``
  (virtual seconds sampled) and ``mean_utilization`` (a fraction);
- ``runs``: one row per backtest run: ``run_id``, ``parameters`` (the run's JSON text),
  ``requests`` and ``refused`` (requests whose last RFQ got a 404):
  :func:`toolkit.store.queries.backtest_runs`.

- ``rebalancing`` (optional): one row per backtest run, ``run_id`` and
  ``rebalancing_cost_usd`` (bridge fees and the transfers' gas: :func:`toolkit.store.queries.
  backtest_rebalancing`).

The annualised return is simple (not compounded): ``revenue / capital × (365 days / span)``.
Fee revenue is what the service earned, net of the fills' gas (the engine's ``earned``); the
return *net of rebalancing* takes the rebalancing cost off it as well. Under the
``instant-free`` baseline nothing is rebalanced and both returns agree.

>>> annualised_pct(10.0, 1_000.0, 86_400.0)
365.0
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from typing import Any

import polars as pl

__all__ = ["POOLS_SCHEMA", "YEAR_S", "annualised_pct", "capital_sweep", "pool_economics"]

#: Seconds in the 365-day year the annualised return is quoted over.
YEAR_S = 365 * 86_400.0

#: The suffix of a window override's stored key before the ``_s`` convention.
_WINDOW_KEY = re.compile(r"_seconds$")
_NAMES = {name: pl.String for name in ("pool", "label", "chain", "token", "pool_type")}
_AMOUNTS = {
    name: pl.Float64
    for name in ("capital_tokens", "capital_usd", "fee_revenue_tokens", "fee_revenue_usd")
}
#: The ``pools`` input: priced pool totals, one row per pool of each run.
POOLS_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    **{k: v() for k, v in _NAMES.items()},
    **{k: v() for k, v in _AMOUNTS.items()},
    "start_t": pl.Float64(),
    "end_t": pl.Float64(),
    "mean_utilization": pl.Float64(),
}
_SCHEMA = {
    **_NAMES,
    **_AMOUNTS,
    "return_pct": pl.Float64,
    "annualised_return_pct": pl.Float64,
    "mean_utilization_pct": pl.Float64,
    "span_hours": pl.Float64,
    "rebalancing_cost_usd": pl.Float64,
    "net_annualised_return_pct": pl.Float64,
}


def annualised_pct(revenue: float, capital: float, span_s: float) -> float | None:
    """A return over a span as a simple annual rate.

    Parameters
    ----------
    revenue, capital : float
        What was earned and what earned it, in one currency (USD in the report).
    span_s : float
        The seconds over which ``revenue`` was earned.

    Returns
    -------
    float or None
        ``revenue / capital × YEAR_S / span_s`` in %; None when ``capital`` or ``span_s``
        is not positive.

    Examples
    --------
    >>> annualised_pct(1.0, 100.0, YEAR_S / 2)
    2.0
    >>> annualised_pct(1.0, 0.0, 3600.0) is None
    True
    """
    if capital <= 0 or span_s <= 0:
        return None
    return 100.0 * revenue / capital * YEAR_S / span_s


def pool_economics(
    pools: pl.DataFrame, run: str, *, rebalancing_cost_usd: float = 0.0
) -> pl.DataFrame:
    """Capital, fee revenue and return of each pool of one backtest run, and their total.

    Parameters
    ----------
    pools : polars.DataFrame
        Priced pool totals (the module's ``pools`` schema); rows of other runs are ignored.
    run : str
        The backtest's ``run_id``.
    rebalancing_cost_usd : float
        What the run's rebalancing cost (bridge fees and gas), taken off the total's return.

    Returns
    -------
    polars.DataFrame
        One row per pool, sorted by ``pool``, then a ``total`` row (USD columns only):
        ``pool, label, chain, token, pool_type, capital_tokens, capital_usd,
        fee_revenue_tokens, fee_revenue_usd, return_pct`` (over the span),
        ``annualised_return_pct, mean_utilization_pct, span_hours``, and on the total row
        ``rebalancing_cost_usd`` and ``net_annualised_return_pct`` (rebalancing is the book's,
        not a pool's). Empty (same columns) when the run has no pools.

    Examples
    --------
    >>> pools = pl.DataFrame({"run_id": ["bt"], "pool": ["p"], "label": ["Base USDC"],
    ...     "chain": ["Base"], "token": ["USDC"], "pool_type": ["intents"],
    ...     "capital_tokens": [1e6], "capital_usd": [1e6], "fee_revenue_tokens": [100.0],
    ...     "fee_revenue_usd": [100.0], "start_t": [0.0], "end_t": [86_400.0],
    ...     "mean_utilization": [0.25]})
    >>> total = pool_economics(pools, "bt", rebalancing_cost_usd=40.0).row(1, named=True)
    >>> round(total["annualised_return_pct"], 3), round(total["net_annualised_return_pct"], 3)
    (3.65, 2.19)
    """
    rows: list[dict[str, Any]] = []
    for r in pools.filter(pl.col("run_id") == run).sort("pool").iter_rows(named=True):
        capital_usd, revenue_usd = r["capital_usd"], r["fee_revenue_usd"]
        span = float(r["end_t"] - r["start_t"])
        rows.append(
            {
                **{k: r[k] for k in ("pool", "label", "chain", "token", "pool_type")},
                "capital_tokens": r["capital_tokens"],
                "capital_usd": capital_usd,
                "fee_revenue_tokens": r["fee_revenue_tokens"],
                "fee_revenue_usd": revenue_usd,
                "return_pct": None
                if not capital_usd or revenue_usd is None
                else 100 * revenue_usd / capital_usd,
                "annualised_return_pct": None
                if capital_usd is None or revenue_usd is None
                else annualised_pct(revenue_usd, capital_usd, span),
                "mean_utilization_pct": 100 * r["mean_utilization"],
                "span_hours": span / 3600,
                "rebalancing_cost_usd": None,
                "net_annualised_return_pct": None,
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
        "rebalancing_cost_usd": rebalancing_cost_usd,
        "net_annualised_return_pct": annualised_pct(
            revenue - rebalancing_cost_usd, capital, span_h * 3600
        ),
    }
    return pl.concat([frame, pl.DataFrame([total], schema=_SCHEMA, orient="row")])


def _policy(parameters: dict[str, Any]) -> str:
    """The run's rebalancing policy: its override, else the policy it recorded, else the
    baseline runs stored before policies were recorded assumed (``instant-free``)."""
    overrides = dict(parameters.get("overrides") or {})
    return str(overrides.get("rebalancing.policy", parameters.get("policy", "instant-free")))


def _flow_key(parameters: dict[str, Any]) -> str:
    """What must match for two backtests to differ only in ``pool_scale`` and policy."""
    # Runs stored before the scenario windows took the ``_s`` suffix name them ``*_seconds``:
    # read under today's name, so an old run and a new one still match.
    overrides = {
        _WINDOW_KEY.sub("_s", k): v for k, v in (parameters.get("overrides") or {}).items()
    }
    overrides.pop("pool_scale", None)
    overrides.pop("rebalancing.policy", None)
    same = {k: v for k, v in parameters.items() if k not in ("overrides", "policy")}
    return json.dumps({**same, "overrides": overrides}, sort_keys=True)


_SWEEP_SCHEMA = {
    "policy": pl.String,
    "pool_scale": pl.Float64,
    "run_id": pl.String,
    "capital_usd": pl.Float64,
    "requests": pl.Int64,
    "refused": pl.Int64,
    "share_404_pct": pl.Float64,
    "fee_revenue_usd": pl.Float64,
    "annualised_return_pct": pl.Float64,
    "rebalancing_cost_usd": pl.Float64,
    "net_annualised_return_pct": pl.Float64,
}


def capital_sweep(
    runs: pl.DataFrame, pools: pl.DataFrame, rebalancing: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Capital against 404 rate, per rebalancing policy, over the backtests that replayed one
    flow at several scales.

    Parameters
    ----------
    runs : polars.DataFrame
        Backtest runs, oldest first (the module's ``runs`` schema).
    pools : polars.DataFrame
        Priced pool totals of those runs (the module's ``pools`` schema).
    rebalancing : polars.DataFrame, optional
        ``run_id, rebalancing_cost_usd`` (the module's ``rebalancing``); runs missing from it
        (or all, when None) rebalanced nothing.

    Returns
    -------
    polars.DataFrame
        The largest set of runs that replayed the same flow (scenario, seed, requests, other
        overrides) at two or more (policy, ``pool_scale``) settings, one row per setting (the
        latest run of each), sorted by policy then scale: ``policy, pool_scale, run_id,
        capital_usd, requests, refused, share_404_pct, fee_revenue_usd,
        annualised_return_pct, rebalancing_cost_usd, net_annualised_return_pct``; empty when no
        such set is stored.

    Examples
    --------
    >>> runs = pl.DataFrame({"run_id": ["a", "b"], "requests": [100, 100], "refused": [20, 5],
    ...     "parameters": ['{"seed": 0}', '{"seed": 0, "overrides": {"pool_scale": 2}}']})
    >>> pools = pl.DataFrame({"run_id": ["a", "b"], "pool": ["p", "p"], "label": ["p", "p"],
    ...     "chain": ["Base"] * 2, "token": ["USDC"] * 2, "pool_type": ["intents"] * 2,
    ...     "capital_tokens": [1e6, 2e6], "capital_usd": [1e6, 2e6],
    ...     "fee_revenue_tokens": [80.0, 95.0], "fee_revenue_usd": [80.0, 95.0],
    ...     "start_t": [0.0, 0.0], "end_t": [86_400.0, 86_400.0], "mean_utilization": [0.5, 0.3]})
    >>> capital_sweep(runs, pools).select("policy", "pool_scale", "share_404_pct").rows()
    [('instant-free', 1.0, 20.0), ('instant-free', 2.0, 5.0)]
    """
    groups: dict[str, dict[tuple[str, float], str]] = defaultdict(dict)
    for run_id, text in runs.select("run_id", "parameters").iter_rows():
        parameters = json.loads(text) if text else {}
        scale = float(dict(parameters.get("overrides") or {}).get("pool_scale", 1.0))
        # Runs come oldest first: the latest of each setting wins.
        groups[_flow_key(parameters)][(_policy(parameters), scale)] = run_id
    best = max(groups.values(), key=len, default={})
    costs = (
        {}
        if rebalancing is None
        else dict(rebalancing.select("run_id", "rebalancing_cost_usd").rows())
    )
    rows = []
    if len(best) >= 2:
        counts = {r: (n, x) for r, n, x in runs.select("run_id", "requests", "refused").rows()}
        for policy, scale in sorted(best):
            run = best[(policy, scale)]
            cost = float(costs.get(run) or 0.0)
            economics = pool_economics(pools, run, rebalancing_cost_usd=cost)
            if economics.height == 0:
                continue
            total = economics.row(economics.height - 1, named=True)
            requests, refused = counts[run]
            rows.append(
                (
                    policy, scale, run, total["capital_usd"], requests, refused,
                    100 * refused / requests if requests else None, total["fee_revenue_usd"],
                    total["annualised_return_pct"], cost, total["net_annualised_return_pct"],
                )
            )  # fmt: skip
    return pl.DataFrame(rows, schema=_SWEEP_SCHEMA, orient="row")
