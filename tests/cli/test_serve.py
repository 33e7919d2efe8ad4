"""``toolkit serve``: the command's output, its errors, and a real run stopped with Ctrl-C."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from toolkit.cli import serve as command
from toolkit.scenario import load_scenario
from toolkit.server.loopback import bind_socket
from toolkit.world.chain import dev_accounts

SERVE = [sys.executable, "-m", "toolkit", "serve"]
Started = tuple[subprocess.Popen[str], str, list[str]]
Serve = Callable[..., Started]


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser.parse_args(argv)


def test_defaults() -> None:
    args = parse()
    assert (args.scenario, args.host, args.port) == ("default", "127.0.0.1", 8700)


def test_unknown_scenario_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    assert command.run(parse("--scenario", "no-such-scenario")) == 2
    assert "no scenario named 'no-such-scenario'" in capsys.readouterr().err


def test_port_out_of_range_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        parse("--port", "70000")
    assert info.value.code == 2
    assert "--port: must be an integer >= 0 and <= 65535, got '70000'" in capsys.readouterr().err


@pytest.fixture
def serve() -> Iterator[Serve]:
    started: list[subprocess.Popen[str]] = []

    def start(env: dict[str, str], *extra: str) -> Started:
        process = subprocess.Popen(
            [*SERVE, "--port", "0", "--log-level", "warning", *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        started.append(process)
        assert process.stdout is not None
        lines: list[str] = []
        while not lines or not lines[-1].startswith("Press Ctrl-C"):
            line = process.stdout.readline()
            assert line, f"serve exited early: {lines}"
            lines.append(line.strip())
        url = lines[0].rsplit(" at ", 1)[1]
        return process, url, lines

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=10)  # also closes the pipe


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("TOOLKIT_API_KEY", "TOOLKIT_SIGNER_KEY")
    }
    env.update(extra)
    return env


@pytest.mark.loopback
def test_serve_prints_the_simulation_key_and_stops_on_ctrl_c(serve: Serve) -> None:
    process, url, lines = serve(_env())
    assert url.startswith("http://127.0.0.1:")
    assert "X-Auth-Token: demo-key (the scenario's simulation key)" in lines[1]
    assert httpx.get(url + "/health", timeout=5).json() == {"status": "ok"}
    # every chain's JSON-RPC URL answers, and the first development accounts are shown
    rpc_lines = [line for line in lines if "/rpc/" in line]
    assert len(rpc_lines) == len(load_scenario("default", env={}).chains)
    base_rpc = next(line for line in rpc_lines if "/rpc/8453" in line).split()[1]
    answer = httpx.post(base_rpc, json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId"})
    assert answer.json()["result"] == hex(8453)
    first = dev_accounts(load_scenario("default", env={}))[0]
    assert f"(0) {first.address}  key {first.key.reveal()}" in lines
    events = httpx.Client(timeout=5).send(
        httpx.Request(
            "GET",
            url + "/liquidity/protocol/partner-escrow/events",
            headers={"X-Auth-Token": "demo-key"},
        ),
        stream=True,
    )
    assert events.status_code == 200
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=15)
    assert process.returncode == 0
    assert "Stopped." in out
    assert "Traceback" not in out
    # An open event stream did not hold the shutdown up.
    assert time.monotonic() - started < 10
    events.close()


@pytest.mark.loopback
def test_serve_never_prints_a_key_from_the_environment(serve: Serve) -> None:
    secret = "k-env-5f2b9e01"
    process, url, lines = serve(_env(TOOLKIT_API_KEY=secret), "--scenario", "single-pool")
    text = "\n".join(lines)
    assert secret not in text
    assert "taken from $TOOLKIT_API_KEY" in text
    assert "scenario 'single-pool'" in lines[0]
    answer = httpx.get(
        url + "/liquidity/chain/eip155:8453/tokens", headers={"X-Auth-Token": secret}, timeout=5
    )
    assert answer.status_code == 200
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=15)
    assert secret not in out
    assert process.returncode == 0


@pytest.mark.loopback
def test_serve_reports_a_busy_port(capsys: pytest.CaptureFixture[str]) -> None:
    busy = bind_socket()
    try:
        port = busy.getsockname()[1]
        assert command.run(parse("--port", str(port))) == 1
    finally:
        busy.close()
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err
