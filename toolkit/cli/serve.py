"""``toolkit serve``: run the embedded service with uvicorn on a loopback address, optionally with
other users' activity on it (``--traffic``: :class:`toolkit.simulate.Traffic` over HTTP).

It prints the ``export TOOLKIT_...=`` lines that point the toolkit at the instance (base URL,
swap URL and key, one JSON-RPC URL per chain: :func:`target_exports`); a key configured in
``$TOOLKIT_API_KEY`` is never printed, the lines read it from that variable instead."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING

from toolkit.cli.argtypes import integer, real

if TYPE_CHECKING:
    from toolkit.cli.traffic import Flows
    from toolkit.scenario import Scenario
    from toolkit.simulate import Traffic

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
    parser.add_argument(
        "--traffic",
        action="store_true",
        help="replay other users' RFQs (converting ones opened on chain, filled and settled), "
        "swaps and credit actions at the scenario's rates against the service, in real time",
    )
    parser.add_argument(
        "--traffic-hours",
        type=real(above=0),
        default=24.0,
        metavar="HOURS",
        help="hours of activity --traffic replays (default: 24)",
    )
    parser.add_argument(
        "--traffic-seed",
        type=integer(minimum=0),
        default=0,
        metavar="SEED",
        help="seed of the activity --traffic replays (default: 0)",
    )
    parser.add_argument(
        "--traffic-scale",
        type=real(above=0),
        default=1.0,
        metavar="FACTOR",
        help="--traffic's rates (RFQs, swaps, credit draws) times this factor (default: 1)",
    )


def print_chains(scenario: Scenario, base_url: str, shown: int = 3) -> None:
    """The JSON-RPC URL of every simulated chain and the first development accounts with their
    keys, as anvil prints them (public test keys, derived from the scenario's name)."""
    from toolkit.world.evm import dev_accounts

    print("JSON-RPC, one URL per chain (no key needed):")
    for chain in scenario.chains:
        print(
            f"  {chain.name:<10} {base_url}/rpc/{chain.id:<8} block time {chain.block_time_s:g} s"
        )
    accounts = dev_accounts(scenario)
    print(
        f"Development accounts ({len(accounts)}, each funded on every chain; eth_accounts lists "
        "them and they send without signing; public test keys: never fund them elsewhere):"
    )
    for i, account in enumerate(accounts[:shown]):
        print(f"  ({i}) {account.address}  key {account.key.reveal()}")


def target_exports(scenario: Scenario, base_url: str, *, configured_key: bool) -> list[str]:
    """The shell lines that point the toolkit at the instance at ``base_url``: the target's
    variables (``toolkit target`` shows them back). The scenario's simulation key is public and
    printed; a key configured in ``$TOOLKIT_API_KEY`` (``configured_key``) is not: the lines
    take the first of its comma-separated keys from that variable in the pasting shell.

    >>> from toolkit.scenario import load_scenario
    >>> lines = target_exports(load_scenario("single-pool", env={}), "http://127.0.0.1:8700",
    ...                        configured_key=True)
    >>> lines[1], lines[-1]
    ('export TOOLKIT_API_KEY="${TOOLKIT_API_KEY%%,*}"', 'export TOOLKIT_RPC_URL_8453=http://127.0.0.1:8700/rpc/8453')
    """
    from toolkit.client.target import ENV, rpc_variable
    from toolkit.scenario import API_KEY_ENV

    # A configured key stays where it is set: the line takes its first key in the shell.
    first = f'"${{{API_KEY_ENV}%%,*}}"'
    key = first if configured_key else scenario.auth.api_keys[0].reveal()
    lines = [
        f"export {ENV['base_url']}={base_url}",
        f"export {ENV['api_key']}={key}",
        f"export {ENV['swap_url']}={base_url}/swap",
        f"export {ENV['swap_api_key']}={key}",
    ]
    lines += [f"export {rpc_variable(c.id)}={base_url}/rpc/{c.id}" for c in scenario.chains]
    return lines


def _start_traffic(
    scenario: Scenario, flows: Flows, base_url: str, args: argparse.Namespace
) -> Traffic:
    """Start replaying ``flows`` against the service at ``base_url``; print one line on what
    they hold."""
    from toolkit.cli.traffic import describe_flows
    from toolkit.simulate import Traffic

    traffic = Traffic(
        base_url=base_url,
        flow=flows.intents,
        swaps=flows.swaps,
        credit=flows.credit,
        scenario=scenario,
    )
    print(
        f"Background traffic on: {args.traffic_hours:g} hours of the scenario's rates "
        f"x{args.traffic_scale:g} (seed {args.traffic_seed}) in real time from now: "
        f"{describe_flows(flows)}"
    )
    return traffic.start()


def _local_url(host: str, port: int) -> str:
    """The URL this process reaches the service at (a wildcard address is not one to dial)."""
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _print_banner(scenario: Scenario, host: str, port: int) -> None:
    """Where the service listens, how to authenticate, its swap API and chains, and the
    exports that point the toolkit at it."""
    from toolkit.scenario import API_KEY_ENV

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
    configured = bool(os.environ.get(API_KEY_ENV, "").strip())
    print(
        "Point the toolkit at it (paste into a shell; then `toolkit target` shows it"
        + (
            f"; the key is read from ${API_KEY_ENV}, not printed: in another shell set it to "
            "one of the keys it holds here"
            if configured
            else ""
        )
        + "):"
    )
    for line in target_exports(scenario, _local_url(host, port), configured_key=configured):
        print(f"  {line}")


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C (or SIGTERM); returns the exit status."""
    from toolkit.cli.traffic import background_flows, traffic_summary
    from toolkit.scenario import ScenarioError, load_scenario
    from toolkit.server.app import create_app
    from toolkit.server.loopback import bind_socket, serve_socket

    try:
        scenario = load_scenario(args.scenario, env=os.environ)
        app = create_app(scenario, heartbeat=args.heartbeat)
        flows = None
        if args.traffic:
            flows = background_flows(
                scenario,
                span_h=args.traffic_hours,
                seed=args.traffic_seed,
                scale=args.traffic_scale,
            )
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
    _print_banner(scenario, host, port)
    # Requests wait in the socket's backlog until uvicorn accepts them.
    traffic = None
    if flows is not None:
        traffic = _start_traffic(scenario, flows, _local_url(host, port), args)
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
        if traffic is not None:
            traffic.stop()
        sock.close()
    if traffic is not None:
        print(f"Background traffic: {traffic_summary(traffic.counts)}")
        if traffic.counts["late"]:
            print(f"  ({traffic.counts['late']:,} traffic steps ran more than a second late)")
    print("Stopped.", flush=True)
    return 0
