"""Every collector: a run in which every request failed is recorded ``failed`` and the command
exits 2 naming the first error (one mechanism: ``BaseCollector.run`` and the CLI's outcome)."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import pytest

from toolkit.cli import collect as command
from toolkit.collect import CollectionFailed, RfqSweep
from toolkit.scenario import load_scenario
from toolkit.server import create_app, serve_in_thread
from toolkit.store import Store

ACCOUNT = "0x00000000000000000000000000000000000000a1"


class Refusing:
    """``app`` behind a gate that answers every request 400 ("maintenance"), and every JSON-RPC
    call a node error, except paths containing one of ``spared``."""

    def __init__(self, app: Any, spared: tuple[str, ...] = ()) -> None:
        self.app, self.spared, self.state = app, spared, app.state

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or any(part in path for part in self.spared):
            await self.app(scope, receive, send)
            return
        if "/rpc/" in path:
            request = json.loads((await receive())["body"] or b"{}")
            ident = request.get("id") if isinstance(request, dict) else None
            status, body = (
                200,
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "error": {"code": -32000, "message": "node down for maintenance"},
                },
            )
        else:
            status, body = 400, {"error": "maintenance"}
        payload = json.dumps(body).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("TOOLKIT_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("TOOLKIT_API_KEY", "demo-key")  # the served default scenario's key


def collect(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="toolkit collect")
    command.add_arguments(parser)
    return command.run(parser.parse_args(list(argv)))


def statuses(db: Path) -> list[str]:
    with Store(db) as store:
        return list(store.query("SELECT status FROM collection_runs")["status"].to_list())


# The discovery the sweeps need before their first quote is answered; every quote is refused.
DISCOVERY = ("/tokens", "/fees")

CASES = {
    "rfq": (DISCOVERY, ["--rounds", "1"], "rfq: HTTP 400: maintenance"),
    "borrow": (DISCOVERY, ["--rounds", "1"], "HTTP 400: maintenance"),
    "snapshot": ((), [], "tokens: HTTP 400: maintenance"),
    "liquidity": ((), ["--duration", "2"], "HTTP 400: maintenance"),
    "credit": ((), ["--accounts", ACCOUNT], "HTTP 400: maintenance"),
}


@pytest.mark.loopback
@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_service_that_answers_only_errors_fails_the_run(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spared, extra, first = CASES[kind]
    db = tmp_path / "t.duckdb"
    app = Refusing(create_app(load_scenario("default")), spared)
    with serve_in_thread(app) as url:  # type: ignore[arg-type]
        code = collect(kind, "--base-url", url, "--db", str(db), "--no-progress", *extra)
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"run failed: every request to the service at {url} failed; the first: " in err
    assert first in err
    assert statuses(db) == ["failed"]


@pytest.mark.loopback
def test_a_node_that_answers_only_errors_fails_the_chain_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.duckdb"
    app = Refusing(create_app(load_scenario("default")))
    with serve_in_thread(app) as url:  # type: ignore[arg-type]
        code = collect(
            "chain", "--chain", "8453", "--rpc-url", f"{url}/rpc/8453", "--db", str(db),
            "--no-progress",
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert "run failed: every request to the node at " in err
    assert "the first: eth_chainId: node down for maintenance (code -32000)" in err
    assert statuses(db) == ["failed"]


@pytest.mark.loopback
def test_the_library_raises_collection_failed_with_the_first_error(tmp_path: Path) -> None:
    from toolkit.client import ServiceClient

    app = Refusing(create_app(load_scenario("default")), DISCOVERY)
    with serve_in_thread(app) as url, Store(tmp_path / "t.duckdb") as store:  # type: ignore[arg-type]
        with ServiceClient(url) as client:
            sweep = RfqSweep(client, store, rounds=1, interval_s=1.0, progress=False)
            with pytest.raises(CollectionFailed, match=r"^rfq: HTTP 400: maintenance"):
                sweep.run()
        runs = store.query("SELECT status, rows_written FROM collection_runs")
        assert runs["status"].to_list() == ["failed"]
        # The refusals are still stored: they are what was observed.
        assert runs["rows_written"][0] > 0
