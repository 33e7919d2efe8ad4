"""Reliability: faults on the wire, killed and resumed runs. Every attempt is stored exactly once
and nothing the service answered is lost (checked against the service's own response log)."""

from __future__ import annotations

from collections.abc import Callable, Generator
from contextlib import closing
from typing import Any

import httpx
import polars as pl

from toolkit.client import StreamEvent
from toolkit.clock import WALL
from toolkit.collect import GridPoint, LiquidityStream, RfqSweep
from toolkit.scenario import load_scenario
from toolkit.simulate import Traffic
from toolkit.store import Store

from .conftest import Embedded, Fault, grid_flow

DEFAULT = load_scenario("default")

RFQ = "/partner-intents/rfq"


def rfq_faults(request: httpx.Request, n: int) -> Fault | None:
    if request.url.path != RFQ:
        return None
    if n % 5 == 0 or 30 <= n < 34:  # single 503s, and a burst that outlasts the budget
        return Fault("status", status=503)
    if n % 7 == 0:
        return Fault("timeout")
    if n % 11 == 0:
        return Fault("slow", delay=0.02)
    return None


def test_rfq_sweep_under_5xx_bursts_timeouts_and_slow_answers(
    embedded: Embedded, store: Store, small_grid: list[GridPoint]
) -> None:
    client, transport = embedded.client(rfq_faults)
    result = RfqSweep(
        client,
        store,
        grid=small_grid,
        rounds=3,
        interval_s=15,
        follow_transactions=True,
        progress=False,
    ).run()
    assert result.status == "completed"

    rows = store.query("SELECT * FROM rfq_observations WHERE run_id = ?", [result.run_id])
    # Every attempt the client made is one row, under a unique deterministic id.
    assert rows.height == transport.seen[RFQ]
    assert rows["attempt_id"].n_unique() == rows.height
    by_status = dict(rows.group_by("status").len().iter_rows())
    # What the service answered is all there: its log and the table agree per status.
    for status in (200, 404, 400):
        assert by_status.get(status, 0) == embedded.log.count(RFQ, status)
    injected_503 = sum(1 for path, kind in transport.injected if path == RFQ and kind == "status")
    injected_timeouts = sum(1 for p, kind in transport.injected if p == RFQ and kind == "timeout")
    assert injected_503 > 0 and injected_timeouts > 0
    assert by_status.get(503, 0) == injected_503 + embedded.log.count(RFQ, 503)
    assert by_status.get(0, 0) == injected_timeouts
    assert rows.filter(pl.col("status") == 0)["error"].str.contains("ConnectTimeout").all()
    # Every grid point of every round was visited; retries are numbered from 0 without gaps.
    points = rows.group_by("round", pl.col("attempt_id").str.split(":").list.get(1)).agg(
        pl.col("retry").sort()
    )
    assert points.height == 3 * len(small_grid)
    assert all(r == list(range(len(r))) for r in points["retry"].to_list())
    # Quotes on 200 rows only, with the fee the quote implies.
    ok = rows.filter(pl.col("status") == 200)
    assert ok["quote_id"].null_count() == 0
    assert rows.filter(pl.col("status") != 200)["quote_id"].null_count() == rows.height - ok.height
    assert (ok["fee_bps"] > 0).all()
    # Each 200 quote was followed through the transaction endpoint and the guard.
    tx = store.query("SELECT * FROM transactions WHERE run_id = ?", [result.run_id])
    assert tx.height == ok.height == embedded.log.count("/partner-intents/transaction", 200)
    assert (tx["findings"] == "[]").all() and tx["order_id"].null_count() == 0
    assert result.total_rows == rows.height + tx.height


def test_liquidity_stream_survives_dropped_connections_without_gaps_or_duplicates(
    embedded: Embedded, store: Store, small_grid: list[GridPoint]
) -> None:
    def drops(request: httpx.Request, n: int) -> Fault | None:
        if request.url.path.endswith("/events"):
            # The first connection breaks inside the state snapshot; later ones after 4 events.
            return Fault("drop", after_chunks=5 if n == 1 else 4)
        return None

    client, transport = embedded.client(drops)
    service = embedded.log.state.service
    path = "/liquidity/protocol/partner-escrow/events"
    # The stream ends once it has shown what is proven here (events after two drops), not after
    # a fixed wall time a loaded machine may not fit three connections in; 120 s is a cap only.
    client.liquidity_events = until_events(  # type: ignore[method-assign]
        client.liquidity_events, lambda: transport.seen[path] >= 3, total=12, late=3
    )
    flow = grid_flow(small_grid, spacing=0.01, count=1000, converts_every=2)
    with Traffic(embedded.service, flow, scenario=DEFAULT, clock=WALL):
        result = LiquidityStream(client, store, duration_s=120.0, progress=False).run()
    assert result.status == "completed"
    connections = transport.seen[path]
    assert connections >= 3

    stored = store.query(
        "SELECT event_id, event, reason FROM liquidity_events WHERE run_id = ? ORDER BY event_id",
        [result.run_id],
    )
    ids = stored["event_id"].to_list()
    assert ids == sorted(set(ids)) and len(ids) >= 10
    # The service's own log between the first connection's snapshot and the last stored id:
    snapshot_ids = store.query(
        "SELECT DISTINCT snapshot_id FROM pool_snapshots WHERE starts_with(snapshot_id, ?)",
        [result.run_id + ":stream:"],
    )["snapshot_id"].to_list()
    (start,) = [int(s.rsplit(":", 1)[1]) for s in snapshot_ids]
    expected = [
        e.id
        for e in service.engine.events_since(start)
        if e.id <= ids[-1] and (e.is_liquidity or e.kind == "fee")
    ]
    assert ids == expected


