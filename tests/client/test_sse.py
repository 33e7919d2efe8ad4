"""The event-stream decoder, and the liquidity stream's reconnection on a mock service."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.client import (
    Attempt,
    InvalidResponse,
    RetryPolicy,
    ServiceClient,
    TransportError,
    Unauthorized,
)
from toolkit.client.events import StreamCursor, parse_stream_event
from toolkit.client.sse import EventStreamDecoder
from toolkit.resources import LiquidityEvent

from .conftest import KEY, Sleeps, respond

POOL = "0x2222222222222222222222222222222222222222"


def test_decoder_handles_comments_ids_retry_and_multiline_data() -> None:
    decoder = EventStreamDecoder()
    events = decoder.feed(
        "\ufeff: ping\n\nretry: 1500\nid: 4\nevent: fee\ndata: a\ndata: b\n\n"
        "data: no name\n\nid: 9\n\nevent: empty\n\n"
    )
    assert [(e.event, e.id, e.data, e.retry) for e in events] == [
        ("fee", "4", "a\nb", 1500),
        ("message", "4", "no name", None),
    ]
    # An id-only block updates the last id without dispatching anything.
    (after,) = decoder.feed("data: x\n\n")
    assert after.id == "9"


def test_decoder_accepts_crlf_and_cr_line_ends_split_across_chunks() -> None:
    decoder = EventStreamDecoder()
    assert decoder.feed("event: fee\r") == []
    assert decoder.feed("\ndata: 1\r\r") == []
    (event,) = decoder.feed("x")
    assert (event.event, event.data) == ("fee", "1")


def test_a_partial_event_is_never_dispatched() -> None:
    decoder = EventStreamDecoder()
    assert decoder.feed('event: liquidity\nid: 3\ndata: {"a": 1}\n') == []


STREAM = (
    ": heartbeat\n\n"
    'id: 1\nevent: liquidity\ndata: {"x": 1}\n\n'
    "id: 2\r\nevent: fee\r\ndata: line1\r\ndata: line2\r\n\r\n"
    "retry: 100\n\n"
    "id: 3\revent: liquidity\rdata: tail\r\r"
)


@settings(max_examples=80, deadline=None)
@given(cuts=st.lists(st.integers(0, len(STREAM)), max_size=12))
def test_decoding_does_not_depend_on_how_the_stream_is_chunked(cuts: list[int]) -> None:
    whole = [(e.event, e.id, e.data) for e in EventStreamDecoder().feed(STREAM + "\n")]
    decoder = EventStreamDecoder()
    pieces, start = [], 0
    for cut in sorted(cuts):
        pieces.append(STREAM[start:cut])
        start = cut
    pieces.append(STREAM[start:] + "\n")
    chunked = [(e.event, e.id, e.data) for p in pieces for e in decoder.feed(p)]
    assert chunked == whole
    assert [event_id for _, event_id, _ in whole] == ["1", "2", "3"]


def _event(event_id: int, reason: str = "reservation_created", name: str = "liquidity") -> str:
    return f"id: {event_id}\nevent: {name}\ndata: {json.dumps(_payload(name, reason))}\n\n"


def _payload(name: str, reason: str) -> dict[str, object]:
    if name == "fee":
        return {"srcChain": "eip155:1", "dstChain": "eip155:10", "token": "USDC", "tiers": []}
    return {
        "chain": "eip155:8453",
        "token": "USDC",
        "poolType": "usdc",
        "address": POOL,
        "balance": "1",
        "reserved": "0",
        "outstanding": "0",
        "reason": reason,
    }


def _admitted(cursor: StreamCursor, text: str) -> list[tuple[int, bool]]:
    cursor.connected()
    out = []
    for sse in EventStreamDecoder().feed(text):
        parsed = parse_stream_event(sse)
        assert parsed is not None
        event = cursor.admit(parsed)
        if event is not None:
            out.append((event.id, event.snapshot))
    return out


def test_stream_cursor_rejects_replays_and_bad_ids() -> None:
    cursor = StreamCursor()
    assert cursor.headers() == {}
    assert _admitted(cursor, _event(3) + _event(3) + _event(2) + _event(5)) == [
        (3, False),
        (5, False),
    ]
    assert cursor.headers() == {"Last-Event-ID": "5"}
    with pytest.raises(ValueError, match="last_event_id: must be an integer"):
        StreamCursor("5")  # type: ignore[arg-type]


def test_snapshot_events_share_an_id_and_are_all_delivered() -> None:
    cursor = StreamCursor()
    snapshot = _event(7, "snapshot") * 3 + _event(7, name="fee") * 2
    assert _admitted(cursor, snapshot + _event(9)) == [(7, True)] * 5 + [(9, False)]
    # After a service restart its log starts again: a snapshot moves the cursor back.
    assert _admitted(cursor, _event(0, "snapshot") + _event(1)) == [(0, True), (1, False)]
    assert cursor.last_id == 1


def liquidity(event_id: int, balance: int) -> str:
    data = {
        "chain": "eip155:8453",
        "token": "USDC",
        "poolType": "usdc",
        "address": POOL,
        "balance": str(balance),
        "reserved": "0",
        "outstanding": "0",
        "reason": "created",
    }
    return f"id: {event_id}\nevent: liquidity\ndata: {json.dumps(data)}\n\n"


class Dropping(httpx.SyncByteStream):
    """Yields some chunks, then fails like a dropped connection."""

    def __init__(self, chunks: list[bytes], fail: bool) -> None:
        self.chunks = chunks
        self.fail = fail

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks
        if self.fail:
            raise httpx.ReadError("connection reset by peer")


class StreamService:
    """A log of 20 events, served after ``Last-Event-ID``; each connection drops after 3."""

    def __init__(self, drop_after: int = 3, total: int = 20) -> None:
        # Ids with gaps, as the engine's log skips kinds the stream does not push.
        self.ids = [i * 3 + (i % 2) for i in range(1, total + 1)]
        self.drop_after = drop_after
        self.connects: list[str | None] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.headers["X-Auth-Token"] == KEY
        last = request.headers.get("Last-Event-ID")
        self.connects.append(last)
        pending = [i for i in self.ids if last is None or i > int(last)]
        batch = pending[: self.drop_after]
        # Replay the last delivered event too: the client must drop it.
        replay = [int(last)] if last is not None else []
        chunks = [liquidity(i, 1000 + i).encode() for i in replay + batch]
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            stream=Dropping(chunks, fail=len(pending) > self.drop_after),
        )


def test_liquidity_events_reconnect_with_last_event_id_without_gaps_or_duplicates() -> None:
    service = StreamService()
    sleeps = Sleeps()
    attempts: list[Attempt] = []
    client = ServiceClient(
        "https://service.example",
        api_key=KEY,
        transport=httpx.MockTransport(service),
        clock=sleeps,
        retry=RetryPolicy(error_retries=2, rng=random.Random(0)),
        on_attempt=attempts.append,
    )
    events = client.liquidity_events()
    got = [next(events) for _ in range(len(service.ids))]
    events.close()
    assert [e.id for e in got] == service.ids
    assert all(
        isinstance(e.data, LiquidityEvent) and e.data.balance == str(1000 + e.id) for e in got
    )
    assert service.connects[0] is None
    assert service.connects[1:] == [str(service.ids[n * 3 - 1]) for n in range(1, 7)]
    assert [a.status for a in attempts] == [200] * 7
    assert all("ReadError" in (a.error or "") for a in attempts[:-1])
    assert attempts[-1].error is None and attempts[-1].final
    assert len(sleeps.delays) == 6


def test_liquidity_events_resume_from_a_given_id() -> None:
    service = StreamService(drop_after=100)
    client = ServiceClient(
        "https://service.example", api_key=KEY, transport=httpx.MockTransport(service)
    )
    events = client.liquidity_events(last_event_id=service.ids[9])
    assert next(events).id == service.ids[10]
    events.close()
    assert service.connects == [str(service.ids[9])]


def test_liquidity_events_give_up_after_consecutive_failures() -> None:
    sleeps = Sleeps()
    failing = httpx.MockTransport(lambda r: (_ for _ in ()).throw(httpx.ConnectError("refused")))
    client = ServiceClient(
        "https://service.example",
        api_key=KEY,
        transport=failing,
        clock=sleeps,
        retry=RetryPolicy(error_retries=3, rng=random.Random(0)),
    )
    with pytest.raises(TransportError, match="liquidity_events: no response: ConnectError"):
        next(client.liquidity_events())
    assert len(sleeps.delays) == 3


def test_liquidity_events_stop_at_once_on_a_bad_key() -> None:
    client = ServiceClient(
        "https://service.example",
        api_key=KEY,
        transport=httpx.MockTransport(lambda r: respond(401, {"error": "unknown key"})),
    )
    with pytest.raises(Unauthorized, match="liquidity_events: HTTP 401: unknown key"):
        next(client.liquidity_events())


def test_a_malformed_event_is_an_invalid_response() -> None:
    body = b'id: 1\nevent: liquidity\ndata: {"chain": "eip155:1"}\n\n'
    client = ServiceClient(
        "https://service.example",
        api_key=KEY,
        transport=httpx.MockTransport(
            lambda r: httpx.Response(
                200, headers={"content-type": "text/event-stream"}, content=body
            )
        ),
    )
    with pytest.raises(InvalidResponse, match="malformed liquidity event 1: token: is required"):
        next(client.liquidity_events())


def test_liquidity_events_end_after_their_duration_on_a_quiet_stream() -> None:
    class Quiet(httpx.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            while True:
                yield b": ping\n\n"

    client = ServiceClient(
        "https://service.example",
        api_key=KEY,
        transport=httpx.MockTransport(
            lambda r: httpx.Response(
                200, headers={"content-type": "text/event-stream"}, stream=Quiet()
            )
        ),
    )
    assert list(client.liquidity_events(duration_s=0.05)) == []
