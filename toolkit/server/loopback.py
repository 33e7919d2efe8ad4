"""Run the embedded service with uvicorn on a loopback port: in a thread, or in the foreground.

``httpx.ASGITransport`` buffers a whole response body, so an endless server-sent-event stream
never comes back through it. Tests and notebooks that need the live event stream run the app
here instead: a real socket on 127.0.0.1, a free port picked by the OS, and a clean stop that
first ends every open stream (uvicorn waits for open responses before it finishes shutting down).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import socket
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

import uvicorn
from fastapi import FastAPI

from toolkit.server.connections import MAX_CONNECTIONS, uvicorn_options

__all__ = ["bind_socket", "serve_in_thread", "serve_socket"]


def bind_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``port=0``: a free port chosen by the OS).

    >>> sock = bind_socket()
    >>> sock.getsockname()[1] > 0
    True
    >>> sock.close()
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must be IPPROTO_TCP (not 0): asyncio sets TCP_NODELAY on accepted connections only
    # then; without it, Nagle plus delayed ACKs add 40 ms to every small response.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(MAX_CONNECTIONS)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


class _Server(uvicorn.Server):
    """A uvicorn server that ends the app's event streams as soon as shutdown starts."""

    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self._app = app

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        _close_streams(self._app)
        super().handle_exit(sig, frame)

    def stop(self) -> None:
        """Ask the server to stop (from any thread)."""
        _close_streams(self._app)
        self.should_exit = True


def _close_streams(app: FastAPI) -> None:
    service = getattr(app.state, "service", None)
    if service is not None:
        service.close_streams()


def _cancel_pending(loop: asyncio.AbstractEventLoop) -> None:
    # sse-starlette leaves a shutdown watcher task behind; end it instead of destroying it.
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def _config(app: FastAPI, **options: Any) -> uvicorn.Config:
    for name, value in uvicorn_options().items():  # idle/slow clients, connection cap
        options.setdefault(name, value)
    options.setdefault("log_level", "warning")
    options.setdefault("lifespan", "on")
    # A few seconds is plenty: streams are ended first, everything else is a short request.
    options.setdefault("timeout_graceful_shutdown", 5)
    return uvicorn.Config(app, **options)


def serve_socket(app: FastAPI, sock: socket.socket, **options: Any) -> None:
    """Serve ``app`` on an already bound socket in the foreground until Ctrl-C or SIGTERM.

    ``options`` go to :class:`uvicorn.Config` (``log_level``, ``access_log``, ...). The process
    is the server's until it stops, so everything allocated before (modules, the app, the
    scenario) is kept out of the garbage collector's reach meanwhile.
    """
    server = _Server(_config(app, **options), app)
    # JSON-RPC runs in worker threads beside the event loop: with the interpreter's default
    # 5 ms switch interval a busy worker keeps the loop (and every quick answer) waiting up to
    # 5 ms per hand-over; 1 ms keeps quick answers quick beside a heavy batch.
    sys.setswitchinterval(0.001)
    # A full collection walks every tracked object: unfrozen, the ~80,000 of the start-up heap
    # add tens of milliseconds to every such pause of a loaded server, i.e. to its worst
    # latencies (bench/bench_server.py reports the pauses).
    gc.collect()
    gc.freeze()
    try:
        server.run(sockets=[sock])
    finally:
        gc.unfreeze()


@contextlib.contextmanager
def serve_in_thread(
    app: FastAPI, host: str = "127.0.0.1", port: int = 0, **options: Any
) -> Iterator[str]:
    """Serve ``app`` from a background thread; yields the base URL, stops cleanly on exit.

    >>> from toolkit.server import create_app
    >>> import httpx
    >>> with serve_in_thread(create_app()) as url:
    ...     httpx.get(url + "/health").json()
    {'status': 'ok'}
    """
    sock = bind_socket(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    server = _Server(_config(app, **options), app)
    loop = asyncio.new_event_loop()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.serve(sockets=[sock]))
        except BaseException as exc:  # reported to the caller's thread below
            failure.append(exc)
        finally:
            _cancel_pending(loop)
            loop.close()

    thread = threading.Thread(target=run, name="toolkit-server", daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("server: stopped during start-up") from (
                    failure[0] if failure else None
                )
            thread.join(0.01)
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        yield f"http://{shown}:{bound_port}"
    finally:
        server.stop()
        thread.join(10)
        sock.close()
        if thread.is_alive():
            raise RuntimeError("server: did not stop within 10 s")
