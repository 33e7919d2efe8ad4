"""The API key never leaves the request header: not in the database file, logs, reprs, errors."""

from __future__ import annotations

import logging
import traceback
from pathlib import Path
from typing import Any

import httpx
import pytest

from toolkit.client import ServiceClient, Unauthorized
from toolkit.collect import BorrowSweep, GridPoint, LiquidityStream, RfqSweep, Snapshot
from toolkit.store import Store

KEY = "sk-live-DISTINCT-4f1c9a7e2b8d"
WRONG = "sk-wrong-DISTINCT-0a9b8c7d6e"


def test_a_collection_leaves_no_trace_of_the_key(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, small_grid: list[GridPoint]
) -> None:
    caplog.set_level(logging.DEBUG)
    path = tmp_path / "collected.duckdb"
    env = {"TOOLKIT_API_KEY": KEY}
    texts: list[str] = []
    with ServiceClient(embedded=True, env=env) as client, Store(path) as store:
        options: dict[str, Any] = {"progress": False}
        collectors = [
            RfqSweep(client, store, grid=small_grid, rounds=1, follow_transactions=True, **options),
            BorrowSweep(client, store, grid=small_grid[:4], rounds=1, **options),
            Snapshot(client, store, chains=(8453, 42161), **options),
            LiquidityStream(client, store, duration_s=0.3, **options),
        ]
        for collector in collectors:
            result = collector.run()
            assert result.status == "completed" and result.rows_written > 0
            texts += [repr(collector), repr(result), result.summary()]
        texts += [repr(client), str(client), repr(client.embedded), repr(store)]
        assert store.query("SELECT count(*) AS n FROM rfq_observations")["n"][0] > 0

        with pytest.raises(Unauthorized) as caught:
            ServiceClient(api_key=WRONG, embedded=client.embedded).tokens(8453)
        texts += [str(caught.value), repr(caught.value)]
        texts += traceback.format_exception(caught.value)

    data = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert KEY.encode() not in data and WRONG.encode() not in data
    assert caplog.records, "the client logs its attempts at DEBUG"
    everything = "\n".join(texts) + caplog.text
    assert KEY not in everything and WRONG not in everything


def test_a_key_echoed_by_the_service_is_scrubbed_from_errors() -> None:
    def echo(request: httpx.Request) -> httpx.Response:
        token = request.headers["X-Auth-Token"]
        return httpx.Response(401, json={"error": f"unknown key {token}", "debug": token})

    client = ServiceClient(
        "https://user:pw@service.example", api_key=KEY, transport=httpx.MockTransport(echo)
    )
    with pytest.raises(Unauthorized) as caught:
        client.tokens(1)
    assert KEY not in str(caught.value)
    assert caught.value.body is not None
    assert KEY not in caught.value.body.error and KEY not in (caught.value.body.debug or "")
    assert "***" in str(caught.value)
    # The URL's credentials are not shown either.
    assert "pw" not in repr(client) and client.base_url == "https://service.example"
