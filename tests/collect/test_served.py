"""The collectors against a service they reach over the network, configured only by the
documented variables: the embedded service served on loopback (always), and the real service
when its variables are set (skipped otherwise). Every request reaches that server, nothing
starts in-process, and no run is recorded as embedded."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolkit.cli import collect as command
from toolkit.client import EmbeddedService, chain_web3
from toolkit.client.credit import CreditClient
from toolkit.client.sync import ServiceClient
from toolkit.collect.accounts import discover_accounts
from toolkit.scenario import load_scenario
from toolkit.server import create_app, serve_in_thread
from toolkit.store import Store

#: The real service's variables, read before the tests clean the environment.
REAL = {k: v for k, v in os.environ.items() if k.startswith("TOOLKIT_")}
REAL_SET = bool(REAL.get("TOOLKIT_BASE_URL")) and bool(REAL.get("TOOLKIT_SWAP_URL"))


class _Count:
    """ASGI middleware: the path of every HTTP request the served app receives."""

    def __init__(self, app: Any, seen: list[str]) -> None:
        self.app = app
        self.seen = seen

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append(scope["path"])
        await self.app(scope, receive, send)


@pytest.fixture(params=["served", "real"])
def target(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, list[str]]]:
    """(kind, the paths the server saw) with only the documented variables set."""
    for name in list(os.environ):
        if name.startswith("TOOLKIT_") and name != "TOOLKIT_DATA_DIR":
            monkeypatch.delenv(name)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("an embedded service was started in-process")

    monkeypatch.setattr(EmbeddedService, "__init__", refuse)
    if request.param == "real":
        if not REAL_SET:
            pytest.skip(
                "set TOOLKIT_BASE_URL, TOOLKIT_SWAP_URL (and keys, RPC URLs) to run "
                "the collectors against the real service"
            )
        for name, value in REAL.items():
            monkeypatch.setenv(name, value)
        yield "real", []
        return
    seen: list[str] = []
    app = create_app(load_scenario("default"))
    app.add_middleware(_Count, seen=seen)
    with serve_in_thread(app) as url:
        for name, value in {
            "TOOLKIT_BASE_URL": url,
            "TOOLKIT_API_KEY": "demo-key",
            "TOOLKIT_SWAP_URL": f"{url}/swap",
            "TOOLKIT_SWAP_API_KEY": "demo-key",
            "TOOLKIT_RPC_URL_1": f"{url}/rpc/1",
            "TOOLKIT_RPC_URL_8453": f"{url}/rpc/8453",
        }.items():
            monkeypatch.setenv(name, value)
        yield "served", seen


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="toolkit collect")
    command.add_arguments(parser)
    return command.run(parser.parse_args(list(argv)))


@pytest.mark.loopback
def test_every_collector_reaches_the_configured_service_only(
    target: tuple[str, list[str]], tmp_path: Path
) -> None:
    kind, seen = target
    db = str(tmp_path / "t.duckdb")
    options = ("--db", db, "--no-progress")
    assert _run("snapshot", *options) == 0
    assert _run("rfq", "--rounds", "1", "--capacity-retries", "0", *options) == 0
    assert _run("swap", *options) == 0
    assert _run("credit", "--accounts", "0x" + "11" * 20, *options) == 0
    assert _run("chain", "--chain", "8453", "--to-block", "0", *options) == 0
    with Store(db, read_only=True) as store:
        runs = store.runs()
        assert runs["status"].to_list() == ["completed"] * 5
        assert set(runs["target_kind"].to_list()) == {kind}  # none recorded as embedded
        assert not runs["target_url"].str.contains("embedded-").any()
        base = os.environ["TOOLKIT_BASE_URL"].split("//")[1].split("/")[0]
        assert runs["target_url"].str.contains(base, literal=True).all() or kind == "real"
        # The chains' RPC nodes are configured, so every answered route has its gas price
        # (read from the node, not the simulator): its cost in USD can be worked out.
        answered = store.query("SELECT gas_price_wei FROM swap_routes WHERE status = 200")
        assert answered.height and answered["gas_price_wei"].null_count() == 0
    if kind == "served":
        surfaces = {path.split("/")[1] for path in seen}
        assert {"liquidity", "swap", "credit", "rpc"} <= surfaces


@pytest.mark.loopback
def test_discovery_finds_the_whole_seeded_book_of_a_served_instance(
    target: tuple[str, list[str]],
) -> None:
    kind, _ = target
    if kind != "served":
        pytest.skip("the seeded book is the embedded service's")
    with ServiceClient() as client:
        protocol = CreditClient(client).protocol()
    base = protocol.chains["eip155:8453"]
    hubs = [hub.credit_hub_address for hub in base.credit_hubs.values()]
    escrows = sorted({c.escrow_address for c in base.collateral.values()})
    w3 = chain_web3(8453)
    found = discover_accounts(w3, hubs, escrows, chunk=1)
    credit = load_scenario("default").credit
    assert credit is not None and len(found.accounts) == credit.book_accounts == 1200
    with pytest.raises(ValueError, match=r"to_block: \d+ is beyond the chain head \(\d+\)"):
        discover_accounts(w3, hubs, escrows, to_block=10**9)
    w3.provider.close()  # type: ignore[attr-defined]
