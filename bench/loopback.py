"""The embedded service in its own process on 127.0.0.1, for benchmarks that go over loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx

SERVER = (
    "import sys, uvicorn\n"
    "from toolkit.scenario import load_scenario\n"
    "from toolkit.server import create_app\n"
    "app = create_app(load_scenario('default'))\n"
    "uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')\n"
)


def start_loopback() -> tuple[subprocess.Popen[bytes], str]:
    """Start the default scenario's service (uvicorn) on a free port; return it and its URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    env = {k: v for k, v in os.environ.items() if k != "TOOLKIT_API_KEY"}
    process = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health", timeout=0.5).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the loopback server did not start within 30 s")
