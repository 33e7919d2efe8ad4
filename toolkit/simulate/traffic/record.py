"""Other users' RFQs as the market's observations: the traffic's requests and the service's
answers, stored as a run of kind ``traffic`` in ``rfq_observations``.

A collector's own sweep measures the pools it is itself reserving (every 200 it gets holds
liquidity for the quote's validity, 60 s more for an order it opens), so its 404 share is partly
its own doing. On the embedded service, the background traffic's requests are the market's
demand: their answers are the refusals users meet, each user's request one independent trial.
The report and :func:`toolkit.backtest.calibrate` read them as such (the run's kind tells them
apart from the sweeps).
"""

from __future__ import annotations

import polars as pl

from toolkit.collect.rows import attempt_id, utc
from toolkit.simulate.traffic.replay import Traffic
from toolkit.store import Store

__all__ = ["MARKET_KIND", "record_traffic"]

#: The run kind of the market's observations.
MARKET_KIND = "traffic"


def record_traffic(store: Store, traffic: Traffic) -> str | None:
    """Store the RFQs ``traffic`` has played so far (one row each, ``round`` 0, ``retry`` 0,
    the service's status; no quote details) as one completed run of kind ``traffic``; return
    its id, or None when it played no RFQ.

    >>> import polars as pl
    >>> from toolkit.client import ServiceClient
    >>> from toolkit.clock import ScaledClock
    >>> flow = pl.DataFrame({"t": [0.0, 0.5], "src_chain": [8453, 1], "dst_chain": [1, 8453],
    ...     "token": ["USDC", "USDC"], "amount": [10**9, 10**9],
    ...     "type": ["ExactOutput", "ExactInput"], "converts": [False, False],
    ...     "convert_delay": [0.0, 0.0]})
    >>> fast = ServiceClient(embedded=True, clock=ScaledClock(50.0))
    >>> with fast, Store(":memory:") as store:
    ...     with Traffic(fast.embedded, flow) as traffic:
    ...         traffic.join(timeout=20)
    ...     run = record_traffic(store, traffic)
    ...     store.runs("traffic")["rows_written"].to_list()
    [2]
    """
    outcomes = list(traffic.outcomes)
    if not outcomes:
        return None
    frame = pl.DataFrame(outcomes, infer_schema_length=None).with_columns(
        pl.col("amount").cast(pl.Int128)
    )
    parameters = {
        "scenario": traffic.scenario.name,
        "rfqs": len(outcomes),
        "source": "background traffic: other users' RFQs and the service's answers",
    }
    with store.recording(MARKET_KIND, parameters, traffic.base_url) as run:
        rows = frame.with_columns(
            pl.lit(run.run_id).alias("run_id"),
            pl.Series("attempt_id", [attempt_id(0, i, 0) for i in range(frame.height)]),
            pl.Series("observed_at", [utc(t) for t in frame["observed_at"].to_list()]),
            pl.lit(0, pl.Int32).alias("round"),
            pl.lit(0, pl.Int32).alias("retry"),
        )
        store.append("rfq_observations", rows)
    return run.run_id
