"""The health watch as a follower: its run is resumed by id (not another kind's), and a run
killed without stopping still ends with every alert its watch wrote counted."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import polars as pl
import pytest

from toolkit.client import ServiceClient
from toolkit.collect import HealthWatch
from toolkit.collect.health_follow import HealthFollower
from toolkit.errors import InputError
from toolkit.store import Store, polars_schema


def _follower(store: Store, resume: str | None = None) -> HealthFollower:
    client = ServiceClient("http://127.0.0.1:8700", env={})
    return HealthFollower(HealthWatch(client, None, store, name="risk"), resume=resume)


def _alert(subject: str, block: int) -> dict[str, object]:
    at = datetime(2025, 10, 9, 9, tzinfo=UTC)
    return {"watch": "risk", "chain": 8453, "rule": "hf_below_1.0", "subject": subject,
            "block_number": block, "alert_id": f"risk:8453:hf_below_1.0:{subject}:{block}",
            "state": "breached", "kind": "health_below", "threshold": Decimal("1.0"),
            "value": Decimal("0.9"), "asset": "USDC", "debt": 10**9, "collateral_value": 10**9,
            "block_time": at, "observed_at": at}  # fmt: skip


def test_a_killed_health_run_resumed_counts_every_alert_of_its_watch() -> None:
    store = Store(":memory:")
    first = _follower(store)
    first.start()  # then killed: never stopped
    rows = [_alert("0xa", 10), _alert("0xb", 10)]
    store.append("alerts", pl.DataFrame(rows, schema=polars_schema("alerts")))
    run_id = first.status.run_id
    assert run_id is not None and store.run_record(run_id)["status"] == "running"
    again = _follower(store, resume=run_id)
    again.start()
    again.stop("interrupted")
    record = store.run_record(run_id)
    assert (record["kind"], record["status"], record["rows_written"]) == (
        "health", "interrupted", 2
    )  # fmt: skip
    assert record["parameters"]["rules"][0] == ["hf_below_1.1", "health_below", "1.1", None]


def test_resuming_another_kind_of_run_is_refused_naming_resume() -> None:
    store = Store(":memory:")
    chain_run = store.start_run("chain", {}, "http://node:8545")
    with pytest.raises(InputError, match=f"resume: run {chain_run} is a chain run, not a health"):
        _follower(store, resume=chain_run).start()
