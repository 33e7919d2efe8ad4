"""Typed events of the liquidity stream and the bookkeeping that makes reconnection gap-free.

The stream (``GET /liquidity/protocol/{protocol}/events``) sends ``event: liquidity`` and
``event: fee`` with JSON data and an increasing ``id:``. On a new connection the service first
pushes the current state: one ``liquidity`` event per pool (reason ``snapshot``) and one ``fee``
event per route, all tagged with the id ``L`` of the latest log entry; live changes follow with
ids above ``L``. After a dropped connection the client reconnects with ``Last-Event-ID`` set to
the last id it delivered and the service resumes its log after it.

:class:`StreamCursor` holds that id. A change event at or below it is a replay and is dropped,
so the stream never yields a duplicate. Snapshot events are state, not log entries: they are
delivered with ``snapshot=True`` (several share one id) and move the cursor to their id, also
backwards, which is how a client follows a service whose log restarted.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Literal

from httpx_sse import ServerSentEvent

from toolkit.arguments import whole
from toolkit.client.errors import InvalidResponse
from toolkit.resources import FeeEvent, InvalidInput, LiquidityEvent, parse

__all__ = ["EVENT_NAMES", "StreamCursor", "StreamEvent", "parse_stream_event"]

EVENT_NAMES: tuple[str, ...] = ("liquidity", "fee")


@dataclass(frozen=True)
class StreamEvent:
    """One liquidity-stream event: its id, its name, the typed payload and the raw JSON.

    ``snapshot`` marks the connect-time state events (see the module docstring).

    >>> from httpx_sse import ServerSentEvent
    >>> data = ('{"srcChain": "eip155:1", "dstChain": "eip155:10", "token": "USDC", '
    ...         '"tiers": []}')
    >>> parse_stream_event(ServerSentEvent(event="fee", data=data, id="7")).id
    7
    """

    id: int
    event: Literal["liquidity", "fee"]
    data: LiquidityEvent | FeeEvent
    raw: str
    snapshot: bool = False


def parse_stream_event(sse: ServerSentEvent) -> StreamEvent | None:
    """The typed event, or None for events of other names; raises ``InvalidResponse`` when a
    ``liquidity``/``fee`` event lacks an integer id or carries a malformed payload."""
    if sse.event not in EVENT_NAMES:
        return None
    try:
        event_id = int(sse.id)
    except ValueError:
        raise InvalidResponse(
            "liquidity_events", 200, detail=f"event id {sse.id!r} is not an integer"
        ) from None
    try:
        payload = json.loads(sse.data)
        if sse.event == "liquidity":
            data: LiquidityEvent | FeeEvent = parse(LiquidityEvent, payload, root="data")
            return StreamEvent(event_id, "liquidity", data, sse.data)
        data = parse(FeeEvent, payload, root="data")
        return StreamEvent(event_id, "fee", data, sse.data)
    except (InvalidInput, ValueError) as exc:
        raise InvalidResponse(
            "liquidity_events", 200, detail=f"malformed {sse.event} event {event_id}: {exc}"
        ) from None


class StreamCursor:
    """The position in the stream: the id to send as ``Last-Event-ID`` and the dedupe rule.

    Call :meth:`connected` at the start of every connection, then :meth:`admit` each event.

    >>> from httpx_sse import ServerSentEvent
    >>> fee = '{"srcChain": "eip155:1", "dstChain": "eip155:10", "token": "USDC", "tiers": []}'
    >>> cursor = StreamCursor(5)
    >>> cursor.connected()
    >>> [cursor.admit(parse_stream_event(ServerSentEvent(event="fee", data=fee, id=i)))
    ...  is not None for i in ("5", "6", "6")]
    [False, True, False]
    >>> cursor.last_id
    6
    """

    def __init__(self, last_id: int | None = None) -> None:
        if last_id is not None:
            whole(last_id, "last_event_id")
        self.last_id = last_id
        self._group: int | None = None

    def headers(self) -> dict[str, str]:
        """The ``Last-Event-ID`` header to resume after the last delivered event."""
        return {} if self.last_id is None else {"Last-Event-ID": str(self.last_id)}

    def connected(self) -> None:
        """A new connection starts: no snapshot group is open."""
        self._group = None

    def admit(self, event: StreamEvent) -> StreamEvent | None:
        """The event to deliver (with ``snapshot`` set), or None for a replay."""
        in_group = self._group is not None and event.id == self._group
        marked = isinstance(event.data, LiquidityEvent) and event.data.reason == "snapshot"
        if marked or in_group:
            self._group = event.id
            self.last_id = event.id
            return dataclasses.replace(event, snapshot=True)
        self._group = None
        if self.last_id is not None and event.id <= self.last_id:
            return None
        self.last_id = event.id
        return event
