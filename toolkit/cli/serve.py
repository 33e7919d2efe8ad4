"""``toolkit serve``: run the embedded service with uvicorn on a loopback address."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING

from toolkit.cli.argtypes import integer, real

if TYPE_CHECKING:
    from toolkit.scenario import Scenario

__all__ = ["add_arguments", "run"]

_DEFAULT_PORT = 8700


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``serve`` options to ``parser``."""
    parser.add_argument(
        "--scenario",
        default="default",
        metavar="NAME|PATH",
        help="a scenario shipped with the toolkit or a path to a TOML file (default: default)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port",
        type=integer(minimum=0, maximum=65535),
        default=_DEFAULT_PORT,
        help=f"port to listen on; 0 picks a free one (default: {_DEFAULT_PORT})",
    )
    parser.add_argument(
        "--heartbeat",
        type=real(above=0),
        default=15.0,
        metavar="SECONDS",
        help="seconds between ': ping' comments on idle event streams (default: 15)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=("critical", "error", "warning", "info", "debug"),
        help="uvicorn log level (default: info)",
    )


def print_chains(scenario: Scenario, base_url: str, shown: int = 3) -> None:
    """The JSON-RPC URL of every simulated chain and the first development accounts with their
    keys, as anvil prints them (public test keys, derived from the scenario's name)."""
    from toolkit.world.chain import dev_accounts

    print("JSON-RPC, one URL per chain (no key needed):")
    for chain in scenario.chains:
        print(f"  {chain.name:<10} {base_url}/rpc/{chain.id:<8} block time {chain.block_time:g} s")
    accounts = dev_accounts(scenario)
    print(
        f"Development accounts ({len(accounts)}, each funded on every chain; eth_accounts lists "
        "them and they send without signing; public test keys: never fund them elsewhere):"
    )
    for i, account in enumerate(accounts[:shown]):
        print(f"  ({i}) {account.address}  key {account.key.reveal()}")


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C (or SIGTERM); returns the exit status."""
    from toolkit.scenario import API_KEY_ENV, ScenarioError, load_scenario
    from toolkit.server.app import create_app
    from toolkit.server.loopback import bind_socket, serve_socket

    try:
        scenario = load_scenario(args.scenario)
        app = create_app(scenario, heartbeat=args.heartbeat)
    except (ScenarioError, ValueError) as exc:
        print(f"toolkit serve: {exc}", file=sys.stderr)
        return 2
    try:
        sock = bind_socket(args.host, args.port)
    except OSError as exc:
        print(
            f"toolkit serve: cannot listen on {args.host}:{args.port}: {exc.strerror}",
            file=sys.stderr,
        )
        return 1
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"Embedded service (scenario {scenario.name!r}) at http://{shown}:{port}")
    if os.environ.get(API_KEY_ENV, "").strip():
        print(f"Authenticate with header X-Auth-Token: the API key is taken from ${API_KEY_ENV}")
    else:
        keys = ", ".join(key.reveal() for key in scenario.auth.api_keys)
        print(f"Authenticate with header X-Auth-Token: {keys} (the scenario's simulation key)")
    print(
        f"Swap API at http://{shown}:{port}/swap (GET /{{network}}/v1/route, network mainnet or"
        " base): HTTP Basic, any username, an API key as password"
    )
    print_chains(scenario, f"http://{shown}:{port}")
    print("Press Ctrl-C to stop.", flush=True)
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal it caught;
    # both then end here as a clean stop instead of a traceback or a kill by SIGTERM.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        serve_socket(app, sock, log_level=args.log_level)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
    print("Stopped.", flush=True)
    return 0
