"""The run log, the resume helpers and credential stripping."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime

import polars as pl
import pytest

from toolkit.store import Store, StoreError, polars_schema, stored_url
from toolkit.urls import has_credentials

RfqFrame = Callable[..., pl.DataFrame]
T0 = datetime(2024, 5, 1, tzinfo=UTC)


def test_target_url_is_stored_without_credentials(store: Store) -> None:
    # A fixed id: a uuid4 contains "abc" about once in 140 runs, failing the scan below.
    run = store.start_run("rfq", {}, "https://user:pass@host/x?apiKey=abc", run_id="run-1")
    stored = store.run_record(run)["target_url"]
    assert stored == "https://host/x?apiKey=***"
    for secret in ("user", "pass", "abc"):
        assert secret not in stored
    everything = store.query("SELECT * FROM collection_runs")
    assert not any(
        secret in str(value)
        for row in everything.rows()
        for value in row
        for secret in ("pass", "abc")
    )


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://u:p@host:8443/a/b?chain=1&api_key=k&X-Auth-Token=t#frag",
            "https://host:8443/a/b?chain=1&api_key=***&X-Auth-Token=***#frag",
        ),
        ("http://[::1]:8080/x?token=secret&page=2", "http://[::1]:8080/x?token=***&page=2"),
        ("wss://host/stream#access_token=abc&view=1", "wss://host/stream#access_token=***&view=1"),
        ("https://host", "https://host"),
        ("https://onlyuser@host/x", "https://host/x"),
    ],
)
def test_stored_url(url: str, expected: str) -> None:
    assert stored_url(url) == expected
    assert not has_credentials(stored_url(url))


@pytest.mark.parametrize("url", ["", "host/path", "user:pass@host/x", "https://host:notaport/x"])
def test_stored_url_refuses_what_is_not_an_absolute_url(url: str) -> None:
    with pytest.raises(StoreError, match=r"^target_url: "):
        stored_url(url)


def test_run_lifecycle(store: Store, rfq_frame: RfqFrame) -> None:
    run = store.start_run(
        "rfq", {"rounds": 3, "chains": [1, 8453]}, "https://host/api", started_at=T0
    )
    assert uuid.UUID(run).version == 4
    record = store.run_record(run)
    assert record["status"] == "running"
    assert record["parameters"] == {"chains": [1, 8453], "rounds": 3}
    assert record["started_at"] == T0
    assert record["ended_at"] is None
    store.append("rfq_observations", rfq_frame(["a", "b"], run_id=run))
    store.append("rfq_observations", rfq_frame(["c"], run_id="someone-else"))
    store.finish_run(run, "interrupted", ended_at=T0)
    assert store.run_record(run)["rows_written"] == 2  # counted across tables for this run only
    with pytest.raises(StoreError, match=f"run_id: run '{run}' is interrupted, not running"):
        store.finish_run(run, "completed")
    store.resume_run(run)
    assert store.attempt_ids(run) == {"a", "b"}
    store.finish_run(run, "completed", rows_written=40)
    done = store.run_record(run)
    assert (done["status"], done["rows_written"], done["ended_at"] is not None) == (
        "completed",
        40,
        True,
    )
    with pytest.raises(StoreError, match="is completed; start a new run instead"):
        store.resume_run(run)


def test_given_run_ids_are_unique(store: Store) -> None:
    store.start_run("backtest", {"seed": 7}, "http://embedded", run_id="bt-7")
    with pytest.raises(StoreError, match="run 'bt-7' already exists; use resume_run"):
        store.start_run("backtest", {"seed": 7}, "http://embedded", run_id="bt-7")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda s: s.start_run("lending", {}, "https://h/"),
            "kind: must be one of rfq, borrow, liquidity, snapshot, backtest, chain, swap, "
            "credit, traffic, pools, prices, health; got 'lending'",
        ),
        (lambda s: s.start_run("rfq", [], "https://h/"), "parameters: must be a dict, got list"),
        (
            lambda s: s.start_run("rfq", {"api_key": "k"}, "https://h/"),
            "parameters.api_key: looks like a secret",
        ),
        (
            lambda s: s.start_run("rfq", {"auth": {"password": "x"}}, "https://h/"),
            "parameters.auth: looks like a secret",
        ),
        (
            lambda s: s.start_run("rfq", {"grid": [{"privateKey": "0x1"}]}, "https://h/"),
            "parameters.grid[0].privateKey: looks like a secret",
        ),
        (
            lambda s: s.start_run("rfq", {"when": datetime(2024, 1, 1)}, "https://h/"),
            "parameters: must be JSON-serializable",
        ),
        (
            lambda s: s.start_run("rfq", {"x": float("nan")}, "https://h/"),
            "parameters: must be JSON-serializable",
        ),
        (lambda s: s.start_run("rfq", {}, "not a url"), "target_url: must be an absolute URL"),
        (
            lambda s: s.start_run("rfq", {}, "https://h/", started_at=datetime(2024, 1, 1)),
            "started_at: must be a timezone-aware datetime",
        ),
        (
            lambda s: s.start_run("rfq", {}, "https://h/", run_id=""),
            "run_id: must be a non-empty string",
        ),
        (lambda s: s.finish_run("nope", "completed"), "run_id: no run 'nope' in the store"),
        (
            lambda s: s.finish_run("nope", "running"),
            "status: must be one of completed, interrupted, failed; got 'running'",
        ),
        (
            lambda s: s.finish_run("nope", "completed", rows_written=-1),
            "rows_written: must be a non-negative integer or None",
        ),
        (lambda s: s.run_record("nope"), "run_id: no run 'nope' in the store"),
        (
            lambda s: s.runs("lending"),
            "kind: must be one of rfq, borrow, liquidity, snapshot, backtest, chain, swap, "
            "credit, traffic, pools, prices, health or None",
        ),
        (
            lambda s: s.attempt_ids("r", "transactions"),
            "table: 'transactions' has no attempt_id column; use one of rfq_observations, "
            "borrow_quotes",
        ),
        (lambda s: s.last_event_id(""), "source: must be a non-empty string"),
    ],
)
def test_bad_run_input_is_refused(
    store: Store, call: Callable[[Store], object], message: str
) -> None:
    with pytest.raises(StoreError) as err:
        call(store)
    assert message in str(err.value)
    assert store.runs().height == 0


def test_asset_parameters_are_not_mistaken_for_secrets(store: Store) -> None:
    params = {
        "tokens": ["USDC", "WETH"],
        "src_token": "0xabc",
        "target": "https://u:p@h/x?apiKey=z",
    }
    run = store.start_run("rfq", params, "https://h/")
    assert store.run_record(run)["parameters"] == {
        "src_token": "0xabc",
        "target": "https://h/x?apiKey=***",
        "tokens": ["USDC", "WETH"],
    }


def test_runs_are_listed_oldest_first_and_by_kind(store: Store) -> None:
    late = store.start_run("rfq", {}, "https://h/", started_at=datetime(2024, 6, 1, tzinfo=UTC))
    early = store.start_run("borrow", {}, "https://h/", started_at=T0)
    assert store.runs()["run_id"].to_list() == [early, late]
    assert store.runs("rfq")["run_id"].to_list() == [late]
    assert store.runs()["started_at"].dtype == pl.Datetime("us", "UTC")


def test_resume_points(store: Store, rfq_frame: RfqFrame) -> None:
    assert store.last_event_id("https://host/stream") is None
    events = pl.DataFrame(
        {
            "source": ["https://host/stream"] * 3 + ["https://other/stream"],
            "event_id": [3, 9, 4, 100],
            "event": ["liquidity", "fee", "liquidity", "fee"],
            "received_at": [T0] * 4,
        }
    )
    store.append("liquidity_events", events)
    assert store.last_event_id("https://host/stream") == 9
    # The collector may hold the URL it connected with; the stored source has no credentials.
    assert store.last_event_id("https://u:p@host/stream") == 9
    store.append(
        "borrow_quotes", rfq_frame(["x"]).select("run_id", "attempt_id", "observed_at", "status")
    )
    assert store.attempt_ids("run-1", "borrow_quotes") == {"x"}
    assert store.attempt_ids("run-1") == set()


def test_recording_closes_the_run_with_the_status_of_the_block(store: Store) -> None:
    with store.recording("rfq", {"rounds": 1}, "https://host/api") as done:
        assert store.run_record(done.run_id)["status"] == "running"
    with pytest.raises(KeyboardInterrupt), store.recording("rfq", {}, "https://h/") as stopped:
        raise KeyboardInterrupt
    with pytest.raises(ValueError, match="bad"), store.recording("rfq", {}, "https://h/") as bad:
        raise ValueError("bad")
    statuses = {r.run_id: store.run_record(r.run_id)["status"] for r in (done, stopped, bad)}
    assert statuses == {
        done.run_id: "completed",
        stopped.run_id: "interrupted",
        bad.run_id: "failed",
    }
    assert (done.status, stopped.status, bad.status) == ("completed", "interrupted", "failed")


def test_recording_resumes_a_run_and_counts_its_rows(store: Store) -> None:
    with pytest.raises(KeyboardInterrupt), store.recording("rfq", {}, "https://h/") as first:
        raise KeyboardInterrupt
    with store.recording("rfq", {}, "https://h/", resume=first.run_id, count_rows=len) as again:
        pass
    assert again.run_id == first.run_id
    record = store.run_record(first.run_id)
    assert (record["status"], record["rows_written"]) == ("completed", len(first.run_id))
    with (
        pytest.raises(StoreError, match="is completed"),
        store.recording("rfq", {}, "https://h/", resume=first.run_id),
    ):
        pass


def test_table_returns_the_whole_table_typed_as_the_schema(store: Store) -> None:
    empty = store.table("rfq_observations")
    assert empty.height == 0
    assert empty.schema == polars_schema("rfq_observations")
    with store.recording("snapshot", {}, "https://h/"):
        pass
    runs = store.table("collection_runs")
    assert runs.height == 1 and runs.schema == polars_schema("collection_runs")
    with pytest.raises(StoreError, match="unknown table 'nope'; known tables: "):
        store.table("nope")
