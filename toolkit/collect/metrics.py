"""Prometheus metrics of running followers (``toolkit watch --metrics-port``).

:class:`FollowerMetrics` is a ``prometheus_client`` collector: at each scrape it reads every
follower's :class:`~toolkit.collect.follow.FollowStatus` row (the one ``toolkit status``
shows, target redacted) and exports it, labelled ``follower`` and ``kind``:

- ``toolkit_follower_up``: 1 while the follower runs, 0 once stopped or failed;
- counters ``toolkit_follower_rows_written_total``, ``..._polls_total``, ``..._errors_total``,
  ``..._reorgs_total`` (since the process started it);
- gauges ``toolkit_follower_head_block``, ``..._stored_block``, ``..._lag_blocks``,
  ``..._lag_seconds``, ``..._rows_per_second`` (over the last minute) and
  ``..._last_flush_timestamp_seconds`` (Unix time), absent while unknown.

:func:`serve_metrics` serves them at ``/metrics`` from a daemon thread; it binds loopback by
default (put a reverse proxy or an agent in front to scrape from elsewhere).

>>> from toolkit.collect.follow import FollowStatus
>>> class Follower:
...     status = FollowStatus("chain:1", "chain", "http://node:8545", 2.0, rows_written=40)
>>> text = exposition(FollowerMetrics([Follower()]))
>>> [line for line in text.splitlines() if line.startswith("toolkit_follower_rows_written")]
['toolkit_follower_rows_written_total{follower="chain:1",kind="chain"} 40.0']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = ["FollowerMetrics", "MetricsServer", "exposition", "serve_metrics"]

_LABELS = ["follower", "kind"]
#: counter name → (FollowStatus row column, help)
_COUNTERS = {
    "rows_written": ("rows_written", "Rows the follower wrote since its process started it."),
    "polls": ("polls", "Polls completed."),
    "errors": ("errors", "Polls that failed (retried after a backoff, or the follower stopped)."),
    "reorgs": ("reorgs", "Reorgs found (orphaned rows replaced or read again)."),
}
#: gauge name → (FollowStatus row column, help)
_GAUGES = {
    "head_block": ("head_block", "The chain head the follower last saw."),
    "stored_block": ("stored_block", "The last block whose rows are stored."),
    "lag_blocks": ("lag_blocks", "Blocks between the head and the last stored block."),
    "lag_seconds": ("lag_s", "Seconds between the head's time and the last stored block's."),
    "rows_per_second": ("rows_per_s", "Rows written per second over the last minute."),
}


class FollowerMetrics(Collector):
    """The metrics (module docstring) of ``followers`` (objects with a ``status``)."""

    def __init__(self, followers: Sequence[Any]) -> None:
        self.followers = list(followers)

    def collect(self) -> Iterator[Metric]:
        rows = [f.status.row() for f in self.followers]
        up = GaugeMetricFamily(
            "toolkit_follower_up", "1 while the follower runs, 0 once stopped.", labels=_LABELS
        )
        for row in rows:
            up.add_metric([row["name"], row["kind"]], 1.0 if row["state"] == "running" else 0.0)
        yield up
        for name, (column, text) in _COUNTERS.items():
            counter = CounterMetricFamily(f"toolkit_follower_{name}", text, labels=_LABELS)
            for row in rows:
                counter.add_metric([row["name"], row["kind"]], float(row[column] or 0))
            yield counter
        for name, (column, text) in _GAUGES.items():
            gauge = GaugeMetricFamily(f"toolkit_follower_{name}", text, labels=_LABELS)
            for row in rows:
                if row[column] is not None:
                    gauge.add_metric([row["name"], row["kind"]], float(row[column]))
            yield gauge
        flushed = GaugeMetricFamily(
            "toolkit_follower_last_flush_timestamp_seconds",
            "When the follower last flushed (Unix time).",
            labels=_LABELS,
        )
        for row in rows:
            if row["last_flush_at"] is not None:
                flushed.add_metric([row["name"], row["kind"]], row["last_flush_at"].timestamp())
        yield flushed


def exposition(collector: Collector) -> str:
    """The text a scrape of ``collector`` returns (Prometheus' text format)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return generate_latest(registry).decode()


class MetricsServer:
    """The running ``/metrics`` server: its :attr:`url`; :meth:`close` stops it."""

    def __init__(self, server: Any, thread: Any) -> None:
        self._server, self._thread = server, thread

    @property
    def url(self) -> str:
        """``http://host:port/metrics``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/metrics"

    def close(self) -> None:
        """Stop serving and wait for the thread."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def serve_metrics(followers: Sequence[Any], port: int, host: str = "127.0.0.1") -> MetricsServer:
    """Serve ``followers``' metrics on ``host:port`` (0: a free port) at ``/metrics``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FollowerMetrics(followers))
    server, thread = start_http_server(port, addr=host, registry=registry)
    return MetricsServer(server, thread)
