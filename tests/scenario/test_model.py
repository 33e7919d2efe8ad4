from decimal import Decimal

import pytest

from toolkit.chain.registry import default_registry
from toolkit.scenario import load_scenario


@pytest.mark.parametrize("name", ["default", "single-pool"])
def test_tokens_and_contracts_agree_with_the_registry(name: str):
    registry = default_registry()
    s = load_scenario(name)
    for token in s.tokens:
        known = registry.token(token.chain, token.symbol)
        assert (known.address, known.decimals) == (token.address, token.decimals)
    for chain in s.chains:
        contracts = registry.contracts(chain.id)
        assert chain.escrow == contracts.escrow
        assert chain.output_settler == contracts.output_settler
        assert chain.oracle == contracts.oracle


def test_lookups():
    s = load_scenario("default")
    assert s.chain(8453).name == "base"
    usdc = s.token(10, "USDC")
    assert s.token_by_address(10, usdc.address.lower()) is usdc
    assert s.token_by_address(10, "0x" + "00" * 20) is None
    assert s.token_by_address(10, 5) is None  # type: ignore[arg-type]
    assert [p.type for p in s.pools_for(1, "USDC")] == ["usdc", "aave"]
    assert s.pools_for(1, "DAI") == ()
    assert s.route(1, 1, "USDC") is None
    with pytest.raises(KeyError, match="chain: 137 is not in scenario 'default'"):
        s.chain(137)
    with pytest.raises(KeyError, match="token: no DAI on chain 1"):
        s.token(1, "DAI")


def test_fill_cost_converts_usd_and_rounds_up():
    s = load_scenario("default")
    assert s.chain(1).fill_cost_usd == Decimal("1.50")
    assert s.fill_cost(1, "USDC") == 1_500_000
    # 0.05 USD at 3000 USD/WETH = 16666666666666.67 wei, rounded up.
    assert s.fill_cost(10, "WETH") == 16_666_666_666_667


def test_eta_and_expiry_buffer():
    s = load_scenario("default")
    assert s.eta(1, 8453) == 36 + 2
    assert s.eta(8453, 1) == 10 + 12
    assert s.expiry_buffer(1, 8453) == 43_200
    assert s.expiry_buffer(1, 1) == 780


def test_pool_ids():
    s = load_scenario("default")
    assert s.pools[0].id == "1:USDC:usdc"
    assert len({p.id for p in s.pools}) == len(s.pools)
