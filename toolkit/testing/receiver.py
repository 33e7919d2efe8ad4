"""A webhook receiver on loopback, for tests and notebooks: it records every JSON body posted
to it, with the time it arrived, and answers as told.

>>> import httpx
>>> with WebhookReceiver(statuses=[503]) as receiver:
...     first = httpx.post(receiver.url, json={"alert_id": "a1"}).status_code
...     second = httpx.post(receiver.url, json={"alert_id": "a1"}).status_code
...     first, second, [body["alert_id"] for body in receiver.bodies]
(503, 204, ['a1'])
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from toolkit.client.closing import Closing

__all__ = ["WebhookReceiver"]


class WebhookReceiver(Closing):
    """Listens on a free ``127.0.0.1`` port (:attr:`url`). The first answers are ``statuses``
    in turn (a failure's body is not kept), then 204 with the body kept in :attr:`bodies`
    (parsed JSON) and its arrival in :attr:`arrivals` (``time.time()``).

    >>> with WebhookReceiver() as receiver:
    ...     receiver.url.startswith("http://127.0.0.1:"), receiver.bodies
    (True, [])
    """

    def __init__(self, *, statuses: Sequence[int] = ()) -> None:
        self.bodies: list[Any] = []
        self.arrivals: list[float] = []
        self.requests = 0
        self._statuses = list(statuses)
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                status = receiver.take(self.rfile.read(length))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the receiver keeps what it got."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """Where to post (``http://127.0.0.1:PORT/hook``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/hook"

    def take(self, content: bytes) -> int:
        """Answer one post: the next scripted status, else keep the body and answer 204."""
        with self._lock:
            self.requests += 1
            if self._statuses:
                return self._statuses.pop(0)
            self.bodies.append(json.loads(content))
            self.arrivals.append(time.time())
            return 204

    def close(self) -> None:
        """Stop listening."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
