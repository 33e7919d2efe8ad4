import pytest

from toolkit.engine import Engine
from toolkit.scenario import Scenario, load_scenario

USDC = {
    1: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
    10: "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85",
    8453: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    42161: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
}
WETH = {
    1: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2",
    10: "0x4200000000000000000000000000000000000006",
    8453: "0x4200000000000000000000000000000000000006",
    42161: "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1",
}


@pytest.fixture(scope="session")
def usdc() -> dict[int, str]:
    """USDC address per chain id."""
    return USDC


@pytest.fixture(scope="session")
def weth() -> dict[int, str]:
    """WETH address per chain id."""
    return WETH


@pytest.fixture(scope="session")
def default_scenario() -> Scenario:
    return load_scenario("default")


@pytest.fixture(scope="session")
def single_scenario() -> Scenario:
    return load_scenario("single-pool")


@pytest.fixture
def engine(default_scenario: Scenario) -> Engine:
    return Engine(default_scenario)


@pytest.fixture
def single(single_scenario: Scenario) -> Engine:
    return Engine(single_scenario)
