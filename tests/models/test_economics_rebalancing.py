"""Economics net of rebalancing: the return after the bridges' fees and gas, the capital sweep
per policy, and rebalancing per chain beside the net flow."""

from __future__ import annotations

import json

import polars as pl
import pytest

from toolkit.models.economics import YEAR_S, capital_sweep, pool_economics
from toolkit.models.netflow import net_flow
from toolkit.models.rebalancing import rebalancing_by_chain


def _pools(runs: dict[str, float]) -> pl.DataFrame:
    """One pool per run: capital in USD (its key's value), 100 USD of fees over a day."""
    n = len(runs)
    return pl.DataFrame(
        {
            "run_id": list(runs), "pool": ["p"] * n, "label": ["p"] * n, "chain": ["Base"] * n,
            "token": ["USDC"] * n, "pool_type": ["usdc"] * n,
            "capital_tokens": list(runs.values()), "capital_usd": list(runs.values()),
            "fee_revenue_tokens": [100.0] * n, "fee_revenue_usd": [100.0] * n,
            "start_t": [0.0] * n, "end_t": [86_400.0] * n, "mean_utilization": [0.1] * n,
        }
    )  # fmt: skip


def test_the_net_return_takes_the_rebalancing_cost_off_the_fees() -> None:
    table = pool_economics(_pools({"bt": 1e6}), "bt", rebalancing_cost_usd=25.0)
    total = table.row(table.height - 1, named=True)
    assert total["annualised_return_pct"] == pytest.approx(100 * 100 / 1e6 * YEAR_S / 86_400)
    assert total["net_annualised_return_pct"] == pytest.approx(100 * 75 / 1e6 * YEAR_S / 86_400)
    assert total["rebalancing_cost_usd"] == 25.0
    # Rebalancing is the book's: pool rows carry none.
    assert table["rebalancing_cost_usd"][0] is None


def test_capital_sweep_keeps_each_policy_apart_on_one_flow() -> None:
    def parameters(scale: float, policy: str | None) -> str:
        overrides: dict[str, object] = {"pool_scale": scale}
        if policy is not None:
            overrides["rebalancing.policy"] = policy
        return json.dumps({"seed": 1, "policy": policy or "threshold", "overrides": overrides})

    settings = [("a", 0.1, "none"), ("b", 1.0, "none"), ("c", 0.1, None), ("d", 1.0, None)]
    runs = pl.DataFrame(
        {
            "run_id": [r for r, _, _ in settings],
            "parameters": [parameters(s, p) for _, s, p in settings],
            "requests": [100] * 4,
            "refused": [30, 2, 10, 0],
        }
    )
    pools = _pools({"a": 1e5, "b": 1e6, "c": 1e5, "d": 1e6})
    costs = pl.DataFrame({"run_id": ["c", "d"], "rebalancing_cost_usd": [40.0, 10.0]})
    sweep = capital_sweep(runs, pools, costs)
    assert sweep.select("policy", "pool_scale", "share_404_pct").rows() == [
        ("none", 0.1, 30.0),
        ("none", 1.0, 2.0),
        ("threshold", 0.1, 10.0),
        ("threshold", 1.0, 0.0),
    ]
    net = dict(zip(sweep["run_id"], sweep["net_annualised_return_pct"], strict=True))
    gross = dict(zip(sweep["run_id"], sweep["annualised_return_pct"], strict=True))
    assert net["a"] == pytest.approx(gross["a"])  # none sends nothing
    assert net["c"] == pytest.approx(gross["c"] * 60 / 100)


def test_rebalancing_per_chain_books_fees_where_transfers_leave() -> None:
    orders = pl.DataFrame(
        {"src_chain": [1, 1, 10], "dst_chain": [10, 10, 1], "token": ["USDC"] * 3,
         "input_amount": [1_000, 1_000, 500], "output_amount": [999, 999, 499]}
    )  # fmt: skip
    moved = pl.DataFrame(
        {"token": ["USDC", "USDC"], "src_chain": [1, 1], "dst_chain": [10, 10],
         "amount": [800, 300], "fee": [2, 1], "gas_usd": [1.5, 1.5], "cost_usd": [1.502, 1.501]}
    )  # fmt: skip
    table = {
        r["chain"]: r
        for r in rebalancing_by_chain(net_flow(orders, span_s=3600.0), moved).iter_rows(named=True)
    }
    assert (table[1]["transfers_out"], table[1]["rebalanced_out"], table[1]["bridge_fees"]) == (
        2,
        1_100,
        3,
    )
    assert (table[10]["transfers_in"], table[10]["rebalanced_in"]) == (2, 1_097)
    assert table[1]["gas_usd"] == pytest.approx(3.0) and table[10]["gas_usd"] == 0.0
    assert table[1]["cost_usd"] == pytest.approx(3.003)
    # The net flow that made them: Ethereum gathers, Optimism drains.
    assert (table[1]["net"], table[10]["net"]) == (1_501, -1_498)
    with pytest.raises(ValueError, match="fee"):
        rebalancing_by_chain(net_flow(orders, span_s=3600.0), moved.drop("fee"))
