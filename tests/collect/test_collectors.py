"""The collectors one by one: grids, pacing, rows, snapshots, errors and their messages."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import polars as pl
import pytest

from toolkit.client import EmbeddedService, ServiceClient, Unauthorized
from toolkit.collect import (
    BatchWriter,
    BorrowSweep,
    GridPoint,
    LiquidityStream,
    RfqSweep,
    Snapshot,
    discover_routes,
    grid_for,
    tier_amounts,
)
from toolkit.resources import FeeTier
from toolkit.scenario import load_scenario
from toolkit.simulate import Traffic
from toolkit.store import Store, StoreError

from .conftest import Embedded

POINT = GridPoint(8453, 42161, "USDC", "0x" + "aa" * 20, "0x" + "bb" * 20, 10**9, "ExactInput")


def test_grid_points_round_trip_through_json_and_name_bad_fields() -> None:
    big = GridPoint(1, 10, "WETH", "0x" + "aa" * 20, "0x" + "bb" * 20, 2**100, "ExactOutput")
    assert GridPoint.from_json(big.to_json()) == big
    assert big.to_json()["amount"] == str(2**100)
    with pytest.raises(ValueError, match=re.escape("grid.amount: must be an integer >= 1")):
        GridPoint(1, 10, "USDC", "0xa", "0xb", 0, "ExactInput")
    with pytest.raises(
        ValueError, match=re.escape("grid.quote_type: must be one of ExactInput, ExactOutput")
    ):
        GridPoint(1, 10, "USDC", "0xa", "0xb", 5, "Exact")
    with pytest.raises(ValueError, match=re.escape("grid.dst_token: is required")):
        GridPoint.from_json({k: v for k, v in big.to_json().items() if k != "dst_token"})
    with pytest.raises(ValueError, match=re.escape("grid.amount: must be an integer")):
        GridPoint.from_json(big.to_json() | {"amount": "lots"})


def test_tier_amounts_fall_inside_each_tier() -> None:
    tiers = [
        FeeTier(fee_bps=5, min_amount=10_000_000, max_amount=100_000_000_000),
        FeeTier(fee_bps=3, min_amount=100_000_000_000, max_amount=1_000_000_000_000),
    ]
    amounts = tier_amounts(tiers)
    assert len(amounts) == 6
    for index, amount in enumerate(amounts):
        tier = tiers[index // 3]
        assert tier.min_amount < amount < tier.max_amount
    assert amounts == sorted(amounts)
    with pytest.raises(ValueError, match="per_tier: must be an integer >= 1"):
        tier_amounts(tiers, per_tier=0)


def test_default_grid_covers_every_onboarded_route_of_the_target() -> None:
    scenario = load_scenario("default")
    with ServiceClient(embedded=EmbeddedService(scenario)) as client:
        routes = discover_routes(client)
        client.embedded.close()  # type: ignore[union-attr]
    wanted = {
        (r.src, r.dst, r.token)
        for r in scenario.routes
        if r.token in ("USDC", "WETH") and {r.src, r.dst} <= {1, 10, 8453, 42161}
    }
    assert {(r.src_chain, r.dst_chain, r.token) for r in routes} == wanted
    grid = grid_for(routes)
    assert {p.quote_type for p in grid} == {"ExactInput", "ExactOutput"}
    assert len(grid) == sum(2 * 3 * len(r.tiers) for r in routes)


def test_a_spread_sweep_paces_its_points_over_the_interval(
    embedded: Embedded, store: Store, small_grid: list[GridPoint]
) -> None:
    client, _ = embedded.client()
    start = embedded.clock()
    sweep = RfqSweep(
        client, store, grid=small_grid[:4], rounds=2, interval_s=20, spread=True, progress=False
    )
    result = sweep.run()
    assert result.status == "completed"
    rows = store.query("SELECT round, observed_at FROM rfq_observations ORDER BY attempt_id")
    seconds = [round(t.timestamp() - start) for t in rows["observed_at"].to_list()]
    assert seconds == [0, 5, 10, 15, 20, 25, 30, 35]
    assert store.run_record(result.run_id)["parameters"]["spread"] is True
    with pytest.raises(ValueError, match="spread: must be True or False"):
        RfqSweep(client, store, rounds=1, spread="yes")  # type: ignore[arg-type]


def test_rounds_start_every_interval_on_the_fake_clock(
    embedded: Embedded, store: Store, small_grid: list[GridPoint]
) -> None:
    client, _ = embedded.client()
    clock = embedded.clock
    start = clock()
    result = RfqSweep(
        client,
        store,
        grid=small_grid[:3],
        rounds=3,
        interval_s=10,
        progress=False,
    ).run()
    assert result.status == "completed"
    assert clock.sleeps == [10.0, 10.0]
    rows = store.query("SELECT round, observed_at FROM rfq_observations ORDER BY attempt_id")
    assert sorted(set(rows["round"].to_list())) == [0, 1, 2]
    first = rows.filter(pl.col("round") == 2)["observed_at"][0]
    assert first == datetime.fromtimestamp(start + 20, UTC)


def test_a_duration_ends_the_sweep(
    embedded: Embedded, store: Store, small_grid: list[GridPoint]
) -> None:
    client, _ = embedded.client()
    clock = embedded.clock
    result = RfqSweep(
        client,
        store,
        grid=small_grid[:2],
        duration_s=25,
        interval_s=10,
        progress=False,
    ).run()
    assert result.status == "completed"
    rounds = store.query("SELECT DISTINCT round FROM rfq_observations ORDER BY 1")["round"]
    assert rounds.to_list() == [0, 1, 2]
    assert clock.sleeps == [10.0, 10.0, 5.0]
    assert store.run_record(result.run_id)["parameters"]["duration"] == 25.0


def test_borrow_sweep_rows(embedded: Embedded, store: Store, small_grid: list[GridPoint]) -> None:
    client, _ = embedded.client()
    result = BorrowSweep(
        client, store, grid=small_grid[:4], rounds=1, exclusive=True, progress=False
    ).run()
    rows = store.query("SELECT * FROM borrow_quotes WHERE run_id = ?", [result.run_id])
    assert rows.height == 4 == result.rows_written
    ok = rows.filter(pl.col("status") == 200)
    assert ok.height == 4
    assert ok["exclusive"].all() and ok["quote_id"].null_count() == 0
    assert (ok["required_input"] - ok["required_output"] == ok["borrow_cost"]).all()
    assert rows["token"].to_list() == [p.dst_token for p in small_grid[:4]]


def test_an_rfq_sweep_opens_no_order_unless_asked(
    embedded: Embedded, store: Store, small_grid: list[GridPoint]
) -> None:
    # An opened order holds its pool 60 s: a sweep that opened them would measure itself.
    client, _ = embedded.client()
    plain = RfqSweep(client, store, grid=small_grid[:4], rounds=1, progress=False).run()
    assert store.run_record(plain.run_id)["parameters"]["follow_transactions"] is False
    assert store.table("transactions").height == 0
    asked = RfqSweep(
        client, store, grid=small_grid[:2], rounds=1, follow_transactions=True, progress=False
    ).run()
    assert store.table("transactions").filter(run_id=asked.run_id).height == 2


def test_snapshot_of_tokens_pools_and_fee_tiers(embedded: Embedded, store: Store) -> None:
    client, _ = embedded.client()
    scenario = load_scenario("default")
    result = Snapshot(client, store, chains=(8453, 42161), progress=False).run()
    tokens = store.query("SELECT * FROM token_snapshots WHERE snapshot_id = ?", [result.run_id])
    assert tokens.height == sum(1 for t in scenario.tokens if t.chain in (8453, 42161))
    pools = store.query("SELECT * FROM pool_snapshots WHERE snapshot_id = ?", [result.run_id])
    assert sorted(pools.select("chain", "token", "pool_type").rows()) == sorted(
        (p.chain, p.token, p.type) for p in scenario.pools if p.chain in (8453, 42161)
    )
    assert pools["balance"].dtype == pl.Int128
    tiers = store.query("SELECT * FROM fee_tiers WHERE snapshot_id = ?", [result.run_id])
    routes = [r for r in scenario.routes if {r.src, r.dst} <= {8453, 42161}]
    assert tiers.height == sum(len(r.fee_tiers) for r in routes)
    assert result.total_rows == tokens.height + pools.height + tiers.height


def test_a_rejected_key_fails_early_or_ends_the_run(
    embedded: Embedded, store: Store, small_grid: list[GridPoint]
) -> None:
    client = ServiceClient(embedded=embedded.service, api_key="not-the-key")
    with pytest.raises(Unauthorized):
        RfqSweep(client, store, rounds=1, progress=False).run()
    assert store.runs().height == 0  # discovery failed: no run was recorded
    with pytest.raises(Unauthorized):
        RfqSweep(client, store, grid=small_grid, rounds=1, progress=False).run()
    (run,) = store.runs().rows(named=True)
    assert run["status"] == "failed" and run["rows_written"] == 1
    assert store.query("SELECT status FROM rfq_observations")["status"].to_list() == [401]


def test_resume_refuses_the_wrong_run(
    embedded: Embedded, store: Store, small_grid: list[GridPoint]
) -> None:
    client, _ = embedded.client()
    done = RfqSweep(client, store, grid=small_grid[:1], rounds=1, progress=False).run()
    with pytest.raises(ValueError, match=f"resume: run {done.run_id} is a rfq run, not a borrow"):
        BorrowSweep(client, store, rounds=1, progress=False).run(resume=done.run_id)
    with pytest.raises(StoreError, match="is completed; start a new run instead"):
        RfqSweep(client, store, rounds=1, progress=False).run(resume=done.run_id)
    with pytest.raises(StoreError, match="no run 'nope'"):
        RfqSweep(client, store, rounds=1, progress=False).run(resume="nope")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rounds": 0}, "rounds: must be an integer >= 1, got 0"),
        ({"rounds": 1, "interval_s": 0}, "interval_s: must be a finite number > 0, got 0"),
        ({"duration_s": -1}, "duration_s: must be a finite number > 0, got -1"),
        ({"rounds": 1, "grid": []}, "grid: must be a non-empty list of GridPoint"),
        ({"rounds": 1, "user": "me"}, "user: must be a 0x-prefixed 20-byte hex address"),
    ],
)
def test_bad_sweep_settings_name_the_field(
    embedded: Embedded, store: Store, kwargs: dict[str, object], message: str
) -> None:
    client, _ = embedded.client()
    with pytest.raises(ValueError, match=message):
        RfqSweep(client, store, **kwargs)  # type: ignore[arg-type]


def test_a_new_sweep_must_know_when_to_stop(
    embedded: Embedded, store: Store, small_grid: list[GridPoint]
) -> None:
    client, _ = embedded.client()
    with pytest.raises(ValueError, match="rounds: give a number of rounds or a duration"):
        RfqSweep(client, store, grid=small_grid, progress=False).run()
    assert store.runs().height == 0


def test_a_resumed_sweep_takes_stored_settings_unless_given_new_ones(
    embedded: Embedded, store: Store, small_grid: list[GridPoint]
) -> None:
    client, _ = embedded.client()
    clock = embedded.clock
    options: dict[str, Any] = {"progress": False}

    def interrupted() -> str:
        sweep = RfqSweep(client, store, grid=small_grid[:2], rounds=2, interval_s=7, **options)
        original = sweep.visit

        def visit(
            run_id: str, round_no: int, index: int, point: GridPoint, writer: BatchWriter
        ) -> None:
            if index == 1:
                raise KeyboardInterrupt
            original(run_id, round_no, index, point, writer)

        sweep.visit = visit  # type: ignore[method-assign]
        result = sweep.run()
        assert result.status == "interrupted"
        return result.run_id

    def rounds_of(run_id: str) -> list[int]:
        query = "SELECT DISTINCT round FROM rfq_observations WHERE run_id = ? ORDER BY 1"
        return list(store.query(query, [run_id])["round"])

    stored = interrupted()
    clock.sleeps.clear()
    assert RfqSweep(client, store, **options).run(resume=stored).status == "completed"
    assert clock.sleeps == [7.0] and rounds_of(stored) == [0, 1]

    extended = interrupted()
    clock.sleeps.clear()
    again = RfqSweep(client, store, rounds=3, interval_s=3, **options).run(resume=extended)
    assert again.status == "completed"
    assert clock.sleeps == [3.0, 3.0] and rounds_of(extended) == [0, 1, 2]


def test_collectors_check_their_arguments(embedded: Embedded, store: Store) -> None:
    client, _ = embedded.client()
    with pytest.raises(ValueError, match=re.escape("store: must be a toolkit.store.Store")):
        Snapshot(client, "db.duckdb")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="duration_s: must be a finite number > 0"):
        LiquidityStream(client, store, duration_s=0)
    with pytest.raises(ValueError, match="embedded: traffic is only driven into the embedded"):
        Traffic(client, pl.DataFrame())  # type: ignore[arg-type]


def test_batch_writer_flushes_by_size_and_by_age(store: Store) -> None:
    now = [0.0]
    writer = BatchWriter(store, batch_size=3, flush_s=10, clock=lambda: now[0])
    row = {"snapshot_id": "s", "observed_at": datetime(2024, 1, 1, tzinfo=UTC), "chain": 1}
    writer.add("token_snapshots", [row | {"symbol": "A"}, row | {"symbol": "B"}])
    assert writer.pending() == 2 and writer.written == 0
    writer.add("token_snapshots", [row | {"symbol": "C"}])
    assert writer.pending() == 0 and writer.written == 3
    writer.add("token_snapshots", [row | {"symbol": "D"}])
    now[0] = 11.0
    writer.add("token_snapshots", [row | {"symbol": "A"}])  # a repeat: stored once
    assert writer.pending() == 0 and writer.written == 4
    with pytest.raises(ValueError, match="batch_size: must be an integer >= 1"):
        BatchWriter(store, batch_size=0)
