"""The liquidity event stream collector: SSE into ``liquidity_events``, gap-free across drops.

Change events (a reservation created, released, filled, a loan authorized, a repayment, a fee
change) are rows of ``liquidity_events`` keyed by ``(source, event_id)``; ``source`` is the
stream's URL without credentials, so events of one service never mix with another's and a
replayed event is written once. The connect-time state the service pushes (one ``snapshot``
event per pool and per route, all tagged with the latest log id) is state, not a change: it
goes to ``pool_snapshots`` and ``fee_tiers`` under the snapshot id ``<run_id>:stream:<id>``.

Dropped connections reconnect with ``Last-Event-ID`` (see :mod:`toolkit.client.events`); a
resumed run continues from the highest event id stored for its source.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolkit.arguments import number
from toolkit.client import ServiceClient, StreamEvent
from toolkit.client.operations import protocol_segment
from toolkit.codecs import caip2
from toolkit.collect.rows import Row, event_row, fee_tier_rows, utc
from toolkit.collect.run import Collector, Progress
from toolkit.collect.writer import BatchWriter
from toolkit.resources import FeeEvent, LiquidityEvent
from toolkit.store import Store

__all__ = ["LiquidityStream", "stream_source"]


def stream_source(base_url: str, protocol: str) -> str:
    """The ``source`` of a stream's events: its URL without credentials.

    >>> stream_source("https://api.example", "partner-escrow")
    'https://api.example/liquidity/protocol/partner-escrow/events'
    """
    return f"{base_url.rstrip('/')}/liquidity/protocol/{protocol_segment(protocol)}/events"


class LiquidityStream(Collector):
    """Follow the liquidity event stream for ``duration_s`` seconds (None: until Ctrl-C).

    A resumed run follows the stream for the ``duration_s`` given now, else for the stored one.

    >>> LiquidityStream(client, Store(":memory:"), duration_s=1, progress=False).run().status
    'completed'
    """

    kind = "liquidity"
    unit = "event"

    def __init__(
        self,
        client: ServiceClient,
        store: Store,
        *,
        duration_s: float | None = None,
        protocol: str | None = None,
        progress: bool = True,
        batch_size: int = 500,
    ) -> None:
        super().__init__(client, store, progress=progress, batch_size=batch_size)
        if duration_s is not None:
            number(duration_s, "duration_s", above=0)
        self.duration_s = None if duration_s is None else float(duration_s)
        self._duration_given = duration_s is not None
        self.protocol = protocol_segment(protocol or client.protocol)
        self.source = stream_source(client.base_url, self.protocol)
        self.events = 0

    def parameters(self) -> dict[str, Any]:
        return {"duration": self.duration_s, "protocol": self.protocol, "source": self.source}

    def restore(self, parameters: Mapping[str, Any]) -> None:
        # A duration given for the resume says how much longer to follow the stream.
        duration_s = parameters.get("duration")
        if not self._duration_given:
            self.duration_s = float(duration_s) if isinstance(duration_s, int | float) else None
        self.protocol = protocol_segment(str(parameters.get("protocol") or self.protocol))
        # The source is where this client points now: an embedded service restarted in a new
        # process is a new source, and its event ids start afresh.
        self.source = stream_source(self.client.base_url, self.protocol)

    def collect(self, run_id: str, writer: BatchWriter, bar: Progress, resumed: bool) -> None:
        last = self.store.last_event_id(self.source) if resumed else None
        for event in self.client.liquidity_events(
            self.protocol, last_event_id=last, duration_s=self.duration_s
        ):
            received = self.clock()
            if event.snapshot:
                self.snapshot(run_id, event, received, writer)
            else:
                writer.add("liquidity_events", [event_row(self.source, run_id, event, received)])
            self.events += 1
            self.note(True)
            bar.update(1)

    def snapshot(
        self, run_id: str, event: StreamEvent, received: float, writer: BatchWriter
    ) -> None:
        """Queue the connect-time state ``event`` as snapshot rows (``<run_id>:stream:<id>``)."""
        snapshot_id = f"{run_id}:stream:{event.id}"
        data = event.data
        if isinstance(data, LiquidityEvent):
            row: Row = {
                "snapshot_id": snapshot_id,
                "observed_at": utc(received),
                "chain": data.chain_id,
                "token": data.token,
                "pool_type": data.pool_type,
                "address": data.address,
                "balance": int(data.balance),
            }
            writer.add("pool_snapshots", [row])
        elif isinstance(data, FeeEvent):
            writer.add(
                "fee_tiers",
                fee_tier_rows(
                    snapshot_id,
                    received,
                    caip2.parse(data.src_chain),
                    caip2.parse(data.dst_chain),
                    data.token,
                    list(data.tiers),
                ),
            )
