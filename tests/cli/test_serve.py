"""``toolkit serve``: the command's output, its errors, and a real run stopped with Ctrl-C."""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from toolkit.cli import serve as command
from toolkit.codecs.events import EVENTS
from toolkit.scenario import load_scenario
from toolkit.server.loopback import bind_socket
from toolkit.world.evm import dev_accounts

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
    rpc_lines = [line for line in lines if "/rpc/" in line and not line.startswith("export")]
    assert len(rpc_lines) == len(load_scenario("default").chains)
    base_rpc = next(line for line in rpc_lines if "/rpc/8453" in line).split()[1]
    answer = httpx.post(base_rpc, json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId"})
    assert answer.json()["result"] == hex(8453)
    first = dev_accounts(load_scenario("default"))[0]
    assert f"(0) {first.address}  key {first.key.reveal()}" in lines
    # No background traffic unless asked for.
    assert not any(line.startswith("Background traffic") for line in lines)
    assert _swap_logs(url) == 0
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
    assert "Background traffic" not in out
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


def _pasted(lines: list[str], env: dict[str, str]) -> dict[str, str]:
    """The TOOLKIT_ variables after pasting the printed ``export`` lines into ``sh``."""
    exports = [line for line in lines if line.startswith("export ")]
    shell = subprocess.run(
        ["sh", "-c", "\n".join([*exports, "env"])],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    pairs = (line.partition("=") for line in shell.stdout.splitlines())
    return {k: v for k, _, v in pairs if k.startswith("TOOLKIT_")}


@pytest.mark.loopback
@pytest.mark.parametrize("configured", ["", "k-env-1c0d,k-env-2e9f"])
def test_the_printed_exports_point_the_toolkit_at_the_instance(
    serve: Serve, configured: str
) -> None:
    env = _env(TOOLKIT_API_KEY=configured) if configured else _env()
    _, url, lines = serve(env)
    if configured:
        assert all(key not in "\n".join(lines) for key in configured.split(","))
    pasted = _pasted(lines, env)
    key = configured.split(",")[0] if configured else "demo-key"
    assert pasted["TOOLKIT_BASE_URL"] == url
    assert pasted["TOOLKIT_API_KEY"] == pasted["TOOLKIT_SWAP_API_KEY"] == key
    health = httpx.get(
        pasted["TOOLKIT_BASE_URL"] + "/liquidity/chain/eip155:8453/tokens",
        headers={"X-Auth-Token": pasted["TOOLKIT_API_KEY"]},
        timeout=5,
    )
    assert health.status_code == 200
    route = httpx.get(
        pasted["TOOLKIT_SWAP_URL"] + "/base/v1/route",
        params={"amountIn": "1", "tokenIn": "0x" + "00" * 20, "tokenOut": "0x" + "00" * 20},
        auth=("toolkit", pasted["TOOLKIT_SWAP_API_KEY"]),
        timeout=5,
    )
    assert route.status_code != 401  # the key is accepted (the route itself may be refused)
    chains = load_scenario("default", env={}).chains
    assert sorted(k for k in pasted if k.startswith("TOOLKIT_RPC_URL_")) == sorted(
        f"TOOLKIT_RPC_URL_{c.id}" for c in chains
    )
    for chain in chains:
        answer = httpx.post(
            pasted[f"TOOLKIT_RPC_URL_{chain.id}"],
            json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId"},
            timeout=5,
        )
        assert answer.json()["result"] == hex(chain.id)


@pytest.mark.loopback
def test_serve_reports_a_busy_port(capsys: pytest.CaptureFixture[str]) -> None:
    busy = bind_socket()
    try:
        port = busy.getsockname()[1]
        assert command.run(parse("--port", str(port))) == 1
    finally:
        busy.close()
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_traffic_is_off_by_default() -> None:
    args = parse()
    assert args.traffic is False
    assert (args.traffic_hours, args.traffic_seed, args.traffic_scale) == (24.0, 0, 1.0)
    assert parse("--traffic", "--traffic-scale", "0.5").traffic_scale == 0.5


@pytest.mark.parametrize(
    ("option", "value", "rule"),
    [
        ("--traffic-hours", "0", "must be a finite number > 0, got '0'"),
        ("--traffic-hours", "a day", "must be a finite number > 0, got 'a day'"),
        ("--traffic-seed", "-1", "must be an integer >= 0, got '-1'"),
        ("--traffic-scale", "nan", "must be a finite number > 0, got 'nan'"),
    ],
)
def test_bad_traffic_options_are_reported(
    capsys: pytest.CaptureFixture[str], option: str, value: str, rule: str
) -> None:
    with pytest.raises(SystemExit) as info:
        parse("--traffic", option, value)
    assert info.value.code == 2
    assert f"argument {option}: {rule}" in capsys.readouterr().err


def _swap_logs(url: str) -> int:
    swap = [EVENTS["v3pool.Swap"].topic0, EVENTS["v2pair.Swap"].topic0]
    found = 0
    for chain in (1, 8453):
        answer = httpx.post(
            f"{url}/rpc/{chain}",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "eth_getLogs",
                "params": [{"fromBlock": "0x0", "topics": [swap]}],
            },
            timeout=5,
        )
        found += len(answer.json()["result"])
    return found


@pytest.mark.loopback
def test_serve_with_traffic_replays_other_users_until_sigterm(serve: Serve) -> None:
    secret = "k-env-7c41d2aa"
    process, url, lines = serve(
        _env(TOOLKIT_API_KEY=secret), "--traffic", "--traffic-hours", "0.1", "--traffic-scale", "50"
    )
    line = next(line for line in lines if line.startswith("Background traffic on:"))
    assert "0.1 hours of the scenario's rates x50 (seed 0)" in line
    assert "RFQs of other users" in line and "swaps on the AMM pools" in line
    assert "credit actions of 4 borrowers" in line
    assert httpx.get(url + "/health", timeout=5).json() == {"status": "ok"}
    # The traffic's swaps reach the chains: Swap events in the pools' logs.
    deadline = time.monotonic() + 15
    while _swap_logs(url) == 0:
        assert time.monotonic() < deadline, "no Swap event from the traffic within 15 s"
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=20)
    assert process.returncode == 0
    assert "Traceback" not in out and secret not in out
    summary = next(line for line in out.splitlines() if line.startswith("Background traffic:"))
    rfqs, quoted = (
        int(word.replace(",", "")) for word in re.findall(r"([\d,]+) (?:RFQs|quoted)", summary)
    )
    assert rfqs > 0 and quoted > 0  # authenticated with the key from the environment
    assert out.rstrip().endswith("Stopped.")
