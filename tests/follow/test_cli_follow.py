"""``toolkit collect chain --follow`` as a process: SIGINT exits 130 within seconds with the run
recorded interrupted and the batch flushed, SIGTERM exits 0, ``kill -9`` in the middle of a
range resumes exactly where the store says, and no credential reaches the output or the store."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.follow.conftest import CHAIN, assert_canonical
from toolkit.store import Store, StoreError
from toolkit.testing.transfers import TokenActivity

PASSWORD = "s3cret-pass"


def _start(token: TokenActivity, db: Path, *extra: str) -> subprocess.Popen[str]:
    url = token.node.url.replace("http://", f"http://watcher:{PASSWORD}@")
    command = [sys.executable, "-m", "toolkit", "collect", "chain", "--chain", str(CHAIN),
               "--rpc-url", url, "--follow", "--events", "transfers", "--db", str(db),
               "--log-json", *extra]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLKIT_")}
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def _wait(condition: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        # The status is written at most once a second, and each look opens the file (~25 ms
        # of CPU): looking twice a second misses nothing and leaves the follower the file.
        time.sleep(0.5)
    raise AssertionError("condition not met in time")


def _status(db: Path) -> dict[str, Any]:
    try:
        with Store(db, read_only=True, lock_timeout_s=5) as store:
            frame = store.statuses()
    except StoreError:  # not created yet
        return {}
    return frame.row(0, named=True) if frame.height else {}


def _stop(process: subprocess.Popen[str], sig: int) -> tuple[int, str, str, float]:
    sent = time.monotonic()
    process.send_signal(sig)
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err, time.monotonic() - sent


def _events(err: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in err.splitlines() if line.startswith("{")]


def test_sigint_exits_130_within_seconds_with_the_batch_flushed(
    token: TokenActivity, db: Path
) -> None:
    token.mine(3, blocks=30)
    follower = _start(token, db, "--from-block", "0", "--poll-s", "0.2", "--chunk", "10")
    try:
        _wait(lambda: _status(db).get("stored_block") == token.head())
        token.mine(2, blocks=3)
        _wait(lambda: _status(db).get("stored_block") == token.head())
        token.reorg(2, transfers=4)  # of blocks the follower has stored
        _wait(lambda: _status(db).get("reorgs") == 1)
    finally:
        code, out, err, took_s = _stop(follower, signal.SIGINT)
    assert code == 130, err
    assert took_s < 10
    with Store(db, read_only=True) as store:
        run = store.runs().row(0, named=True)
        assert run["status"] == "interrupted"
        assert run["rows_written"] > 0
        assert_canonical(store, token)  # every block read is stored, none orphaned
        assert store.statuses()["state"].to_list() == ["stopped"]
    kinds = [e["event"] for e in _events(err)]
    assert kinds[:2] == ["plan", "start"] and kinds[-1] == "stop" and "reorg" in kinds
    assert f"run {run['run_id']} interrupted" in out
    assert PASSWORD not in out + err
    assert PASSWORD not in db.read_bytes().decode("latin-1")


def test_sigterm_exits_0(token: TokenActivity, db: Path) -> None:
    token.mine(1, blocks=3)
    follower = _start(token, db, "--poll-s", "0.2")
    try:
        _wait(lambda: bool(_status(db).get("polls")))
    finally:
        code, _, err, took_s = _stop(follower, signal.SIGTERM)
    assert code == 0, err
    assert took_s < 10
    with Store(db, read_only=True) as store:
        assert store.runs()["status"].to_list() == ["interrupted"]


def test_kill_9_in_the_middle_then_resume_stores_everything_once(
    token: TokenActivity, db: Path
) -> None:
    for _ in range(30):  # 120 blocks, a block of transfers every fourth
        token.mine(5)
        token.mine(0, blocks=3)
    # One range of 2 blocks a poll, a poll every 0.2 s: 60 polls (12 s at the least) to the head,
    # so the kill lands mid-way however slowly the test sees the status (written at most once a
    # second); at 7 blocks every 0.05 s a loaded machine saw the follower reach the head first.
    options = ("--poll-s", "0.2", "--chunk", "2")
    first = _start(token, db, "--from-block", "0", *options)
    try:
        _wait(lambda: (_status(db).get("stored_block") or 0) >= 40)
    finally:
        first.kill()  # SIGKILL: nothing flushed, nothing recorded
        first.communicate(timeout=30)
    with Store(db, read_only=True) as store:
        run = store.runs().row(0, named=True)
        assert run["status"] == "running"  # as the kill left it
        recorded = store.query("SELECT max(to_block) AS b FROM chain_ranges")["b"][0]
    assert recorded < token.head()
    second = _start(token, db, "--resume", run["run_id"], *options)
    try:
        _wait(lambda: _status(db).get("stored_block") == token.head(), timeout_s=120)
    finally:
        code, _, err, _ = _stop(second, signal.SIGINT)
    assert code == 130, err
    plan = next(e for e in _events(err) if e["event"] == "plan")
    assert plan["from_block"] == recorded + 1  # exactly where the store said
    with Store(db, read_only=True) as store:
        assert_canonical(store, token)  # each log once, none missing
        ranges = store.query(
            "SELECT from_block, to_block FROM chain_ranges ORDER BY from_block"
        ).rows()
        assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(ranges))
        assert store.runs()["status"].to_list() == ["interrupted"]
