"""Background flow: the reference price path and the traders that move the pools along it."""

from __future__ import annotations

import pytest

from toolkit.codecs import universal_router as ur
from toolkit.scenario import load_scenario
from toolkit.world.evm import Chains, Ledger, Revert
from toolkit.world.evm.amm import V2PairContract
from toolkit.world.evm.flow import TRADER, BackgroundTraders, reference_path
from toolkit.world.evm.markets import market_for
from toolkit.world.evm.tokens import ERC20
from toolkit.world.swap import find_route

T0 = 1_760_000_000.0
USER = "0x" + "ab" * 20


@pytest.fixture
def ledger() -> Ledger:
    return Chains(load_scenario("default"), genesis=T0).ledger(1)


def test_the_path_is_seeded_and_positive() -> None:
    path = reference_path(500, start=3000.0, volatility=0.8, seed=3)
    assert path == reference_path(500, start=3000.0, volatility=0.8, seed=3)
    assert path != reference_path(500, start=3000.0, volatility=0.8, seed=4)
    assert all(p > 0 for p in path) and len(path) == 500
    assert reference_path(10, volatility=0.0) == [pytest.approx(3000.0)] * 10


def test_arbitrage_brings_every_weth_stable_pool_to_the_reference(ledger: Ledger) -> None:
    traders = BackgroundTraders(ledger, noise_trades=0)
    traded = traders.step(T0, 3150.0)  # +5 %
    labels = ["USDC/WETH v3 5bps", "USDC/WETH v3 30bps", "USDC/WETH v2", "WETH/USDT v3 30bps"]
    assert sorted(traded) == sorted(labels)
    for label in labels:
        assert traders.mid_price_usd(label) == pytest.approx(3150.0, rel=1e-4)
    assert traders.step(T0, 3150.0) == []  # already there


def test_noise_moves_pools_and_a_stale_route_then_slips_or_reverts(ledger: Ledger) -> None:
    market = market_for(load_scenario("default"), 1)
    assert market is not None
    usdc, weth = market.tokens["USDC"].address.lower(), market.tokens["WETH"].address.lower()
    stale = find_route(ledger, usdc, weth, 10**11, slippage_bps=0, now=T0)
    traders = BackgroundTraders(ledger, seed=5, noise_usd=2_000_000.0, noise_trades=6)
    for i, price in enumerate(reference_path(5, start=3000.0, volatility=2.0, seed=5)):
        traders.step(T0 + 12 * i, price)
    token = ledger.state.contracts[usdc]
    assert isinstance(token, ERC20)
    run = ledger.direct(T0 + 60)
    token.mint(run, USER, 10**11)
    token.allowances[(USER, ur.UNIVERSAL_ROUTER.lower())] = 10**11
    fresh = find_route(ledger, usdc, weth, 10**11, slippage_bps=0, now=T0 + 60)
    assert fresh.amount_out != stale.amount_out
    data = bytes.fromhex(stale.call_data[2:])
    if fresh.amount_out < stale.amount_out:
        with pytest.raises(Revert):
            ledger.call(USER, ur.UNIVERSAL_ROUTER.lower(), data, 0, T0 + 60)
    else:  # the pools moved in the user's favour: the stale route delivers more than quoted
        ledger.call(USER, ur.UNIVERSAL_ROUTER.lower(), data, 0, T0 + 60)


def test_failed_trades_change_nothing(ledger: Ledger) -> None:
    traders = BackgroundTraders(ledger, noise_trades=0)
    pair = traders.pools["USDC/WETH v2"]
    assert isinstance(pair, V2PairContract)
    before = dict(pair.reserves)
    assert not traders._swap(T0, pair, True, 2**120, None)  # beyond uint112: the pair refuses
    assert pair.reserves == before
    token = ledger.state.contracts[pair.token0_address]
    assert isinstance(token, ERC20) and token.balances.get(TRADER, 0) == 0
    with pytest.raises(ValueError, match="noise_trades"):
        BackgroundTraders(ledger, noise_trades=-1)
