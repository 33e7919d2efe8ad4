"""Calibration round trip: collect from the embedded service, calibrate, and backtest."""

from __future__ import annotations

import polars as pl
import pytest

from toolkit.backtest import generate_flow, replay
from toolkit.backtest.calibrate import calibrate
from toolkit.client import ServiceClient
from toolkit.clock import ScaledClock, VirtualClock
from toolkit.collect import RfqSweep, Snapshot
from toolkit.models.netflow import net_flow, requested_orders
from toolkit.scenario import load_scenario
from toolkit.simulate import Traffic
from toolkit.simulate.traffic import record_traffic
from toolkit.store import Store, StoreError

#: Other users' flow: a minute and a half of the default scenario at 2 RFQs/s.
USERS = generate_flow("default", span_h=0.025, rate_per_s=2.0, seed=5)


@pytest.fixture(scope="module")
def collected() -> Store:
    """A snapshot, the market's RFQs (background traffic) and a collector's sweep meanwhile."""
    store = Store(":memory:")
    with ServiceClient(embedded=True, clock=ScaledClock(100.0)) as client:
        Snapshot(client, store, progress=False).run()
        with Traffic(client.embedded, USERS) as traffic:
            RfqSweep(client, store, rounds=2, interval_s=20, progress=False).run()
            traffic.join(timeout=60)
        record_traffic(store, traffic)
    return store


def test_pools_and_tiers_come_back_as_the_service_has_them(collected: Store) -> None:
    truth = load_scenario("default")
    fitted = calibrate(collected, "default")
    # the snapshot was taken with every pool idle: available == balance
    assert {p.id: p.balance for p in fitted.scenario.pools} == {
        p.id: p.balance for p in truth.pools
    }
    assert {(r.src, r.dst, r.token): r.fee_tiers for r in fitted.scenario.routes} == {
        (r.src, r.dst, r.token): r.fee_tiers for r in truth.routes
    }


def test_the_flow_model_is_the_markets_not_the_collectors(collected: Store) -> None:
    fitted = calibrate(collected, "default")
    market = collected.runs("traffic")["run_id"].to_list()
    first = collected.table("rfq_observations").filter(
        pl.col("run_id").is_in(market) & (pl.col("retry") == 0)
    )
    assert first.height == USERS.height
    # The route mix is the users' (the sweep visits every route equally, the users do not).
    users = USERS.group_by("src_chain", "dst_chain", "token").len()
    assert {(s, d, t): float(n) for s, d, t, n in users.iter_rows()} == dict(fitted.routes)
    # And the sizes are the users', not the sweep's grid of tier amounts.
    median = fitted.sizes["USDC"].median  # type: ignore[attr-defined]
    assert median == pytest.approx(
        float(USERS.filter(token="USDC")["amount"].cast(pl.Float64).median()), rel=0.01
    )
    span = (first["observed_at"].max() - first["observed_at"].min()).total_seconds()  # type: ignore[operator,union-attr]
    assert fitted.rate_per_s == pytest.approx(first.height / span)
    assert sum(fitted.routes.values()) == first.height
    flow = fitted.flow(span_h=0.2, seed=1)
    assert flow.height > 0
    assert set(flow["token"].unique()) <= set(fitted.sizes)
    result = replay(flow, fitted.scenario, seed=1)
    assert result.summary.requests == flow.height


def test_the_flows_direction_is_the_markets(collected: Store) -> None:
    """The calibrated net flow is the users' requests' own, chain by chain (exact sums), and
    its interval is the model's on the observed span."""
    fitted = calibrate(collected, "default")
    expected = net_flow(requested_orders(USERS), span_s=60.0)
    got = fitted.net_flow
    keys = ["chain", "token", "received", "delivered", "net", "n"]
    assert got.select(keys).rows() == expected.select(keys).rows()
    assert (got["net_per_h_low"] <= got["net_per_h"]).all()
    assert (got["net_per_h"] <= got["net_per_h_high"]).all()
    # Value moved between chains: what one receives another delivers (the requested amounts
    # stand for both sides), so the nets add to zero per token.
    assert got.group_by("token").agg(pl.col("net").sum())["net"].to_list() == [0, 0]


def test_an_empty_store_cannot_be_calibrated() -> None:
    with pytest.raises(StoreError, match="need at least two of other users' RFQs"):
        calibrate(Store(":memory:"), "default")


def test_a_collectors_own_sweep_is_not_demand() -> None:
    with Store(":memory:") as store, ServiceClient(embedded=True, clock=VirtualClock()) as client:
        RfqSweep(client, store, rounds=2, interval_s=15, progress=False).run()
        assert store.table("rfq_observations").height > 2
        with pytest.raises(StoreError, match="a collector's own sweeps are its design"):
            calibrate(store, "default")
