"""The followers' Prometheus metrics: what a scrape says of a follower as its status changes,
and a port that cannot be bound stops ``toolkit watch`` before any follower starts."""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import pytest

from toolkit.cli.following import run_followers
from toolkit.collect.follow import FollowStatus
from toolkit.collect.metrics import FollowerMetrics, exposition
from toolkit.store import Store


class Follower:
    def __init__(self) -> None:
        self.status = FollowStatus("chain:1", "chain", "https://u:secret@node.example/v3/k", 2.0)


def _scrape(follower: Follower) -> dict[str, float]:
    lines = exposition(FollowerMetrics([follower])).splitlines()
    return {
        line.rsplit(" ", 1)[0].split("{")[0]: float(line.rsplit(" ", 1)[1])
        for line in lines
        if line.startswith("toolkit_follower_")
    }


def test_a_scrape_follows_the_status_and_leaves_out_what_is_unknown() -> None:
    follower = Follower()
    first = _scrape(follower)
    assert first["toolkit_follower_up"] == 1.0 and first["toolkit_follower_rows_written_total"] == 0
    assert "toolkit_follower_head_block" not in first  # not seen yet: absent, not 0
    assert "toolkit_follower_last_flush_timestamp_seconds" not in first
    status = follower.status
    status.head_block, status.stored_block, status.lag_s = 120, 117, 6.0
    status.flushed(250)
    status.failed(TimeoutError("read timed out"))
    status.state = "stopped"
    later = _scrape(follower)
    assert later["toolkit_follower_up"] == 0.0
    assert (
        later["toolkit_follower_lag_blocks"] == 3.0 and later["toolkit_follower_lag_seconds"] == 6
    )
    assert later["toolkit_follower_rows_written_total"] == 250
    assert later["toolkit_follower_errors_total"] == 1
    flushed = later["toolkit_follower_last_flush_timestamp_seconds"]
    assert abs(flushed - datetime.now(UTC).timestamp()) < 60
    assert "secret" not in exposition(FollowerMetrics([follower]))


def test_a_metrics_port_in_use_exits_2_naming_the_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        follower = Follower()
        code = run_followers(Store(":memory:"), [follower], log_json=False, metrics_port=port)
    assert code == 2 and follower.status.run_id is None
    assert f"--metrics-port: cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err
