"""``toolkit collect prices``: the credit hubs' price feeds and pools' mid prices of a served
instance, reached only through the documented variables, into ``prices``; the no-target,
partial-target and all-failed cases with their messages and exit codes."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from toolkit.chain.registry import default_registry
from toolkit.cli import collect as command
from toolkit.client import EmbeddedService
from toolkit.scenario import load_scenario
from toolkit.server import create_app, serve_in_thread
from toolkit.store import Store, price_at, price_table
from toolkit.world.evm.credit import PriceFeed
from toolkit.world.evm.markets import market_for


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="toolkit collect")
    command.add_arguments(parser)
    return command.run(parser.parse_args(["prices", "--no-progress", *argv]))


class _Count:
    """ASGI middleware: the path of every HTTP request the served app receives."""

    def __init__(self, app: Any, seen: list[str]) -> None:
        self.app = app
        self.seen = seen

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append(scope["path"])
        await self.app(scope, receive, send)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("TOOLKIT_") and name != "TOOLKIT_DATA_DIR":
            monkeypatch.delenv(name)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    app = create_app(load_scenario("default", env={}))
    app.add_middleware(_Count, seen=seen)
    with serve_in_thread(app) as url:
        yield url, seen


@pytest.fixture
def configured(
    served: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> tuple[str, list[str]]:
    """The documented variables of a served instance; starting a simulator is an error."""
    url, seen = served

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("an embedded service was started in-process")

    monkeypatch.setattr(EmbeddedService, "__init__", refuse)
    monkeypatch.setenv("TOOLKIT_BASE_URL", url)
    for chain in (1, 8453):
        monkeypatch.setenv(f"TOOLKIT_RPC_URL_{chain}", f"{url}/rpc/{chain}")
    seen.clear()
    return url, seen


def test_the_hubs_feeds_of_every_configured_chain_are_stored_as_oracle_prices(
    configured: tuple[str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, seen = configured
    db = tmp_path / "toolkit.duckdb"
    assert run_cli("--db", str(db)) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("(prices) completed") and out[1] == "rows written: 7 (prices 7)"
    assert seen and set(seen) <= {"/rpc/1", "/rpc/8453"}  # the configured nodes, and only them
    with Store(db, read_only=True) as store:
        (run,) = store.runs().iter_rows(named=True)
        assert (run["kind"], run["target_kind"], run["rows_written"]) == ("prices", "served", 7)
        table = price_table(store)
        assert set(table["source"]) == {"oracle"}  # nothing simulated was stored
        feeds = [*default_registry().price_feeds(1), *default_registry().price_feeds(8453)]
        assert sorted(zip(table["chain"], table["token"], strict=True)) == sorted(
            (f.chain_id, f.token.lower()) for f in feeds
        )
        assert price_at(table, "EURe", 8453, None) == pytest.approx(1.08)  # the scenario's euro
        assert price_at(table, "USDC", 1, None) == 1.0
        # Each the price its hub values the asset at, at the time the feed answered.
        scenario = load_scenario("default", env={})
        deployed = {
            (chain, f.token): f
            for chain in (1, 8453)
            for f in PriceFeed.build(scenario, chain)
            if isinstance(f, PriceFeed)
        }
        rows = store.query("SELECT chain, token, observed_at, usd FROM prices")
        for chain, token, at, usd in rows.rows():
            assert usd == Decimal(deployed[(chain, token)].answer(int(at.timestamp()))).scaleb(-8)


def test_given_pools_are_priced_at_their_mid_against_a_stablecoin(
    configured: tuple[str, list[str]], tmp_path: Path
) -> None:
    market = market_for(load_scenario("default", env={}), 8453)
    assert market is not None
    pools = ",".join(p.address for p in market.pools)
    db = tmp_path / "toolkit.duckdb"
    assert run_cli("--chain", "8453", "--pools", pools, "--db", str(db)) == 0
    with Store(db, read_only=True) as store:
        table = price_table(store)
        pool = table.filter(table["source"] == "pool")
        # WETH's pools against USDC and USDT sit at the scenario's $3,000 before any swap.
        assert pool["symbol"].to_list() == ["WETH"]
        assert pool["usd"][0] == pytest.approx(3000, rel=1e-3)
        assert set(table["chain"]) == {8453}


def test_a_run_in_which_every_read_failed_is_recorded_failed(
    configured: tuple[str, list[str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, _ = configured
    monkeypatch.setenv("TOOLKIT_RPC_URL_42161", f"{url}/rpc/42161")
    usdc = default_registry().token(42161, "USDC").address  # a token, not a pool
    db = tmp_path / "toolkit.duckdb"
    assert run_cli("--chain", "42161", "--pools", usdc, "--db", str(db)) == 2
    err = capsys.readouterr().err
    assert "run failed: every request to the node at" in err
    assert f"the first: pool {usdc.lower()} on chain 42161: answers neither slot0" in err
    with Store(db, read_only=True) as store:
        assert store.runs()["status"].to_list() == ["failed"]
        assert store.query("SELECT count(*) AS n FROM prices")["n"][0] == 0


@pytest.mark.parametrize(
    ("env", "argv", "message"),
    [
        ({}, (), "TOOLKIT_BASE_URL: no target is configured; set TOOLKIT_BASE_URL"),
        (
            {"TOOLKIT_BASE_URL": "http://127.0.0.1:9"},
            (),
            "TOOLKIT_RPC_URL_<chainId>: not set for any chain",
        ),
        (
            {"TOOLKIT_BASE_URL": "http://127.0.0.1:9"},
            ("--chain", "8453"),
            "TOOLKIT_RPC_URL_8453: not set, while TOOLKIT_BASE_URL points at http://127.0.0.1:9",
        ),
        ({}, ("--embedded", "--pools", "0x" + "ab" * 20), "--pools: give --chain too"),
        (
            {},
            ("--embedded", "--chain", "8453", "--pools", "0xab"),
            "--pools: must be 0x-prefixed 20-byte addresses, got '0xab'",
        ),
        ({}, ("--embedded", "--resume", "r1"), "--resume: a prices run reads once"),
    ],
)
def test_one_line_errors_collect_nothing(
    env: dict[str, str],
    argv: tuple[str, ...],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    db = tmp_path / "toolkit.duckdb"
    assert run_cli(*argv, "--db", str(db)) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolkit collect: ") and message in err
    assert not db.exists()
