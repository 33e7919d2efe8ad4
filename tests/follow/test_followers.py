"""The service collectors followed (embedded service, virtual clock): a sweep round split over
short polls with every grid point once per round, resumed where its rounds stopped; the event
stream written poll by poll."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from toolkit.client import ServiceClient
from toolkit.clock import VirtualClock
from toolkit.collect import LiquidityStream, RfqSweep
from toolkit.collect import followers as followers_module
from toolkit.collect.followers import LiquidityFollower, RoundFollower, follower_for
from toolkit.collect.rows import rounds_recorded
from toolkit.store import Store


@pytest.fixture
def client() -> Iterator[ServiceClient]:
    with ServiceClient(embedded=True, clock=VirtualClock()) as opened:
        yield opened


def test_a_sweep_round_over_short_polls_visits_each_point_once(
    client: ServiceClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(followers_module, "POLL_BUDGET_S", 0.0)  # one point a poll
    store = Store(":memory:")
    follower = follower_for(RfqSweep(client, store, progress=False), every_s=30)
    assert isinstance(follower, RoundFollower)
    follower.start()
    size = follower.rounds.round_size()
    behind = [follower.poll(time.time()) for _ in range(size + 2)]
    assert behind == [True] * (size - 1) + [False, True, True]  # a round, then the next begun
    done = rounds_recorded(store.attempt_ids(follower.run_id, "rfq_observations"))
    assert done == {0: set(range(size)), 1: {0, 1}}
    follower.stop("interrupted")
    resumed = RoundFollower(RfqSweep(client, store, progress=False), every_s=30,
                            resume=follower.run_id)  # fmt: skip
    resumed.start()
    assert (resumed.round_no, resumed.skip) == (1, {0, 1})  # the unfinished round goes on
    resumed.poll(time.time())
    again = rounds_recorded(store.attempt_ids(follower.run_id, "rfq_observations"))
    assert again[1] == {0, 1, 2}
    assert store.run_record(follower.run_id)["parameters"]["follow"] is True


def test_the_event_stream_is_written_poll_by_poll(client: ServiceClient) -> None:
    store = Store(":memory:")
    follower = follower_for(LiquidityStream(client, store, progress=False))
    assert isinstance(follower, LiquidityFollower) and follower.every_s == 1.0
    follower.start()
    deadline = time.monotonic() + 30
    while store.query("SELECT count(*) AS n FROM pool_snapshots")["n"][0] == 0:
        assert time.monotonic() < deadline, "no connect-time state arrived"
        follower.poll(time.time())
        time.sleep(0.05)
    snapshot = store.query("SELECT DISTINCT snapshot_id FROM pool_snapshots")["snapshot_id"]
    assert snapshot[0].startswith(f"{follower.run_id}:stream:")
    follower.stop("interrupted")
    assert store.run_record(follower.run_id)["status"] == "interrupted"
