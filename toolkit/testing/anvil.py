"""A real EVM node for tests and benchmarks: anvil (Foundry) on a free loopback port.

The binary is found, in order, at ``$TOOLKIT_ANVIL``, on ``PATH``, or where ``make node``
installs it from the npm registry (``tests/node/node_modules/.bin/anvil`` under the working
directory). Nothing is downloaded here: with no binary, :func:`find_anvil` returns ``None`` and
:func:`start_anvil` raises :class:`AnvilUnavailable` naming those three places, so a test can
skip with that reason.

>>> from toolkit.testing.anvil import AnvilUnavailable
>>> issubclass(AnvilUnavailable, RuntimeError)
True
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from toolkit.errors import ChainError

__all__ = ["Anvil", "AnvilUnavailable", "anvil", "find_anvil", "start_anvil"]

#: Where ``make node`` puts the binary, relative to the repository root.
NPM_BIN = Path("tests/node/node_modules/.bin/anvil")


class AnvilUnavailable(ChainError, RuntimeError):
    """No anvil binary was found, or it did not answer JSON-RPC in time."""


@dataclass
class Anvil:
    """A running anvil: its JSON-RPC URL, chain id and process (``stop`` ends it)."""

    url: str
    chain_id: int
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        """Terminate the node and wait for it (killed after 5 s)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()


def find_anvil() -> Path | None:
    """The anvil binary to use, or ``None`` when there is none (see the module docstring)."""
    configured = os.environ.get("TOOLKIT_ANVIL")
    if configured:
        return Path(configured) if Path(configured).exists() else None
    on_path = shutil.which("anvil")
    if on_path:
        return Path(on_path)
    for root in (Path.cwd(), *Path.cwd().parents):
        candidate = root / NPM_BIN
        if candidate.exists():
            return candidate
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_anvil(
    *,
    chain_id: int = 31337,
    args: Sequence[str] = (),
    timeout_s: float = 30.0,
) -> Anvil:
    """Start anvil on a free 127.0.0.1 port and wait until it answers ``eth_chainId``.

    Parameters
    ----------
    chain_id:
        The chain id the node reports.
    args:
        Further anvil options (for example ``("--block-base-fee-per-gas", "0")``).
    timeout_s:
        How long to wait for the first answer before giving up.
    """
    binary = find_anvil()
    if binary is None:
        raise AnvilUnavailable(
            "anvil not found: set TOOLKIT_ANVIL, put anvil on PATH, or run `make node` "
            f"(installs {NPM_BIN})"
        )
    port = _free_port()
    command = [str(binary), "--host", "127.0.0.1", "--port", str(port)]
    command += ["--chain-id", str(chain_id), "--silent", *args]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    node = Anvil(url=url, chain_id=chain_id, process=process)
    deadline = time.monotonic() + timeout_s
    body = {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []}
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise AnvilUnavailable(f"anvil exited with {process.returncode}: {err.strip()[:500]}")
        try:
            answer = httpx.post(url, json=body, timeout=0.5).json()
            if int(answer["result"], 16) == chain_id:
                return node
        except (httpx.TransportError, ValueError, KeyError):
            time.sleep(0.05)
    node.stop()
    raise AnvilUnavailable(f"anvil did not answer on {url} within {timeout_s} s")


@contextmanager
def anvil(*, chain_id: int = 31337, args: Sequence[str] = ()) -> Iterator[Anvil]:
    """:func:`start_anvil` as a context manager: the node stops when the block ends."""
    node = start_anvil(chain_id=chain_id, args=args)
    try:
        yield node
    finally:
        node.stop()
