"""``toolkit watch PLAN.toml`` and ``toolkit status``: the plan's errors name the key, secrets
stay masked, every follower of a plan runs in one process, ``status`` shows them from another
while they write, and a second run resumes each follower's run by name."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from toolkit.cli import status
from toolkit.collect.watch_plan import load_plan, parse_plan
from toolkit.errors import InputError
from toolkit.models.health import DEFAULT_ALERT_RULES
from toolkit.store import Store


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"chain": [{"chain": 8453, "poll_s": 0}]}, "chain[0].poll_s: must be a number of seconds"),
        ({"credit": [{"every": 5}]}, "credit[0].every: unknown key"),
        ({"pools": [{"every_s": 5}]}, "pools[0].chain: "),
        (
            {"chain": [{"chain": 1, "rpc_url": "${NOPE}"}]},
            "chain[0].rpc_url: ${NOPE} is not set in the environment",
        ),
        ({"rfq": [{}], "borrow": [{"name": "rfq"}]}, "rfq is repeated"),
        ({"watch": [{}]}, "watch: unknown key"),
        ({"health": [{"health_below": [1.1, 0]}]}, "health[0].health_below[1]: must be a health"),
        ({"health": [{"cap_share": {"vaults": 0.2}}]}, "health[0].cap_share.vaults (key): must"),
        ({"health": [{"cap_share": {"chain": 1.5}}]}, "health[0].cap_share.chain: must be a share"),
        ({"health": [{"health_below": [], "cap_share": {}}]}, "health_below: give a health"),
        ({"health": [{"name": "risk:base"}]}, "health[0].name: must be a non-empty name without"),
        ({"health": [{"every": 1}]}, "health[0].every: unknown key"),
        (
            {"health": [{"webhook_url": "ftp://hooks/T0/B0/Xq7sLk29dWmB4TnP8cR3vY6z"}]},
            "health[0].webhook_url: must be an absolute http(s) URL",
        ),
        (
            {"health": [{"webhook_url": "https://hooks/${HOOK_TOKEN}"}]},
            "health[0].webhook_url: ${HOOK_TOKEN} is not set in the environment",
        ),
        ({"health": [{}, {"chain": 1}]}, "health is repeated"),
        ({}, "no section"),
    ],
)
def test_a_bad_plan_names_the_key(document: dict[str, object], message: str) -> None:
    with pytest.raises(InputError) as error:
        parse_plan(document, env={})
    assert message in str(error.value)


def test_secrets_from_the_environment_stay_masked(tmp_path: Path) -> None:
    path = tmp_path / "plan.toml"
    path.write_text('[[chain]]\nchain = 1\nrpc_url = "https://node/v2/${KEY}"\n')
    plan = load_plan(path, env={"KEY": "k-123"})
    assert plan.chain[0].rpc_url is not None
    assert plan.chain[0].rpc_url.get_secret_value() == "https://node/v2/k-123"
    assert "k-123" not in repr(plan) + str(plan)
    path.write_text("[[chain]\n")
    with pytest.raises(InputError, match=f"{path}: not valid TOML"):
        load_plan(path, env={})


def test_a_health_section_states_the_watch_and_masks_its_webhook() -> None:
    token = "Xq7sLk29dWmB4TnP8cR3vY6z"
    document = {"health": [{"chain": 8453, "every_s": 0.5, "confirmations": 2,
                            "health_below": [1.05, "1"], "cap_share": {"vault": 0.25},
                            "webhook_url": "https://hooks.example/T0/${HOOK_TOKEN}"}]}  # fmt: skip
    plan = parse_plan(document, env={"HOOK_TOKEN": token})
    (section,) = plan.health
    assert plan.names() == ["health"] and plan.needs_service()
    assert [(r.name, str(r.threshold)) for r in section.rules()] == [
        ("hf_below_1.05", "1.05"), ("hf_below_1", "1"), ("cap_vault", "0.25")
    ]  # fmt: skip
    assert token not in repr(plan) + str(plan)
    assert section.webhook_url is not None and section.webhook_url.get_secret_value().endswith(
        token
    )
    defaults = parse_plan({"health": [{"name": "risk"}]}, env={})
    assert defaults.names() == ["risk"]
    assert [r.name for r in defaults.health[0].rules()] == [r.name for r in DEFAULT_ALERT_RULES]


def _status_rows(db: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    assert status.run(argparse.Namespace(db=str(db), json=True)) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_status_shows_each_follower_and_which_are_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.duckdb"
    now = datetime.now(UTC)
    with Store(db) as store:
        base = {"kind": "chain", "target_url": "http://node:8545", "every_s": 2.0,
                "started_at": now, "polls": 3, "rows_written": 40, "errors": 1, "reorgs": 0,
                "host": os.uname().nodename, "last_flush_at": now, "head_block": 120,
                "stored_block": 118, "lag_blocks": 2, "lag_s": 4.0, "rows_per_s": 12.5,
                "last_error": "RpcFailure: eth_getLogs: header not found"}  # fmt: skip
        store.record_status(base | {"name": "live", "state": "running", "pid": os.getpid(),
                                    "updated_at": now})  # fmt: skip
        store.record_status(base | {"name": "silent", "state": "running", "pid": os.getpid(),
                                    "updated_at": now - timedelta(minutes=10)})  # fmt: skip
        store.record_status(base | {"name": "done", "state": "stopped", "pid": 1,
                                    "updated_at": now})  # fmt: skip
    rows = {r["name"]: r["shown"] for r in _status_rows(db, capsys)}
    assert rows == {"done": "stopped", "live": "running", "silent": "stale"}
    assert status.run(argparse.Namespace(db=str(db), json=False)) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:4] == ["name", "state", "target", "head"]
    live = next(line for line in table if line.startswith("live"))
    assert live.split()[:9] == ["live", "running", "http://node:8545", "120", "2", "4.0", "12.5",
                                "40", "1"]  # fmt: skip
    assert live.endswith("RpcFailure: eth_getLogs: header not found")


def test_status_of_a_database_without_followers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Store(tmp_path / "e.duckdb").close()
    assert status.run(argparse.Namespace(db=str(tmp_path / "e.duckdb"), json=False)) == 0
    assert "no follower has written" in capsys.readouterr().out
    assert status.run(argparse.Namespace(db=str(tmp_path / "none.duckdb"), json=False)) == 1


PLAN = """
db = "{db}"
embedded = true
[[chain]]
chain = 8453
poll_s = 0.5
[[credit]]
every_s = 2
accounts = ["0x1111111111111111111111111111111111111111"]
[[rfq]]
name = "quotes"
every_s = 3
"""


def _watch(plan: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLKIT_")}
    return subprocess.Popen(
        [sys.executable, "-m", "toolkit", "watch", str(plan), "--log-json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def _polled(
    db: Path, capsys: pytest.CaptureFixture[str], names: set[str], pid: int
) -> list[dict[str, Any]]:
    """The status rows once every follower of process ``pid`` has polled twice."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if db.exists():
            rows = _status_rows(db, capsys)
            polled = {r["name"] for r in rows if r["pid"] == pid and (r["polls"] or 0) >= 2}
            if polled >= names:
                return rows
        time.sleep(0.5)
    raise AssertionError("the followers did not poll in time")


