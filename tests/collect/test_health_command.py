"""``toolkit collect health`` against a served instance: the watch runs for ``--duration``,
writes its alerts and posts them to the webhook, printing where without the URL's token."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from toolkit.cli import main
from toolkit.clock import VirtualClock
from toolkit.scenario import load_scenario
from toolkit.server import create_app, serve_in_thread
from toolkit.store import Store
from toolkit.testing import WebhookReceiver


def test_collect_health_watches_for_its_duration_and_posts_the_alerts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in list(os.environ):
        if name.startswith("TOOLKIT_") and name != "TOOLKIT_DATA_DIR":
            monkeypatch.delenv(name)
    base = load_scenario("default")
    assert base.credit is not None
    scenario = replace(base, credit=replace(base.credit, book_accounts=40))
    db = tmp_path / "watch.duckdb"
    with (
        serve_in_thread(create_app(scenario, clock=VirtualClock())) as url,
        WebhookReceiver() as hook,
    ):
        monkeypatch.setenv("TOOLKIT_BASE_URL", url)
        monkeypatch.setenv("TOOLKIT_RPC_URL_8453", f"{url}/rpc/8453")
        monkeypatch.setenv("TOOLKIT_WEBHOOK_URL", hook.url + "/Xq7sLk29dWmB4TnP8cR3vY6z")
        args = ["collect", "health", "--db", str(db), "--duration", "1", "--interval", "0.5"]
        assert main(args) == 0
        bodies = list(hook.bodies)
    out = capsys.readouterr().out
    assert "health watch health: block" in out and "Xq7sLk29dWmB4TnP8cR3vY6z" not in out
    with Store(db, read_only=True) as store:
        alerts = store.query("SELECT alert_id FROM alerts ORDER BY alert_id")["alert_id"].to_list()
    assert alerts and sorted(b["alert_id"] for b in bodies) == alerts


def test_a_bad_webhook_is_refused_naming_the_flag_before_anything_opens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "none.duckdb"
    args = ["collect", "health", "--embedded", "--db", str(db), "--duration", "1",
            "--webhook", "ftp://hooks.example/T0/Xq7sLk29dWmB4TnP8cR3vY6z"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--webhook: must be an absolute http(s) URL" in err
    assert "Xq7sLk29dWmB4TnP8cR3vY6z" not in err and not db.exists()
