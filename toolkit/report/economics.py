"""The backtest's economics for people: pool totals priced in USD and whole tokens, and the
assumptions printed beside the figures. The figures themselves (return on capital, capital
against the 404 rate) are :mod:`toolkit.models.economics`.

>>> frame = pl.DataFrame({"run_id": ["bt"], "pool": ["p"], "chain": [8453], "token": ["USDC"],
...     "pool_type": ["intents"], "capital": [2_000_000], "fee_revenue": [10_000],
...     "start_t": [0.0], "end_t": [3600.0], "mean_utilization": [0.5]})
>>> priced_pool_totals(frame).select("label", "capital_tokens", "fee_revenue_tokens").row(0)
('Base USDC (intents)', 2.0, 0.01)
"""

from __future__ import annotations

import polars as pl

from toolkit.models.economics import POOLS_SCHEMA
from toolkit.report.units import chain_name, usd, whole_tokens

__all__ = ["capital_assumptions", "economics_assumptions", "priced_pool_totals"]


def priced_pool_totals(totals: pl.DataFrame) -> pl.DataFrame:
    """The store's backtest pool totals in the units :mod:`toolkit.models.economics` takes.

    Parameters
    ----------
    totals : polars.DataFrame
        Per pool of a backtest (:func:`toolkit.store.queries.backtest_pool_totals`): run_id,
        pool, chain, token, pool_type, capital and fee_revenue (smallest units), start_t,
        end_t, mean_utilization.

    Returns
    -------
    polars.DataFrame
        :data:`toolkit.models.economics.POOLS_SCHEMA`: a ``label``, the chain's name, capital
        and fee revenue in whole tokens and in USD (null without a stored price).

    Examples
    --------
    >>> frame = pl.DataFrame({"run_id": ["bt"], "pool": ["p"], "chain": [8453], "token": ["USDC"],
    ...     "pool_type": ["intents"], "capital": [2_000_000], "fee_revenue": [10_000],
    ...     "start_t": [0.0], "end_t": [3600.0], "mean_utilization": [0.5]})
    >>> priced_pool_totals(frame).select("label", "capital_tokens", "capital_usd").row(0)
    ('Base USDC (intents)', 2.0, None)
    """
    rows = []
    for r in totals.iter_rows(named=True):
        chain, token = r["chain"], r["token"]
        rows.append(
            {
                "run_id": r["run_id"],
                "pool": r["pool"],
                "label": f"{chain_name(chain)} {token} ({r['pool_type']})",
                "chain": chain_name(chain),
                "token": token,
                "pool_type": r["pool_type"],
                "capital_tokens": whole_tokens(r["capital"], chain, token),
                "capital_usd": usd(r["capital"], chain, token),
                "fee_revenue_tokens": whole_tokens(r["fee_revenue"], chain, token),
                "fee_revenue_usd": usd(r["fee_revenue"], chain, token),
                "start_t": r["start_t"],
                "end_t": r["end_t"],
                "mean_utilization": r["mean_utilization"],
            }
        )
    return pl.DataFrame(rows, schema=POOLS_SCHEMA, orient="row")


def economics_assumptions(pools: pl.DataFrame) -> str:
    """What the return figures assume, in one line to print on or beside them.

    Parameters
    ----------
    pools : polars.DataFrame
        :func:`toolkit.models.economics.pool_economics`'s frame (its ``total`` row is read:
        ``capital_usd``, ``span_hours``).

    Returns
    -------
    str
        The assumptions; ``Assumptions: no backtest stored`` without a total row.

    Examples
    --------
    >>> frame = pl.DataFrame({"pool": ["total"], "capital_usd": [2e7], "span_hours": [24.0]})
    >>> economics_assumptions(frame).split(";")[0]
    'Assumptions: fee revenue of one simulated 24 h backtest on $20.0M of pool capital'
    """
    total = pools.filter(pl.col("pool") == "total")
    if total.height == 0:
        return "Assumptions: no backtest stored"
    span = float(total["span_hours"][0])
    capital = float(total["capital_usd"][0])
    rebalancing = (
        total["rebalancing_cost_usd"][0] if "rebalancing_cost_usd" in total.columns else None
    )
    cost = "no rebalancing cost stored"
    if rebalancing is not None:
        cost = f"rebalancing (bridge fees and gas, ${float(rebalancing):,.0f}) off the net return"
    return (
        f"Assumptions: fee revenue of one simulated {span:g} h backtest on "
        f"${capital / 1e6:.1f}M of pool capital; capital = each pool's starting balance; "
        "annualised simply (× 365 days / span, no compounding); USD at the scenario's prices; "
        f"the fills' gas netted in the fee revenue; {cost}; no hedging costs"
    )


def capital_assumptions(sweep: pl.DataFrame) -> str:
    """What the capital-against-404 figure assumes, in one line.

    Parameters
    ----------
    sweep : polars.DataFrame
        :func:`toolkit.models.economics.capital_sweep`'s frame (its ``requests`` column).

    Returns
    -------
    str
        The assumptions, naming the flow's number of requests.

    Examples
    --------
    >>> frame = pl.DataFrame({"requests": [2_600, 2_600]})
    >>> capital_assumptions(frame).split(";")[0][:64]
    'Assumptions: the same flow of 2,600 requests replayed at every p'
    """
    requests = int(sweep["requests"].max()) if sweep.height else 0  # type: ignore[arg-type]
    return (
        f"Assumptions: the same flow of {requests:,} requests replayed at every pool_scale "
        "(and rebalancing policy); 404 share = requests refused for capacity; return annualised "
        "simply from the backtest's span, capital = starting balances; the net return deducts "
        "rebalancing (bridge fees and gas)"
    )