@pytest.mark.wallclock  # two processes started, each waited for until its followers poll
def test_a_plan_runs_in_one_process_and_resumes_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "watch.duckdb"
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(db=db))
    names = {"chain:8453", "credit", "quotes"}
    first = _watch(plan)
    try:
        rows = _polled(db, capsys, names, first.pid)
    finally:
        first.send_signal(signal.SIGTERM)
        _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err[-2000:]
    assert {r["name"]: r["shown"] for r in rows} == dict.fromkeys(names, "running")
    assert {r["pid"] for r in rows} == {first.pid}
    with Store(db, read_only=True) as store:
        runs = {r["run_id"]: r for r in store.runs().iter_rows(named=True)}
        assert {r["kind"] for r in runs.values()} == {"chain", "credit", "rfq"}
        assert {r["status"] for r in runs.values()} == {"interrupted"}
        assert store.query("SELECT count(DISTINCT round) AS n FROM credit_protocol")["n"][0] >= 2
        first_runs = {r["name"]: r["run_id"] for r in store.statuses().iter_rows(named=True)}
    second = _watch(plan)
    try:
        _polled(db, capsys, names, second.pid)
    finally:
        second.send_signal(signal.SIGINT)
        _, err = second.communicate(timeout=60)
    assert second.returncode == 130
    starts = [json.loads(line) for line in err.splitlines() if '"event":"start"' in line]
    assert {(e["follower"], e["run_id"], e["resumed"]) for e in starts} == {
        (name, run_id, True) for name, run_id in first_runs.items()
    }
