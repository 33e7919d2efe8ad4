"""The liquidity event stream: ``GET /liquidity/protocol/{protocol}/events`` (server-sent events).

Wire format: ``event: liquidity`` (data: a :class:`~toolkit.resources.LiquidityEvent`: chain,
token, poolType, address, balance available now, reserved, outstanding, reason) and
``event: fee`` (data: a :class:`~toolkit.resources.FeeEvent`: srcChain, dstChain, token, tiers),
JSON data, an ``id:`` on every event, and a comment ``: ping`` every ``heartbeat`` seconds.

Ids and resuming. Ids are the engine's event-log ids (1, 2, 3, ... with no gaps); the stream
sends the liquidity and fee events of the log and skips the others (a re-keyed reservation
changes only its duration), so ids on the wire increase but may skip numbers.

- A new connection (no ``Last-Event-ID``) first gets the current state: one ``liquidity`` event
  per pool (reason ``snapshot``) and one ``fee`` event per route, ALL carrying the id ``L`` of
  the latest log entry at that instant (0 before any). The snapshot is taken in one synchronous
  step, so it is exactly the state after event ``L``; the live events that follow have ids
  above ``L``. Resuming from ``L`` therefore yields every later change once: no gap, no
  duplicate. The snapshot is written to the socket in one piece, so a client holds either
  all of it or none; a client that somehow kept only part of it must reconnect without
  ``Last-Event-ID`` (ids alone cannot tell a partial snapshot from a whole one).
- ``Last-Event-ID: N`` resumes from the log: every liquidity and fee event with an id above
  ``N``, then live events. No snapshot is sent, since the client holds the state as of ``N``.
- A ``Last-Event-ID`` the log cannot resume from (above the latest id, e.g. after a server
  restart, or older than the retained log) gets a fresh snapshot instead, as a new connection.
- A malformed ``Last-Event-ID`` (not decimal digits) is a 400 before the stream starts.

Reservations lapse lazily in the engine, so each stream also moves the engine's clock every
``tick`` seconds; a lapse then shows as a ``liquidity`` event (reason ``reservation_released``)
within a tick. The stream ends when the client disconnects, and for every client when
:meth:`Service.close_streams` runs (app shutdown, or uvicorn shutting down under ``toolkit
serve`` or :func:`toolkit.server.serve_in_thread`). In-process clients
(``httpx.ASGITransport``) receive the body only when the stream ends: use the loopback server
to follow the stream live.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any, Final

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import Response

from toolkit.engine import LIQUIDITY_KINDS, Engine, Event, EventsTruncated
from toolkit.engine.events import FEE as FEE_KIND
from toolkit.server.docs import ERROR_RESPONSES, operation
from toolkit.server.errors import ApiError
from toolkit.server.params import check_protocol, require_key, service_of
from toolkit.server.routing import surface_router
from toolkit.server.service import Service

__all__ = ["REASONS", "fee_payload", "liquidity_payload", "router", "snapshot"]

router = surface_router(tags=["liquidity"])

LIQUIDITY: Final = "liquidity"
FEE: Final = "fee"
#: ``reason`` of a liquidity event, by engine event kind.
REASONS: Final = {
    "created": "reservation_created",
    "released": "reservation_released",
    "filled": "order_filled",
    "filled_direct": "order_filled",
    "borrowed": "loan_authorized",
    "repaid": "repaid",
    "settled": "settled",
    "credited": "repayment_credited",
    "unfilled": "fill_reverted",
    "transfer_out": "transfer_sent",
    "transfer_in": "transfer_arrived",
}
_SNAPSHOT: Final = "snapshot"


def _dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, separators=(",", ":"))


def liquidity_payload(
    service: Service,
    pool_id: str,
    available: int,
    reserved: int,
    outstanding: int,
    reason: str,
) -> dict[str, Any]:
    """The data of a ``liquidity`` event for one pool."""
    pool = service.pool_config(pool_id)
    return {
        "chain": f"eip155:{pool.chain}",
        "token": pool.token,
        "poolType": pool.type,
        "address": pool.address,
        "balance": str(available),
        "reserved": str(reserved),
        "outstanding": str(outstanding),
        "reason": reason,
    }


def fee_payload(src: int, dst: int, symbol: str, tiers: Iterable[Any]) -> dict[str, Any]:
    """The data of a ``fee`` event for one route (``tiers``: scenario ``FeeTier`` values)."""
    return {
        "srcChain": f"eip155:{src}",
        "dstChain": f"eip155:{dst}",
        "token": symbol,
        "tiers": [
            {"feeBps": t.fee_bps, "minAmount": t.min_amount, "maxAmount": t.max_amount}
            for t in tiers
        ],
    }


def snapshot(service: Service) -> tuple[int, list[ServerSentEvent]]:
    """The current state as events, all with the id of the latest log entry (one sync step)."""
    engine = service.engine
    pools = engine.pools(service.now())
    last = engine.last_event_id
    tag = str(last)
    events = [
        ServerSentEvent(
            _dumps(
                liquidity_payload(service, p.id, p.available, p.reserved, p.outstanding, _SNAPSHOT)
            ),
            event=LIQUIDITY,
            id=tag,
        )
        for p in pools
    ]
    for route in service.scenario.routes:
        tiers = engine.fee_tiers(route.src, route.dst, route.token)
        events.append(
            ServerSentEvent(
                _dumps(fee_payload(route.src, route.dst, route.token, tiers)), event=FEE, id=tag
            )
        )
    return last, events


def _wire(service: Service, event: Event) -> ServerSentEvent | None:
    if event.kind in LIQUIDITY_KINDS and event.pool is not None:
        payload = liquidity_payload(
            service,
            event.pool,
            event.available,
            event.reserved,
            event.outstanding,
            REASONS.get(event.kind, event.kind),
        )
        return ServerSentEvent(_dumps(payload), event=LIQUIDITY, id=str(event.id))
    if event.kind == FEE_KIND:
        src, dst, symbol = event.key.split(":", 2)
        payload = fee_payload(int(src), int(dst), symbol, event.detail)
        return ServerSentEvent(_dumps(payload), event=FEE, id=str(event.id))
    return None


def _one_write(events: list[ServerSentEvent]) -> bytes:
    # One chunk: the heartbeat cannot interleave, and the snapshot reaches the socket whole.
    return b"".join(event.encode() for event in events)


def _resumable(service: Service, last_id: int | None) -> int | None:
    """``last_id`` when the log can resume from it, else None (send a snapshot)."""
    if last_id is None or last_id > service.engine.last_event_id:
        return None
    try:
        service.engine.events_since(last_id)
    except EventsTruncated:
        return None
    return last_id


async def stream(service: Service, last_id: int | None) -> AsyncIterator[ServerSentEvent | bytes]:
    """The event stream of one connection (see the module docstring for the id rules)."""
    service.stream_opened()
    try:
        async for item in _events(service, last_id):
            yield item
    finally:
        service.stream_closed()


async def _events(service: Service, last_id: int | None) -> AsyncIterator[ServerSentEvent | bytes]:
    # Every read of the engine holds the service's lock; nothing is sent while holding it.
    engine = service.engine
    first = None
    async with service.lock.hold():
        engine.advance(service.now())
        cursor = _resumable(service, last_id)
        if cursor is None:
            cursor, events = snapshot(service)
            first = _one_write(events)
    if first is not None:
        yield first
    while not service.closed:
        async with service.lock.hold():
            items, cursor, restarted = _pending(service, engine, cursor)
        for item in items:
            yield item
        if restarted:
            continue
        await service.wait_for_change(service.tick)
        async with service.lock.hold():
            before = engine.last_event_id
            engine.advance(service.now())
            changed = engine.last_event_id != before
        if changed:
            service.notify()


def _pending(
    service: Service, engine: Engine, cursor: int
) -> tuple[list[ServerSentEvent | bytes], int, bool]:
    """What the stream sends next from ``cursor`` (of the engine it started on), the new
    cursor, and whether it started over (a client further behind than the log keeps gets the
    state again)."""
    try:
        pending = list(engine.events_since(cursor))
    except EventsTruncated:
        cursor, events = snapshot(service)
        return [_one_write(events)], cursor, True
    items: list[ServerSentEvent | bytes] = []
    for event in pending:
        cursor = event.id
        wire = _wire(service, event)
        if wire is not None:
            items.append(wire)
    return items, cursor, False


def _last_event_id(request: Request) -> int | None:
    text = request.headers.get("last-event-id")
    if text is None or text.strip() == "":
        return None
    text = text.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 30:
        raise ApiError.bad("Last-Event-ID", "must be an event id (decimal digits)")
    return int(text)


@router.get(
    "/liquidity/protocol/{protocol}/events",
    summary="Stream of liquidity and fee updates (server-sent events)",
    description=(
        "On connect, one liquidity event per pool and one fee event per route, all with the "
        "id of the latest log entry; then liquidity and fee events as they happen, with "
        "increasing ids. Last-Event-ID resumes from the log without gaps or duplicates. A "
        "comment ': ping' is sent on idle streams. Unknown protocol or bad Last-Event-ID: 400."
    ),
    responses={
        200: {"description": "Event stream", "content": {"text/event-stream": {}}},
        400: ERROR_RESPONSES[400],
        401: ERROR_RESPONSES[401],
    },
    response_class=EventSourceResponse,
    openapi_extra=operation(path=["protocol"], key=True),
)
async def events(request: Request) -> Response:
    service = service_of(request)
    require_key(request, service)
    check_protocol(request.path_params["protocol"])
    last_id = _last_event_id(request)
    return EventSourceResponse(
        stream(service, last_id),
        ping=service.heartbeat,
        ping_message_factory=lambda: ServerSentEvent(comment="ping"),
    )
