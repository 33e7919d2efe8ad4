"""Fixtures for the embedded service tests: a fake clock, apps, and an in-process client.

The client is ``httpx.AsyncClient`` over ``httpx.ASGITransport`` (no socket), driven from
synchronous tests by one private event loop per test.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from web3 import Web3

from toolkit.scenario import Scenario, load_scenario
from toolkit.server import create_app

KEY = "demo-key"
AUTH = {"X-Auth-Token": KEY}
T0 = 1_760_000_000.0
USER = "0x1111111111111111111111111111111111111111"
USDC = {
    chain: Web3.to_checksum_address(address)
    for chain, address in {
        1: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
        10: "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85",
        8453: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        42161: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
    }.items()
}
WETH_BASE = "0x4200000000000000000000000000000000000006"


MakeClient = Callable[[FastAPI], "Client"]


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: float = T0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def sleep(self, seconds: float) -> None:  # a toolkit.clock.Clock: sleeping moves it
        self.advance(seconds)


class Client:
    """Synchronous facade over ``httpx.AsyncClient(transport=httpx.ASGITransport(app))``."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self._loop = asyncio.new_event_loop()
        self._client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://embedded"
        )

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return self._loop.run_until_complete(self._client.request(method, url, **kwargs))

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", url, **kwargs)

    def call_later(self, delay: float, callback: Callable[[], object]) -> None:
        """Run ``callback`` on the client's loop ``delay`` seconds from now (while a call runs)."""
        self._loop.call_later(delay, callback)

    def close(self) -> None:
        self._loop.run_until_complete(self._client.aclose())
        # sse-starlette leaves a shutdown watcher task on the loop; cancel it before closing.
        pending = asyncio.all_tasks(self._loop)
        for task in pending:
            task.cancel()
        if pending:
            self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self._loop.close()


@pytest.fixture
def scenario() -> Scenario:
    return load_scenario("default")


@pytest.fixture
def single_pool() -> Scenario:
    return load_scenario("single-pool")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def app(scenario: Scenario, clock: FakeClock) -> FastAPI:
    return create_app(scenario, clock=clock, heartbeat=0.2, tick=0.05)


@pytest.fixture
def client(app: FastAPI) -> Iterator[Client]:
    c = Client(app)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def make_client() -> Iterator[MakeClient]:
    """Build clients for other apps inside a test; all are closed at the end."""
    made: list[Client] = []

    def make(app: FastAPI) -> Client:
        c = Client(app)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def rfq_params(
    src: int = 1, dst: int = 8453, amount: int = 1_000_000_000, **extra: str
) -> dict[str, str]:
    """Query of a valid USDC RFQ on the default scenario."""
    params = {
        "srcChain": f"eip155:{src}",
        "dstChain": f"eip155:{dst}",
        "amount": str(amount),
        "token": USDC[dst],
        "user": USER,
    }
    params.update(extra)
    return params


def pools(client: Client) -> dict[str, dict[str, int]]:
    """Every pool's figures by pool id, read over JSON-RPC from the pool contracts (``eth_call``
    of ``balance``, ``reserved``, ``outstanding`` and ``available`` on the pool's chain)."""
    from toolkit.codecs.functions import encode_call

    scenario: Scenario = client.app.state.service.scenario
    figures: dict[str, dict[str, int]] = {}
    for entry in scenario.pools:
        token = scenario.token(entry.chain, entry.token).address
        figures[entry.id] = {}
        for name in ("balance", "reserved", "outstanding", "available"):
            call = {"to": entry.address, "data": encode_call(f"pool.{name}", token)}
            answer = rpc(client, entry.chain, "eth_call", call, "latest")
            figures[entry.id][name] = int(answer["result"], 16)
    return figures


def pool(client: Client, pool_id: str) -> dict[str, int]:
    """The figures of one pool, as integers (see :func:`pools`)."""
    found = pools(client)
    if pool_id not in found:
        raise AssertionError(f"no pool {pool_id}")
    return found[pool_id]


def rpc(client: Client, chain_id: int, method: str, *params: Any) -> dict[str, Any]:
    """One JSON-RPC call on ``/rpc/{chainId}``: the whole answer (``result`` or ``error``)."""
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
    answer: dict[str, Any] = client.post(f"/rpc/{chain_id}", json=request).json()
    return answer


def open_on_chain(client: Client, tx: dict[str, Any], scenario: Scenario) -> dict[str, Any]:
    """Send a ``transactionRequest`` as a wallet would, from development account 0: approve the
    escrow for its input token and mine, then ``eth_sendTransaction`` the request and mine.
    The JSON-RPC answer of the send (a revert leaves it an error and nothing changed)."""
    from toolkit.codecs.escrow import decode_open, token_address
    from toolkit.codecs.functions import encode_call
    from toolkit.world.evm.accounts import dev_accounts

    sender = dev_accounts(scenario)[0].address
    chain = tx["chainId"]
    try:
        inputs = decode_open(tx["data"]).inputs
    except ValueError:  # not open() calldata: nothing to approve
        inputs = ()
    for token, _ in inputs:
        approve = encode_call("erc20.approve", tx["to"], 2**256 - 1)
        call = {"from": sender, "to": token_address(token), "data": approve}
        assert "result" in rpc(client, chain, "eth_sendTransaction", call)
    rpc(client, chain, "evm_mine")
    send = {"from": sender, "to": tx["to"], "data": tx["data"], "value": tx["value"]}
    answer = rpc(client, chain, "eth_sendTransaction", send)
    rpc(client, chain, "evm_mine")
    return answer


class Served:
    """``toolkit serve`` in a subprocess on a free loopback port: a crash fails the test that
    caused it (the process is gone) instead of killing pytest."""

    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url

    def alive(self) -> bool:
        """True when the process runs and answers ``/health``."""
        if self.process.poll() is not None:
            return False
        return httpx.get(self.url + "/health", timeout=5).json() == {"status": "ok"}

    def rss(self) -> tuple[int, int]:
        """The server's resident set and its peak so far, in bytes."""
        fields = {}
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                fields[key] = value
        return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024

    def rpc(self, chain: int, method: str, *params: Any, timeout: float = 30) -> dict[str, Any]:
        request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
        response = httpx.post(f"{self.url}/rpc/{chain}", json=request, timeout=timeout)
        assert response.status_code == 200, response.text
        answer: dict[str, Any] = response.json()
        return answer


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    process = subprocess.Popen(
        [sys.executable, "-m", "toolkit", "serve", "--port", "0", "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines: list[str] = []
        while not lines or not lines[-1].startswith("Press Ctrl-C"):
            line = process.stdout.readline()
            assert line, f"serve exited early: {lines}"
            lines.append(line.strip())
        yield Served(process, lines[0].rsplit(" at ", 1)[1])
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate(timeout=10)
        else:
            process.communicate(timeout=10)
