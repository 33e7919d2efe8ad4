"""A fault-injecting HTTP proxy on loopback, for JSON-RPC nodes and HTTP services alike.

:class:`FaultProxy` listens on a free ``127.0.0.1`` port and forwards every request to
``upstream`` (anvil, a served embedded service, any URL), failing a seeded share of them as a
:class:`~toolkit.testing.faults.FaultMix` says (429 with and without ``Retry-After``, 503,
timeouts, answers cut mid-body, garbled JSON), and refusing ``eth_getLogs`` queries beyond the
bounds of named providers, in their own words (:class:`~toolkit.testing.faults.LogLimit`).
Point a client at :attr:`FaultProxy.url` instead of the upstream: the path is kept, so a
served instance's ``/rpc/8453`` is ``proxy.url + "/rpc/8453"``.

Every request is recorded (:attr:`FaultProxy.records`: arrival time, path, JSON-RPC method,
fault, status), so a test counts what arrived per window (:meth:`FaultProxy.busiest`) and
which faults were served. Answers are read whole from the upstream before they are passed on,
except event streams, which are relayed as they come (faults are not injected into them).

>>> import httpx, json
>>> from toolkit.testing.faults import FaultMix
>>> from toolkit.testing.proxy import FaultProxy
>>> def node(request):
...     return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": "0x1"})
>>> with FaultProxy("http://node.invalid", mix=FaultMix(share=0.0),
...                 transport=httpx.MockTransport(node)) as proxy:
...     answer = httpx.post(proxy.url, json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId"})
...     answer.json()["result"], proxy.records[0].rpc
('0x1', 'eth_chainId')
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import cycle
from typing import Any

import httpx

from toolkit.client.closing import Closing
from toolkit.testing.faults import RATE_LIMIT_ANSWERS, FaultMix, LogLimit, rpc_error_body

__all__ = ["FaultProxy", "ProxyRecord"]

#: Headers that belong to one connection, not to the message (RFC 9110 §7.6.1), and those the
#: proxy sets itself.
_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "host",
        "content-length",
        "content-encoding",
        "accept-encoding",
        "date",
        "server",
    }
)


@dataclass(frozen=True)
class ProxyRecord:
    """One request the proxy received: when (``time.monotonic()``), its path, its JSON-RPC
    method (``batch of N``, or None for another request), the fault served (None: passed on)
    and the status answered (0: none, the connection closed)."""

    at_s: float
    path: str
    rpc: str | None
    fault: str | None
    status: int


def _rpc_of(body: bytes) -> tuple[str | None, Any]:
    """The JSON-RPC method of a request body (``batch of N``) and the parsed body."""
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        return None, None
    if isinstance(parsed, list):
        return f"batch of {len(parsed)}", parsed
    if isinstance(parsed, dict) and "method" in parsed:
        return str(parsed["method"]), parsed
    return None, parsed


def _log_range(parsed: Any) -> tuple[int, int] | None:
    """``(first, last)`` of a single ``eth_getLogs`` request with numeric bounds."""
    if not isinstance(parsed, dict) or parsed.get("method") != "eth_getLogs":
        return None
    try:
        query = parsed["params"][0]
        return int(query["fromBlock"], 16), int(query["toBlock"], 16)
    except (KeyError, IndexError, TypeError, ValueError):
        return None


class FaultProxy(Closing):
    """The proxy (module docstring). ``mix`` defaults to :class:`FaultMix`'s 20 %;
    ``log_limits`` are checked in order on each ``eth_getLogs``; ``transport`` replaces the
    network under the forwarding client (tests); ``timeout_s`` bounds each upstream request.

    >>> import httpx
    >>> from toolkit.testing.faults import FaultMix
    >>> mix = FaultMix(share=1.0, kinds={"unavailable": 1.0})
    >>> with FaultProxy("http://127.0.0.1:9", mix=mix) as proxy:
    ...     httpx.get(proxy.url + "/health").status_code, proxy.faults()
    (503, Counter({'unavailable': 1}))
    """

    def __init__(
        self,
        upstream: str,
        *,
        mix: FaultMix | None = None,
        log_limits: Sequence[LogLimit] = (),
        timeout_s: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.log_limits = tuple(log_limits)
        self.records: list[ProxyRecord] = []
        self._lock = threading.Lock()
        self._rate_answers = cycle(RATE_LIMIT_ANSWERS)
        self.set_mix(FaultMix() if mix is None else mix)
        self._client = httpx.Client(timeout=timeout_s, transport=transport)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.proxy = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """The proxy's base URL (``http://127.0.0.1:PORT``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def set_mix(self, mix: FaultMix) -> None:
        """Fail the following requests as ``mix`` says (its seed starts a new stream)."""
        with self._lock:
            self.mix = mix
            self._rng = mix.rng()

    def faults(self) -> Counter[str]:
        """How many of each fault were served (log-limit refusals count as ``refused``)."""
        with self._lock:
            return Counter(r.fault for r in self.records if r.fault is not None)

    def busiest(self, window_s: float, *, path: str | None = None) -> int:
        """The most requests (to ``path``, or any) that arrived within one ``window_s``
        window: what a client pacing itself at ``r`` per second keeps to ``r * window_s`` plus
        its burst."""
        with self._lock:
            times = [r.at_s for r in self.records if path is None or r.path == path]
        best, start = 0, 0
        for end, t in enumerate(times):
            while t - times[start] >= window_s:
                start += 1
            best = max(best, end - start + 1)
        return best

    def close(self) -> None:
        """Stop listening and close the forwarding client."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        self._client.close()

    def __repr__(self) -> str:
        return f"FaultProxy({self.url!r} -> {self.upstream!r}, share={self.mix.share})"

    # -- one request ------------------------------------------------------------------------

    def _draw(self) -> tuple[str | None, FaultMix]:
        with self._lock:
            return self.mix.draw(self._rng), self.mix

    def _record(
        self, at_s: float, path: str, rpc: str | None, fault: str | None, status: int
    ) -> None:
        with self._lock:
            self.records.append(ProxyRecord(at_s, path, rpc, fault, status))

    def handle(self, handler: _Handler) -> None:
        """Answer one request (called on the server's thread for it)."""
        at_s = time.monotonic()
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        rpc, parsed = _rpc_of(body)
        fault, mix = self._draw()
        path = handler.path.partition("?")[0]
        # Recorded as the answer starts, not once it is sent: a client that has its answer
        # finds the request in ``records`` (and its fault in ``faults()``).
        handler.fault = fault
        handler.on_answer = lambda status: self._record(at_s, path, rpc, handler.fault, status)
        self._answer(handler, body, rpc, parsed, fault, mix)

    def _answer(
        self,
        handler: _Handler,
        body: bytes,
        rpc: str | None,
        parsed: Any,
        fault: str | None,
        mix: FaultMix,
    ) -> None:
        """Serve the request (``handler.fault``: the fault served)."""
        if fault in ("rate_limit", "rate_limit_date", "rate_limit_bare"):
            self._rate_limited(handler, rpc, parsed, fault, mix)
            return
        if fault == "unavailable":
            handler.reply(503, b"Service Unavailable", "text/plain")
            return
        if fault == "timeout":
            handler.answered(0)  # no answer is coming
            time.sleep(mix.hold_s)
            handler.close_connection = True
            return
        answer: tuple[int, dict[str, str], bytes] | None = None
        bounds = _log_range(parsed)
        if bounds is not None and self.log_limits:
            answer, refused = self._refusal(handler, parsed, bounds)
            if refused and fault not in ("drop", "malformed"):
                handler.fault = fault = "refused"
        self._forward(handler, body, fault, answer)

    def _rate_limited(
        self, handler: _Handler, rpc: str | None, parsed: Any, fault: str, mix: FaultMix
    ) -> None:
        base = int(time.time())
        headers = {"Date": formatdate(base, usegmt=True)}
        if fault == "rate_limit":
            headers["Retry-After"] = str(mix.retry_after_s)
        elif fault == "rate_limit_date":
            headers["Retry-After"] = formatdate(base + mix.retry_after_s, usegmt=True)
        if rpc is None:
            handler.reply(429, b"Too Many Requests", "text/plain", headers)
            return
        with self._lock:
            message = next(self._rate_answers)
        request_id = parsed.get("id") if isinstance(parsed, dict) else None
        content = json.dumps(rpc_error_body(request_id, message)).encode()
        handler.reply(429, content, "application/json", headers)

    def _refusal(
        self, handler: _Handler, parsed: Any, bounds: tuple[int, int]
    ) -> tuple[tuple[int, dict[str, str], bytes] | None, bool]:
        """The answer to an ``eth_getLogs`` when it is known before forwarding (a provider's
        refusal of a query beyond its bound, or the upstream's answer read to count its logs),
        and whether it is a refusal."""
        first, last = bounds
        results: int | None = None
        counted: tuple[int, dict[str, str], bytes] | None = None
        if any(limit.max_results is not None for limit in self.log_limits):
            answer = self._client.post(self.upstream + handler.path, json=parsed)
            counted = (answer.status_code, {"Content-Type": "application/json"}, answer.content)
            results = len(answer.json().get("result") or ())
        for limit in self.log_limits:
            if limit.refuses(first, last, results):
                content = json.dumps(limit.body(parsed.get("id"), first, last)).encode()
                status = limit.message.http_status
                return (status, {"Content-Type": "application/json"}, content), True
        return counted, False

    def _forward(
        self,
        handler: _Handler,
        body: bytes,
        fault: str | None,
        answer: tuple[int, dict[str, str], bytes] | None,
    ) -> None:
        """Pass the request on (unless its ``answer`` is known already) and the answer back,
        cut (``drop``) or garbled (``malformed``) when that is the fault."""
        if answer is None:
            headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP}
            request = self._client.build_request(
                handler.command, self.upstream + handler.path, headers=headers, content=body
            )
            try:
                upstream = self._client.send(request, stream=True)
            except httpx.HTTPError:
                handler.reply(502, b"Bad Gateway", "text/plain")
                return
            try:
                kept = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP}
                if upstream.headers.get("content-type", "").startswith("text/event-stream"):
                    handler.relay(upstream.status_code, kept, upstream.iter_raw())
                    return
                answer = (upstream.status_code, kept, upstream.read())
            except httpx.HTTPError:
                handler.reply(502, b"Bad Gateway", "text/plain")
                return
            finally:
                upstream.close()
        status, kept, content = answer
        if fault == "drop":
            handler.cut(status, kept, content)
            return
        if fault == "malformed":
            kept = {k: v for k, v in kept.items() if k.lower() != "content-type"}
            handler.reply(200, content[: len(content) // 2], "application/json", kept)
            return
        handler.reply(status, content, None, kept)


class _Handler(BaseHTTPRequestHandler):
    """Hands every request to the proxy; writes answers whole, cut, or streamed."""

    protocol_version = "HTTP/1.1"
    server: Any
    #: The request's fault, and what records it as its answer starts (set by the proxy).
    fault: str | None = None
    on_answer: Callable[[int], None] | None = None

    def answered(self, status: int) -> None:
        """Record the request once, with the status its answer starts with (0: none, or cut)."""
        record, self.on_answer = self.on_answer, None
        if record is not None:
            record(status)

    def do_GET(self) -> None:
        self.server.proxy.handle(self)

    do_POST = do_PUT = do_DELETE = do_PATCH = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the proxy records requests itself."""

    def _head(self, status: int, headers: dict[str, str]) -> None:
        self.send_response_only(status)
        headers = dict(headers)
        headers.setdefault("Date", formatdate(time.time(), usegmt=True))
        for key, value in headers.items():
            self.send_header(key, value)

    def reply(
        self,
        status: int,
        content: bytes,
        content_type: str | None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Send a whole answer."""
        head = dict(headers or {})
        if content_type is not None:
            head["Content-Type"] = content_type
        head["Content-Length"] = str(len(content))
        self.answered(status)
        self._head(status, head)
        self.end_headers()
        self.wfile.write(content)

    def cut(self, status: int, headers: dict[str, str], content: bytes) -> None:
        """Announce the whole answer, send half of it, and close the connection."""
        self.answered(0)
        self._head(status, {**headers, "Content-Length": str(len(content))})
        self.end_headers()
        self.wfile.write(content[: len(content) // 2])
        self.wfile.flush()
        self.close_connection = True

    def relay(self, status: int, headers: dict[str, str], chunks: Iterator[bytes]) -> None:
        """Pass an event stream on as it comes (chunked)."""
        self.answered(status)
        self._head(status, {**headers, "Transfer-Encoding": "chunked"})
        self.end_headers()
        try:
            for chunk in chunks:
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (OSError, httpx.HTTPError):
            self.close_connection = True
