"""Writing results to DuckDB, and the ``toolkit backtest`` command."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from toolkit.backtest import generate_flow, replay
from toolkit.client import RetryPolicy
from toolkit.store import Store


def test_to_store_writes_requests_pools_inventory_and_a_run() -> None:
    flow = generate_flow("default", span_h=0.3, rate_per_s=1.0, seed=3)
    result = replay(flow, "default", seed=3, retry=RetryPolicy(capacity_retries=1))
    started = datetime(2024, 5, 1, tzinfo=UTC)
    with Store(":memory:") as store:
        run = result.to_store(store, run_id="bt-test", started_at=started)
        assert run == "bt-test"
        info = store.run_record(run)
        assert (info["kind"], info["status"]) == ("backtest", "completed")
        assert info["parameters"]["scenario"] == "default"
        assert info["parameters"]["retry"]["capacity_retries"] == 1
        assert info["target_url"] == "backtest://default"
        assert info["parameters"]["policy"] == "threshold"
        assert info["rows_written"] == (
            result.requests.height
            + result.pools.height
            + result.inventory.height
            + result.transfers.height
        )
        stored = store.query(
            "SELECT request_id, amount, outcome, filled_at, attributes FROM backtest_requests "
            "WHERE run_id = 'bt-test' ORDER BY request_id"
        )
        assert stored["request_id"].to_list() == result.requests["request_id"].to_list()
        assert stored["amount"].to_list() == result.requests["amount"].to_list()
        assert stored["outcome"].to_list() == result.requests["outcome"].to_list()
        first = pl.Series(stored["attributes"]).str.json_decode().struct.unnest()
        assert first["attempts"].to_list() == result.requests["attempts"].to_list()
        pools = store.query(
            "SELECT pool, t, capacity, attributes FROM backtest_pools WHERE run_id = 'bt-test' "
            "ORDER BY t, pool"
        )
        assert pools.height == result.pools.height
        assert pools["capacity"].dtype == pl.Int128
        held = store.query(
            "SELECT t, chain, token, on_chain, receivable_in, attributes FROM backtest_inventory "
            "WHERE run_id = 'bt-test' ORDER BY t, chain, token"
        )
        expected = result.inventory.sort("t", "chain", "token")
        assert held["on_chain"].dtype == pl.Int128
        assert held["on_chain"].to_list() == expected["on_chain"].to_list()
        assert held["receivable_in"].to_list() == expected["receivable_in"].to_list()
        share = pl.Series(held["attributes"]).str.json_decode().struct.unnest()["share"]
        assert share.to_list() == expected["share"].to_list()
        # Writing the same run twice is refused by the run log, not duplicated.
        with pytest.raises(Exception, match="already exists"):
            result.to_store(store, run_id="bt-test")
