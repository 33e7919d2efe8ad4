"""``toolkit watch`` with a ``[[health]]`` section beside a chain follower, against a served
instance whose collateral price drops: the accounts whose health factor the drop takes below
1.0 (computed here from the chain and ``/info``, not read back from the watch) each get one
alert row and one webhook body; a second run of the plan resumes the health run and writes and
posts nothing again; the webhook URL's token is nowhere in the store, the logs or ``toolkit
status``, nor in its Prometheus metrics (``--metrics-port``, scraped once)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.collect.test_health_watch import Served, dropping, health_factors, liquidatable
from toolkit.cli import status
from toolkit.client import chain_web3
from toolkit.clock import VirtualClock
from toolkit.collect.accounts import discover_accounts
from toolkit.server import create_app, serve_in_thread
from toolkit.store import Store
from toolkit.testing import WebhookReceiver

TOKEN = "Xq7sLk29dWmB4TnP8cR3vY6z"

PLAN = """
db = "{db}"
base_url = "{url}"
[[chain]]
chain = 8453
rpc_url = "{url}/rpc/8453"
confirmations = 0
poll_s = 0.5
[[health]]
rpc_url = "{url}/rpc/8453"
every_s = 0.5
webhook_url = "${{RISK_HOOK}}"
"""


def _watch(plan: Path, hook_url: str, *options: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLKIT_")}
    return subprocess.Popen(
        [sys.executable, "-m", "toolkit", "watch", str(plan), "--log-json", *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env | {"RISK_HOOK": hook_url},
    )  # fmt: skip


def _statuses(db: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, Any]]:
    if not db.exists():
        return {}
    assert status.run(argparse.Namespace(db=str(db), json=True)) == 0

    return {row["name"]: row for row in map(json.loads, capsys.readouterr().out.splitlines())}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _until(check: Callable[[], bool], what: str, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def _stop(process: subprocess.Popen[str]) -> tuple[str, str]:
    process.send_signal(signal.SIGTERM)
    return process.communicate(timeout=60)


def _everything(db: Path) -> str:
    """Every row of every table, as text."""
    with Store(db, read_only=True) as store:
        tables = store.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        )["table_name"].to_list()
        return "\n".join(str(store.query(f'SELECT * FROM "{t}"').rows()) for t in tables)


def test_watch_runs_a_health_section_and_alerts_each_crossing_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = dropping()
    credit = scenario.credit
    assert credit is not None
    db, plan = tmp_path / "watch.duckdb", tmp_path / "plan.toml"
    with (
        serve_in_thread(create_app(scenario, clock=VirtualClock())) as url,
        httpx.Client() as http,
        WebhookReceiver() as receiver,
    ):
        served = Served(url, scenario, http)
        w3 = chain_web3(8453, url=f"{url}/rpc/8453")
        accounts = discover_accounts(w3, [credit.hub], [credit.escrow]).accounts
        w3.provider.close()  # type: ignore[attr-defined]
        before = liquidatable(health_factors(served, accounts))
        plan.write_text(PLAN.format(db=db, url=url))
        hook_url = f"{receiver.url}/services/T0ABC123/B0DEF456/{TOKEN}"

        port = _free_port()
        first = _watch(plan, hook_url, "--metrics-port", str(port))
        try:
            _until(lambda: all((r["polls"] or 0) >= 1 for r in _statuses(db, capsys).values())
                   and len(_statuses(db, capsys)) == 2, "both followers to poll")  # fmt: skip
            # The drop: the chain's clock moves past the drawdown, then one block.
            served.rpc("evm_increaseTime", 1_300)
            served.rpc("evm_mine")
            head = int(served.rpc("eth_blockNumber"), 16)
            _until(lambda: _statuses(db, capsys)["health"]["stored_block"] == head,
                   "the watch to evaluate the block after the drop")  # fmt: skip
            assert status.run(argparse.Namespace(db=str(db), json=False)) == 0
            table = capsys.readouterr().out
            shown = _statuses(db, capsys)
            metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        finally:
            out, err = _stop(first)
        assert first.returncode == 0, err[-2000:]
        after = liquidatable(health_factors(served, accounts))
        expected = after - before
        assert len(expected) >= 3, expected

        second = _watch(plan, hook_url)  # resumes the health run: nothing new to write or post
        try:
            _until(lambda: (_statuses(db, capsys)["health"]["pid"] == second.pid
                            and _statuses(db, capsys)["health"]["polls"] >= 1),
                   "the restart's first poll")  # fmt: skip
        finally:
            out2, err2 = _stop(second)
        assert second.returncode == 0, err2[-2000:]
        bodies = list(receiver.bodies)

    health = shown["health"]
    assert health["kind"] == "health" and health["shown"] == "running" and health["errors"] == 0
    assert health["head_block"] == head and health["lag_blocks"] == 0
    assert shown["chain:8453"]["errors"] == 0
    assert any(line.split()[:2] == ["health", "running"] for line in table.splitlines())
    # One scrape of --metrics-port: each follower up, the health watch at the drop's block.
    scraped = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("toolkit_follower_")
    }
    labels = '{follower="health",kind="health"}'
    assert scraped[f"toolkit_follower_up{labels}"] == 1.0
    assert scraped['toolkit_follower_up{follower="chain:8453",kind="chain"}'] == 1.0
    assert scraped[f"toolkit_follower_stored_block{labels}"] == head
    assert scraped[f"toolkit_follower_lag_blocks{labels}"] == 0.0
    assert scraped[f"toolkit_follower_errors_total{labels}"] == 0.0
    assert f"toolkit_follower_last_flush_timestamp_seconds{labels}" in scraped
    with Store(db, read_only=True) as store:
        alerts = store.query("SELECT * FROM alerts ORDER BY block_number, rule, subject")
        runs = store.query("SELECT * FROM collection_runs WHERE kind = 'health'")
        drop = alerts.filter(rule="hf_below_1.0", state="breached", block_number=head)
    assert set(drop["subject"]) == expected
    # Every alert row posted exactly once, every post an alert row, across the restart.
    ids = [b["alert_id"] for b in bodies]
    assert len(ids) == len(set(ids)) and sorted(ids) == sorted(alerts["alert_id"].to_list())
    assert runs.height == 1 and runs["status"][0] == "interrupted"
    assert runs["rows_written"][0] == alerts.height
    # The webhook's token: in no table, log line, output or status.
    seen = "\n".join([_everything(db), out, err, out2, err2, table, str(shown), metrics])
    assert hook_url not in seen and TOKEN not in seen
    assert '"event":"start"' in err2 and '"resumed":true' in err2
