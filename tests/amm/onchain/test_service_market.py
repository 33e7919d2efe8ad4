"""The embedded swap service's market deployed on a node (``deploy_service_market``): collected
from the node, its pools take every leg of the service's routes, and the legs deliver what the
service quoted, to the smallest unit (notebook 09's comparison rests on it)."""

from __future__ import annotations

from collections.abc import Callable

from toolkit.amm.paths import execute_allocation
from toolkit.client import EmbeddedService, SwapClient, chain_web3
from toolkit.codecs import universal_router as ur
from toolkit.collect.pools import PoolCollector
from toolkit.models.real_routes import service_allocation, snapshot_venues
from toolkit.scenario import load_scenario
from toolkit.store import Store
from toolkit.testing.anvil import Anvil
from toolkit.testing.uniswap import deploy_uniswap
from toolkit.testing.uniswap_market import deploy_service_market
from toolkit.world.evm.markets import market_for


def test_the_services_routes_run_on_the_deployed_market_as_quoted(
    node_starter: Callable[[int], Anvil],
) -> None:
    node = node_starter(1)
    try:
        w3 = chain_web3(1, url=node.url)
        uniswap = deploy_uniswap(w3)
        market = deploy_service_market(uniswap, "default")
        world = market_for(load_scenario("default"), 1)
        assert world is not None
        assert sorted([*market.v3, *market.v2]) == sorted(p.label for p in world.pools)
        store = Store(":memory:")
        run = PoolCollector(
            w3,
            store,
            tokens=[t.address for t in market.tokens.values()],
            v3_factory=uniswap.v3_factory.address,
            v2_factory=uniswap.v2_factory.address,
            progress=False,
        ).run()
        w3.provider.close()  # type: ignore[attr-defined]
    finally:
        node.stop()
    snapshots = store.query(
        "SELECT * FROM amm_pool_snapshots WHERE snapshot_id = $id", {"id": run.run_id}
    )
    ticks = store.query("SELECT * FROM amm_pool_ticks WHERE snapshot_id = $id", {"id": run.run_id})
    names = {t.address.lower(): symbol for symbol, t in market.tokens.items()}
    venues = snapshot_venues(snapshots, ticks, names)
    assert len(venues) == len(world.pools) == 8
    weth, usdc = world.tokens["WETH"].address, world.tokens["USDC"].address
    service = EmbeddedService("default", env={})
    client = SwapClient(embedded=service, env={})
    try:
        paths = set()
        for amount in (10**18, 1_000 * 10**18, 10_000 * 10**18):
            route = client.route(
                "mainnet", amount_in=amount, token_in=weth, token_out=usdc, slippage_bps=50
            )
            commands, _ = ur.decode_execute(route.call_data)
            allocation = service_allocation(commands, venues, amount, names)
            assert allocation is not None, f"a leg of the {amount} route has no pool on the node"
            assert execute_allocation(allocation).amount_out == int(route.amount_out)
            paths |= set(allocation)
    finally:
        client.close()
        service.close()
    # the largest size splits, through USDT among others: the pools a hand-made market lacked
    assert any("USDT" in (hop.token_out for hop in path) for path in paths)
