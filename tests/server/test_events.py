"""The liquidity event stream over loopback: snapshot, live events, resume, heartbeat, shutdown.

``httpx.ASGITransport`` returns a body only once it is complete, so the endless stream is read
from a real server on a free 127.0.0.1 port (``serve_in_thread``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from toolkit.codecs.functions import encode_call
from toolkit.resources import FeeEvent, LiquidityEvent, parse
from toolkit.scenario import Scenario
from toolkit.server import create_app, serve_in_thread

from .conftest import AUTH, FakeClock, rfq_params

pytestmark = pytest.mark.loopback

EVENTS = "/liquidity/protocol/partner-escrow/events"


@dataclass
class Stream:
    """Reads one event stream line by line: events in order, and the comments seen."""

    lines: Iterator[str]
    comments: list[str] = field(default_factory=list)

    def next_event(self) -> dict[str, Any]:
        event: dict[str, Any] = {}
        for line in self.lines:
            if line == "":
                if event:
                    if "data" in event:
                        event["json"] = json.loads(event["data"])
                    return event
                continue
            if line.startswith(":"):
                self.comments.append(line[1:].strip())
                continue
            name, _, value = line.partition(":")
            event[name] = value.removeprefix(" ")
        raise AssertionError("the stream ended")

    def take(self, count: int) -> list[dict[str, Any]]:
        return [self.next_event() for _ in range(count)]


@pytest.fixture
def served(scenario: Scenario, clock: FakeClock) -> Iterator[tuple[str, Any]]:
    app = create_app(scenario, clock=clock, heartbeat=0.2, tick=0.05)
    with serve_in_thread(app) as url:
        yield url, app.state.service


def snapshot_size(scenario: Scenario) -> int:
    return len(scenario.pools) + len(scenario.routes)


def test_snapshot_then_live_events(served: tuple[str, Any], scenario: Scenario) -> None:
    url, _ = served
    with (
        httpx.Client(base_url=url, timeout=5) as client,
        client.stream("GET", EVENTS, headers=AUTH) as answer,
    ):
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/event-stream")
        stream = Stream(answer.iter_lines())
        snapshot = stream.take(snapshot_size(scenario))
        assert {e["id"] for e in snapshot} == {"0"}
        pools = [e for e in snapshot if e["event"] == "liquidity"]
        fees = [e for e in snapshot if e["event"] == "fee"]
        assert len(pools) == len(scenario.pools)
        assert len(fees) == len(scenario.routes)
        first = parse(LiquidityEvent, pools[0]["json"])
        assert (first.chain_id, first.token, first.reason) == (1, "USDC", "snapshot")
        assert first.balance == str(scenario.pools[0].balance)
        tier = parse(FeeEvent, fees[0]["json"])
        assert tier.tiers[0].fee_bps == 5

        quote = client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH).json()
        output = int(quote["quotes"][0]["preview"]["outputs"][0]["amount"])
        created = stream.next_event()
        assert created["event"] == "liquidity"
        assert created["id"] == "1"
        event = parse(LiquidityEvent, created["json"])
        assert event.reason == "reservation_created"
        assert (event.chain, event.token, event.pool_type) == ("eip155:8453", "USDC", "usdc")
        assert int(event.reserved) == output
        assert int(event.balance) == 4_000_000_000_000 - output


def test_lapse_is_pushed_within_a_tick(
    served: tuple[str, Any], scenario: Scenario, clock: FakeClock
) -> None:
    url, _ = served
    with (
        httpx.Client(base_url=url, timeout=5) as client,
        client.stream("GET", EVENTS, headers=AUTH) as answer,
    ):
        stream = Stream(answer.iter_lines())
        stream.take(snapshot_size(scenario))
        client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH)
        assert stream.next_event()["json"]["reason"] == "reservation_created"
        clock.advance(15)  # nobody calls the API: the stream's own tick releases it
        released = stream.next_event()
        assert released["id"] == "2"
        assert released["json"]["reason"] == "reservation_released"
        assert released["json"]["reserved"] == "0"


def test_resume_with_last_event_id_gets_exactly_the_missed_events(
    served: tuple[str, Any], scenario: Scenario, clock: FakeClock
) -> None:
    url, service = served
    with httpx.Client(base_url=url, timeout=5) as client:
        with client.stream("GET", EVENTS, headers=AUTH) as answer:
            stream = Stream(answer.iter_lines())
            stream.take(snapshot_size(scenario))
            client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH)
            seen = stream.next_event()
        assert seen["id"] == "1"
        # While disconnected: two more quotes, a transaction (a duration-only change, not a
        # liquidity event), and the lapse of the two quotes that were not converted.
        quotes = [
            client.get("/partner-intents/rfq", params=rfq_params(dst=10), headers=AUTH).json()
            for _ in range(2)
        ]
        client.post("/partner-intents/transaction", json=quotes[0]["quotes"][0])
        clock.advance(15)
        client.get("/health")
        pool = scenario.pools[0]  # any read of the engine moves its clock: the lapses log now
        view = encode_call("pool.reserved", scenario.token(pool.chain, pool.token).address)
        request = {"to": pool.address, "data": view}
        body = {"jsonrpc": "2.0", "id": 1, "method": "eth_call", "params": [request, "latest"]}
        assert "result" in client.post(f"/rpc/{pool.chain}", json=body).json()
        expected = [e for e in service.engine.events_since(1) if e.kind not in ("rekeyed",)]
        assert [e.kind for e in expected] == ["created", "created", "released", "released"]
        resume = {**AUTH, "Last-Event-ID": "1"}
        with client.stream("GET", EVENTS, headers=resume) as answer:
            stream = Stream(answer.iter_lines())
            missed = stream.take(len(expected))
            assert [int(e["id"]) for e in missed] == [e.id for e in expected]
            assert all(e["event"] == "liquidity" for e in missed)
            assert [e["json"]["reason"] for e in missed] == [
                "reservation_created",
                "reservation_created",
                "reservation_released",
                "reservation_released",
            ]
            # Nothing else is queued: the next event is a new one, not a duplicate.
            client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH)
            fresh = stream.next_event()
            assert int(fresh["id"]) == service.engine.last_event_id
            assert int(fresh["id"]) > int(missed[-1]["id"])


def test_resume_from_the_snapshot_id_has_no_gap(
    served: tuple[str, Any], scenario: Scenario
) -> None:
    url, service = served
    with httpx.Client(base_url=url, timeout=5) as client:
        client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH)
        with client.stream("GET", EVENTS, headers=AUTH) as answer:
            snapshot = Stream(answer.iter_lines()).take(snapshot_size(scenario))
        tag = snapshot[0]["id"]
        assert tag == str(service.engine.last_event_id) == "1"
        client.get("/partner-intents/rfq", params=rfq_params(dst=10), headers=AUTH)
        with client.stream("GET", EVENTS, headers={**AUTH, "Last-Event-ID": tag}) as answer:
            after = Stream(answer.iter_lines()).next_event()
        assert after["id"] == "2"
        assert after["json"]["chain"] == "eip155:10"


def test_unknown_future_id_gets_a_fresh_snapshot(
    served: tuple[str, Any], scenario: Scenario
) -> None:
    url, _ = served
    with (
        httpx.Client(base_url=url, timeout=5) as client,
        client.stream("GET", EVENTS, headers={**AUTH, "Last-Event-ID": "999"}) as answer,
    ):
        events = Stream(answer.iter_lines()).take(snapshot_size(scenario))
        assert events[0]["json"]["reason"] == "snapshot"


def test_bad_requests_fail_before_the_stream(served: tuple[str, Any]) -> None:
    url, _ = served
    with httpx.Client(base_url=url, timeout=5) as client:
        bad_id = client.get(EVENTS, headers={**AUTH, "Last-Event-ID": "abc"})
        assert bad_id.status_code == 400
        assert bad_id.json() == {"error": "Last-Event-ID: must be an event id (decimal digits)"}
        other = client.get("/liquidity/protocol/another/events", headers=AUTH)
        assert other.status_code == 400
        assert other.json() == {"error": "protocol: must be partner-escrow"}
        assert client.get(EVENTS).status_code == 401


def test_heartbeat_comments_keep_an_idle_stream_open(
    served: tuple[str, Any], scenario: Scenario
) -> None:
    url, _ = served
    with (
        httpx.Client(base_url=url, timeout=5) as client,
        client.stream("GET", EVENTS, headers=AUTH) as answer,
    ):
        stream = Stream(answer.iter_lines())
        stream.take(snapshot_size(scenario))
        deadline = time.monotonic() + 3
        while "ping" not in stream.comments and time.monotonic() < deadline:
            line = next(stream.lines)
            if line.startswith(":"):
                stream.comments.append(line[1:].strip())
        assert "ping" in stream.comments


def test_server_shutdown_ends_open_streams(scenario: Scenario, clock: FakeClock) -> None:
    app = create_app(scenario, clock=clock, heartbeat=30, tick=30)
    started = time.monotonic()
    with httpx.Client(timeout=10) as client:
        with serve_in_thread(app) as url:
            answer = client.send(
                client.build_request("GET", url + EVENTS, headers=AUTH), stream=True
            )
            stream = Stream(answer.iter_lines())
            stream.take(snapshot_size(scenario))
        # Leaving the block stopped the server although the stream was open and idle.
        assert time.monotonic() - started < 8
        assert app.state.service.closed
        assert app.state.service.open_streams == 0
        assert [line for line in stream.lines if line.startswith("event:")] == []
        answer.close()


def test_client_disconnect_ends_the_stream_on_the_server(
    served: tuple[str, Any], scenario: Scenario
) -> None:
    url, service = served
    with httpx.Client(base_url=url, timeout=5) as client:
        with client.stream("GET", EVENTS, headers=AUTH) as answer:
            # Held in a name: a dropped line iterator closes the connection when collected.
            stream = Stream(answer.iter_lines())
            stream.take(snapshot_size(scenario))
            assert service.open_streams == 1
        deadline = time.monotonic() + 3
        while service.open_streams and time.monotonic() < deadline:
            time.sleep(0.02)
        assert service.open_streams == 0


def test_resume_from_a_trimmed_log_gets_a_fresh_snapshot(
    scenario: Scenario, clock: FakeClock
) -> None:
    app = create_app(scenario, clock=clock, heartbeat=0.2, tick=0.05, max_events=10)
    engine = app.state.service.engine
    # Enough engine events for the log to drop its oldest ones (it trims in chunks).
    for step in range(5000):
        engine.reserve("8453:USDC:usdc", 1, clock.now + step * 1e-6, 1e-6)
    engine.advance(clock.now + 1)
    with (
        serve_in_thread(app) as url,
        httpx.Client(base_url=url, timeout=5) as client,
        client.stream("GET", EVENTS, headers={**AUTH, "Last-Event-ID": "1"}) as answer,
    ):
        events = Stream(answer.iter_lines()).take(snapshot_size(scenario))
        assert {e["json"].get("reason", "fee") for e in events} <= {"snapshot", "fee"}
        assert {e["id"] for e in events} == {str(engine.last_event_id)}
