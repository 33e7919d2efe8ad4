"""The swap-route sweep on the embedded service: every attempt, the legs, the pool snapshots,
resume and idempotence."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolkit.cli import collect as command
from toolkit.client import EmbeddedService, SwapClient, chain_web3
from toolkit.clock import VirtualClock
from toolkit.collect.swap import SwapPoint, SwapSweep, default_points
from toolkit.scenario import load_scenario
from toolkit.server import create_app, serve_in_thread
from toolkit.store import Store, StoreError
from toolkit.world.evm.markets import market_for

STRANGER = "0x" + "77" * 20


@pytest.fixture
def service() -> Iterator[EmbeddedService]:
    with EmbeddedService("default", env={}, clock=VirtualClock()) as made:
        yield made


def _points() -> list[SwapPoint]:
    grid = default_points(["mainnet", "base"], [("USDC", "WETH"), ("ETH", "USDC")], [1e3, 1e6])
    usdc = grid[0].token_in
    return [*grid, SwapPoint("mainnet", usdc, STRANGER, 10**6)]


def _web3s(service: EmbeddedService) -> dict[str, Any]:
    return {"mainnet": chain_web3(1, embedded=service), "base": chain_web3(8453, embedded=service)}


def _pools() -> dict[str, list[str]]:
    """The simulated markets' pool addresses (the simulation's own list, given to the sweep)."""
    scenario = load_scenario("default")
    found = {}
    for name, chain in (("mainnet", 1), ("base", 8453)):
        market = market_for(scenario, chain)
        assert market is not None
        found[name] = [p.address for p in market.pools]
    return found


def test_a_sweep_stores_every_attempt_the_legs_and_the_pools(service: EmbeddedService) -> None:
    store = Store(":memory:")
    client = SwapClient(embedded=service, env={})
    points = _points()
    result = SwapSweep(
        client, store, points=points, web3s=_web3s(service), pools=_pools(), progress=False
    ).run()
    assert result.status == "completed"
    routes = store.query("SELECT * FROM swap_routes ORDER BY attempt_id")
    assert routes.height == len(points) == 9
    ok = routes.filter(routes["status"] == 200)
    assert ok.height == 8 and ok["amount_out"].min() > 0  # type: ignore[operator]
    pairs = zip(ok["min_amount_out"].to_list(), ok["amount_out"].to_list(), strict=True)
    assert all(low == out * 9950 // 10000 for low, out in pairs)
    missing = routes.filter(routes["status"] == 404)
    assert missing["token_out"].to_list() == [STRANGER] and missing["amount_out"][0] is None
    chains = dict(zip(routes["network"].to_list(), routes["chain"].to_list(), strict=True))
    assert chains == {"mainnet": 1, "base": 8453}
    assert ok["gas_price_wei"].min() > 0 and missing["gas_price_wei"][0] is None  # type: ignore[operator]
    names = store.query("SELECT symbol FROM tokens WHERE chain = 1 ORDER BY symbol")
    assert {"ETH", "USDC", "WETH"} <= set(names["symbol"].to_list())  # not the stranger
    legs = store.query("SELECT * FROM swap_route_legs")
    assert set(legs["attempt_id"].to_list()) == set(ok["attempt_id"].to_list())
    assert {"v3_swap_exact_in", "wrap_eth"} <= set(legs["command"].to_list())
    pools = store.query("SELECT * FROM amm_pool_snapshots ORDER BY chain, pool")
    assert pools.height == 16 and set(pools["kind"].to_list()) == {"v2", "v3"}
    v3 = pools.filter(pools["kind"] == "v3")
    assert all(int(text) > 0 for text in v3["sqrt_price_x96"].to_list())
    v2 = pools.filter(pools["kind"] == "v2")
    assert all(reserve > 0 for reserve in v2["reserve0"].to_list())


class _Flaky(SwapClient):
    """Interrupted (Ctrl-C) at the third route."""

    calls = 0

    def route(self, *args: Any, **kwargs: Any) -> Any:
        type(self).calls += 1
        if type(self).calls == 3:
            raise KeyboardInterrupt
        return super().route(*args, **kwargs)


def test_an_interrupted_sweep_resumes_without_repeating_itself(service: EmbeddedService) -> None:
    store = Store(":memory:")
    points = _points()
    flaky = _Flaky(embedded=service, env={})
    first = SwapSweep(
        flaky, store, points=points, web3s=_web3s(service), pools=_pools(), progress=False
    ).run()
    assert first.status == "interrupted"
    assert store.query("SELECT count(*) AS n FROM swap_routes")["n"][0] == 2
    client = SwapClient(embedded=service, env={})
    sweep = SwapSweep(
        client, store, points=[points[0]], web3s=_web3s(service), pools=_pools(), progress=False
    )
    resumed = sweep.run(resume=first.run_id)  # the run's own grid, not the one given
    assert resumed.status == "completed"
    assert store.query("SELECT count(*) AS n FROM swap_routes")["n"][0] == len(points)
    assert resumed.by_table.get("amm_pool_snapshots", 0) == 0  # taken once per run
    with pytest.raises(StoreError, match="completed"):
        sweep.run(resume=first.run_id)


def test_bad_arguments(service: EmbeddedService) -> None:
    client = SwapClient(embedded=service, env={})
    with pytest.raises(ValueError, match="slippage_bps"):
        SwapSweep(client, Store(":memory:"), slippage_bps=-1)
    with pytest.raises(ValueError, match="points"):
        SwapSweep(client, Store(":memory:"), points=[])
    with pytest.raises(ValueError, match="networks"):
        default_points(["polygon"])


@pytest.mark.loopback
def test_the_command_line_names_rejected_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOOLKIT_SWAP_API_KEY", "not-a-key")
    parser = argparse.ArgumentParser(prog="toolkit collect")
    command.add_arguments(parser)
    args = parser.parse_args(["swap", "--db", str(tmp_path / "s.duckdb"), "--no-progress"])
    with serve_in_thread(create_app(load_scenario("default"))) as url:
        monkeypatch.setenv("TOOLKIT_SWAP_URL", f"{url}/swap")
        assert command.run(args) == 2
    err = capsys.readouterr().err
    assert "rejected the credentials (401)" in err and "not-a-key" not in err
    with Store(tmp_path / "s.duckdb") as store:
        assert store.query("SELECT status FROM collection_runs")["status"].to_list() == ["failed"]
        assert store.query("SELECT status FROM swap_routes")["status"].to_list() == [401]


@pytest.mark.loopback
def test_a_run_where_every_request_failed_ends_failed_naming_the_first_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser(prog="toolkit collect")
    command.add_arguments(parser)
    db = tmp_path / "s.duckdb"
    with serve_in_thread(create_app(load_scenario("default"))) as url:
        # The main interface's URL given as the swap URL: every route request is a 404.
        args = parser.parse_args(["swap", "--swap-url", url, "--db", str(db), "--no-progress"])
        assert command.run(args) == 2
    err = capsys.readouterr().err
    assert f"every request to the swap service at {url} failed; the first: route: HTTP 404" in err
    with Store(db) as store:
        assert store.query("SELECT status FROM collection_runs")["status"].to_list() == ["failed"]
        assert set(store.query("SELECT status FROM swap_routes")["status"].to_list()) == {404}


def test_a_point_on_an_unknown_network_is_refused(service: EmbeddedService) -> None:
    client = SwapClient(embedded=service, env={})
    point = SwapPoint("polygon", STRANGER, STRANGER, 1)
    with pytest.raises(ValueError, match="points: network 'polygon' is not one of mainnet, base"):
        SwapSweep(client, Store(":memory:"), points=[point], progress=False)
