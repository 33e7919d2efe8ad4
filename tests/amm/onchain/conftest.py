"""A real node for the on-chain tests: anvil with Uniswap's published V2 and V3 bytecode.

One node per test session (per xdist worker): WETH9, three test tokens, the V3 pools of A/B at
the 0.05 %, 0.3 % and 1 % tiers with 100 positions each (about 200 initialised ticks), a
0.3 % B/C pool, and the V2 pairs A/B and B/C. Tests that change the chain run inside
``fresh`` (``evm_snapshot`` before, ``evm_revert`` after), so every test sees the same state.
Without an anvil binary the tests skip, naming where it was looked for (``make node``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from web3 import Web3
from web3.contract import Contract
from web3.types import RPCEndpoint

from toolkit.client import chain_web3
from toolkit.testing.anvil import Anvil, AnvilUnavailable, start_anvil
from toolkit.testing.artifacts import find_artifacts
from toolkit.testing.uniswap import Uniswap, deploy_uniswap, spread_positions

POSITIONS = 100
TIERS = ((500, 10), (3000, 60), (10000, 200))
# the price of token1 in token0 near 2 (tick 6931): not a round tick, ranges on both sides
SQRT_PRICE = 112045541949572279837463876454


@dataclass
class Market:
    """The deployed market: the node, the deployment, the tokens and pools."""

    node: Anvil
    w3: Web3
    uniswap: Uniswap
    tokens: list[Contract]
    v3_pools: list[Contract]  # A/B at each tier, then B/C 0.3 %
    v2_pairs: list[Contract]  # A/B, B/C
    block: int  # the block after the set-up


def start_node(chain_id: int) -> Anvil:
    """anvil for Uniswap's bytecode (a block gas limit the deployments fit in), or a skip that
    names what is missing (the artifacts or the binary: `make node` installs both)."""
    if find_artifacts() is None:
        pytest.skip("Uniswap artifacts not installed: run `make node`")
    try:
        return start_anvil(chain_id=chain_id, args=("--gas-limit", "300000000"))
    except AnvilUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def node_starter() -> Callable[[int], Anvil]:
    """:func:`start_node` for tests that need a node of their own (the caller stops it)."""
    return start_node


@pytest.fixture(scope="session")
def market() -> Iterator[Market]:
    node = start_node(31337)
    try:
        # The set-up's client: a node slow to answer under a loaded machine is not a fault here
        # (anvil_mine of 150 blocks took over the default 10 s once with the suite's parts side
        # by side), so it waits longer; the fault tests build their own clients.
        w3 = chain_web3(31337, url=node.url, timeout=60.0)
        uniswap = deploy_uniswap(w3)
        a, b, c = (uniswap.token() for _ in range(3))
        rng = random.Random(22)
        pools = []
        for fee, spacing in TIERS:
            pool = uniswap.v3_pool(a, b, fee, SQRT_PRICE)
            tick = pool.functions.slot0().call()[1]
            uniswap.mint(
                pool, spread_positions(rng, tick, spacing, POSITIONS, width=500, amount=10**22)
            )
            pools.append(pool)
        side = uniswap.v3_pool(b, c, 3000, 2**96)
        uniswap.mint(side, spread_positions(rng, 0, 60, 10))
        pools.append(side)
        pairs = [
            uniswap.v2_pair(a, b, 10**24, 2 * 10**24),
            uniswap.v2_pair(b, c, 3 * 10**23, 10**23),
        ]
        yield Market(node, w3, uniswap, [a, b, c], pools, pairs, w3.eth.block_number)
        w3.provider.close()  # type: ignore[attr-defined]
    finally:
        node.stop()


@pytest.fixture
def fresh(market: Market) -> Iterator[Market]:
    """The market, restored after the test (whatever it sent)."""
    snapshot = market.w3.provider.make_request(RPCEndpoint("evm_snapshot"), [])["result"]
    try:
        yield market
    finally:
        market.w3.provider.make_request(RPCEndpoint("evm_revert"), [snapshot])
        market.uniswap.nonce = None  # read again from the node


@pytest.fixture
def rpc(market: Market) -> Iterator[Web3]:
    """A second client on the node (closed after the test)."""
    w3 = chain_web3(31337, url=market.node.url)
    try:
        yield w3
    finally:
        w3.provider.close()  # type: ignore[attr-defined]