def until_events(
    follow: Callable[..., Generator[StreamEvent, None, None]],
    reconnected: Callable[[], bool],
    *,
    total: int,
    late: int,
) -> Callable[..., Generator[StreamEvent, None, None]]:
    """``follow`` (a client's ``liquidity_events``) ended by its consumer, as a user closes the
    iterator, once ``total`` events have arrived, ``late`` of them after ``reconnected()``."""

    def events(*args: Any, **kwargs: Any) -> Generator[StreamEvent, None, None]:
        count = after = 0
        with closing(follow(*args, **kwargs)) as stream:
            for event in stream:
                yield event
                if not event.snapshot:
                    count += 1
                    after += reconnected()
                if count >= total and after >= late:
                    return

    return events


def test_a_killed_sweep_resumes_and_every_attempt_is_stored_once(
    embedded: Embedded, small_grid: list[GridPoint], tmp_path: object
) -> None:
    path = f"{tmp_path}/runs.duckdb"
    kill_at = {9: "interrupt", 23: "interrupt_after"}

    def killer(request: httpx.Request, n: int) -> Fault | None:
        if request.url.path == RFQ and n in kill_at:
            return Fault(kill_at.pop(n))
        return None

    clock = embedded.clock
    client, transport = embedded.client(killer)
    with Store(path) as store:
        first = RfqSweep(
            client, store, grid=small_grid, rounds=3, interval_s=5, progress=False
        ).run()
        assert first.status == "interrupted"
        assert store.run_record(first.run_id)["status"] == "interrupted"
        stored_first = store.query("SELECT count(*) AS n FROM rfq_observations")["n"][0]
        assert stored_first == first.rows_written == 8

    # A new process: a fresh Store on the same file, the same client.
    with Store(path) as store:
        second = RfqSweep(client, store, progress=False).run(resume=first.run_id)
        assert second.status == "interrupted" and second.run_id == first.run_id
        third = RfqSweep(client, store, progress=False).run(resume=first.run_id)
        assert third.status == "completed"
        run = store.run_record(first.run_id)
        assert run["status"] == "completed"
        # the resumed sweep kept its parameters, and paced its rounds on the client's clock
        assert run["parameters"]["rounds"] == 3 and run["parameters"]["interval"] == 5
        assert 0 < clock.sleeps[-1] <= 5.0
        rows = store.query("SELECT * FROM rfq_observations WHERE run_id = ?", [first.run_id])
        assert rows["attempt_id"].n_unique() == rows.height == run["rows_written"]
        assert rows.height == first.rows_written + second.rows_written + third.rows_written
        visited = {tuple(a.split(":")[:2]) for a in rows["attempt_id"].to_list()}
        assert len(visited) == 3 * len(small_grid)
    # Two requests never became rows: the one stopped before sending, and the one whose answer
    # arrived as Ctrl-C hit; every other request the client sent is stored exactly once.
    assert rows.height == transport.seen[RFQ] - 2


def test_ctrl_c_during_a_stream_flushes_what_was_read(
    embedded: Embedded, store: Store, small_grid: list[GridPoint]
) -> None:
    client, _ = embedded.client()
    stop_after = {"events": 0}

    class Stopping(LiquidityStream):
        def collect(self, run_id, writer, bar, resumed):
            original = bar.update

            def update(n: int = 1) -> None:
                original(n)
                stop_after["events"] += n
                # Past the 36 events of the state snapshot, into the live changes.
                if stop_after["events"] >= 60:
                    raise KeyboardInterrupt

            bar.update = update
            super().collect(run_id, writer, bar, resumed)

    flow = grid_flow(small_grid, spacing=0.01, count=2000)
    with Traffic(embedded.service, flow, scenario=DEFAULT, clock=WALL):
        result = Stopping(client, store, duration_s=10, progress=False).run()
    assert result.status == "interrupted"
    assert store.run_record(result.run_id)["status"] == "interrupted"
    counts = store.query(
        "SELECT (SELECT count(*) FROM liquidity_events) AS changes, "
        "(SELECT count(*) FROM pool_snapshots) AS pools"
    ).row(0)
    # Everything read before Ctrl-C was written: 24 changes after the 36 snapshot events.
    assert counts == (24, 12)
    last = store.last_event_id(LiquidityStream(client, store, progress=False).source)
    flow = grid_flow(small_grid, spacing=0.01, count=2000)
    with Traffic(embedded.service, flow, scenario=DEFAULT, clock=WALL):
        again = LiquidityStream(client, store, duration_s=0.5, progress=False).run(
            resume=result.run_id
        )
    assert again.status == "completed"
    ids = store.query(
        "SELECT event_id FROM liquidity_events WHERE run_id = ? ORDER BY 1", [result.run_id]
    )["event_id"].to_list()
    assert len(ids) == len(set(ids)) and last is not None and max(ids) > last
