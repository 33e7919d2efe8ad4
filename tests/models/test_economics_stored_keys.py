"""A backtest stored before the windows took the ``_s`` suffix still pairs with a new one."""

import json

import polars as pl

from toolkit.models.economics import capital_sweep

# Spelt in two parts so that the rename script (which renames the whole word) leaves it be.
OLD_KEY = "quote" + "_seconds"


def _pools(run_ids: list[str], capital: list[float], fees: list[float]) -> pl.DataFrame:
    n = len(run_ids)
    return pl.DataFrame(
        {
            "run_id": run_ids,
            "pool": ["p"] * n,
            "label": ["p"] * n,
            "chain": ["Base"] * n,
            "token": ["USDC"] * n,
            "pool_type": ["intents"] * n,
            "capital_tokens": capital,
            "capital_usd": capital,
            "fee_revenue_tokens": fees,
            "fee_revenue_usd": fees,
            "start_t": [0.0] * n,
            "end_t": [86_400.0] * n,
            "mean_utilization": [0.5] * n,
        }
    )


def test_an_old_window_override_is_read_under_its_new_name() -> None:
    old = {"seed": 0, "overrides": {OLD_KEY: 30}}
    new = {"seed": 0, "overrides": {"quote_s": 30, "pool_scale": 2}}
    other = {"seed": 0, "overrides": {"quote_s": 60, "pool_scale": 4}}
    runs = pl.DataFrame(
        {
            "run_id": ["old", "new", "other"],
            "requests": [100, 100, 100],
            "refused": [20, 5, 1],
            "parameters": [json.dumps(p) for p in (old, new, other)],
        }
    )
    pools = _pools(["old", "new", "other"], [1e6, 2e6, 4e6], [80.0, 95.0, 99.0])
    table = capital_sweep(runs, pools)
    # The stored run with the old key and the new run at the same 30 s window are one flow at
    # two scales; the 60 s run is another flow and is left out.
    assert table.select("pool_scale", "run_id", "share_404_pct").rows() == [
        (1.0, "old", 20.0),
        (2.0, "new", 5.0),
    ]
