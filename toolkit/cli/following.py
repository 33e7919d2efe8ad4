"""Running followers from the command line (``collect --follow``, ``watch``): signals, logs,
the exit status.

SIGINT (Ctrl-C) and SIGTERM (``systemctl stop``, ``docker stop``) ask the loop to stop: the
poll under way ends, every follower flushes and records its run ``interrupted``, and the
command exits 130 after SIGINT, 0 after SIGTERM (1 when a follower failed on its own). A second
SIGINT stops at once (``KeyboardInterrupt``: the store rolls back the write under way).

Logs: one line per follower event on stderr; with ``--log-json`` (or ``TOOLKIT_LOG_JSON=1``)
one JSON object per line (``ts``, ``level``, ``event`` and the event's fields), for journald,
Loki or ``jq``. URLs in events are already redacted; keys never reach an event.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from types import FrameType
from typing import Any

__all__ = ["LOG_JSON_ENV", "JsonLines", "add_log_arguments", "configure_logs", "run_followers"]

#: Environment variable that turns JSON log lines on (``1``, ``true``, ``yes``).
LOG_JSON_ENV = "TOOLKIT_LOG_JSON"


class JsonLines(logging.Formatter):
    """One JSON object per record: ``ts`` (UTC, ISO 8601), ``level``, then the event's fields.

    >>> record = logging.LogRecord("toolkit.follow", logging.INFO, "", 0, "poll", None, None)
    >>> record.fields = {"event": "poll", "rows": 3}
    >>> json.loads(JsonLines().format(record))["rows"]
    3
    """

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "fields", None) or {"event": record.getMessage()}
        stamp = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        line = {"ts": stamp, "level": record.levelname.lower(), **fields}
        return json.dumps(line, default=str, separators=(",", ":"))


class _Text(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        fields = dict(getattr(record, "fields", None) or {"event": record.getMessage()})
        stamp = datetime.fromtimestamp(record.created, UTC).strftime("%H:%M:%S")
        event = fields.pop("event")
        rest = " ".join(f"{k}={v}" for k, v in fields.items())
        return f"{stamp} {event} {rest}".rstrip()


def add_log_arguments(parser: Any) -> None:
    """``--log-json``."""
    parser.add_argument(
        "--log-json",
        action="store_true",
        help=f"follower events as JSON lines on stderr (also: {LOG_JSON_ENV}=1)",
    )


def configure_logs(log_json: bool) -> logging.Handler:
    """Send the ``toolkit.follow`` events to stderr, as JSON lines or text; the handler."""
    from toolkit.collect.follow import LOGGER

    wanted = log_json or os.environ.get(LOG_JSON_ENV, "").lower() in ("1", "true", "yes")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines() if wanted else _Text())
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.INFO)
    LOGGER.propagate = False
    return handler


def run_followers(
    store: Any, followers: Sequence[Any], *, log_json: bool, metrics_port: int | None = None
) -> int:
    """Run ``followers`` on ``store`` until a signal (module docstring); the exit status.
    With ``metrics_port``, their Prometheus metrics are served on loopback meanwhile
    (:mod:`toolkit.collect.metrics`; 0: a free port, named by the ``metrics`` event); a port
    that cannot be bound exits 2 before any follower starts."""
    from toolkit.collect.follow import LOGGER, follow, log_event

    handler = configure_logs(log_json)
    metrics = None
    if metrics_port is not None:
        from toolkit.collect.metrics import serve_metrics

        try:
            metrics = serve_metrics(followers, metrics_port)
        except OSError as exc:
            LOGGER.removeHandler(handler)
            print(f"--metrics-port: cannot listen on 127.0.0.1:{metrics_port} "
                  f"({exc.strerror or exc})", file=sys.stderr)  # fmt: skip
            return 2
        log_event("metrics", url=metrics.url)
    stop = threading.Event()
    received: list[int] = []

    def on_signal(number: int, frame: FrameType | None) -> None:
        if received and number == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: stop now
        received.append(number)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        states = follow(store, followers, stop)
    finally:
        for sig, handler_before in previous.items():
            signal.signal(sig, handler_before)
        if metrics is not None:
            metrics.close()
        LOGGER.removeHandler(handler)
    for follower in followers:
        status = follower.status
        state = states.get(status.name, "not started")
        shown = "interrupted" if state == "stopped" else state  # as the run is recorded
        print(
            f"{status.name}: run {status.run_id} {shown}, {status.rows_written} rows written, "
            f"{status.errors} errors"
        )
    print(f"database: {store.path if store.path is not None else ':memory:'}")
    if received and received[0] == signal.SIGINT:
        return 130
    return 1 if any(state == "failed" for state in states.values()) else 0
