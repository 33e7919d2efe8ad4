"""Calibration round trip: collect from the embedded service, calibrate, and backtest."""

from __future__ import annotations

import pytest

from toolkit.backtest import replay
from toolkit.backtest.calibrate import calibrate
from toolkit.client import ServiceClient
from toolkit.clock import VirtualClock
from toolkit.collect import RfqSweep, Snapshot
from toolkit.scenario import load_scenario
from toolkit.store import Store, StoreError


@pytest.fixture(scope="module")
def collected() -> Store:
    store = Store(":memory:")
    with ServiceClient(embedded=True, clock=VirtualClock()) as client:
        Snapshot(client, store, progress=False).run()
        RfqSweep(client, store, rounds=3, interval=20, progress=False).run()
    return store


def test_pools_and_tiers_come_back_as_the_service_has_them(collected: Store) -> None:
    truth = load_scenario("default", env={})
    fitted = calibrate(collected, "default")
    # the snapshot was taken with every pool idle: available == balance
    assert {p.id: p.balance for p in fitted.scenario.pools} == {
        p.id: p.balance for p in truth.pools
    }
    assert {(r.src, r.dst, r.token): r.fee_tiers for r in fitted.scenario.routes} == {
        (r.src, r.dst, r.token): r.fee_tiers for r in truth.routes
    }


def test_the_flow_model_matches_what_was_asked(collected: Store) -> None:
    fitted = calibrate(collected, "default")
    first = collected.table("rfq_observations").filter(retry=0)
    # the first attempts over the span they cover (rounds, and back-offs on the virtual clock)
    span = (first["observed_at"].max() - first["observed_at"].min()).total_seconds()  # type: ignore[operator,union-attr]
    assert span >= 40.0
    assert fitted.rate == pytest.approx(first.height / span)
    assert sum(fitted.routes.values()) == first.height
    flow = fitted.flow(hours=0.2, seed=1)
    assert flow.height > 0
    assert set(flow["token"].unique()) <= set(fitted.sizes)
    result = replay(flow, fitted.scenario, seed=1)
    assert result.summary["requests"] == flow.height


def test_an_empty_store_cannot_be_calibrated() -> None:
    with pytest.raises(StoreError, match="need at least two first attempts"):
        calibrate(Store(":memory:"), "default")
