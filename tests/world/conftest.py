from collections.abc import Callable
from typing import Any

import pytest

from toolkit.codecs.escrow import (
    MandateOutput,
    StandardOrder,
    encode_open,
    exclusivity_context,
    order_id,
    to_bytes32,
    token_id,
)
from toolkit.engine import Engine, ReservedQuote
from toolkit.scenario import Scenario, load_scenario
from toolkit.world import World

USER = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"


@pytest.fixture(scope="session")
def scenario() -> Scenario:
    return load_scenario("default")


@pytest.fixture
def engine(scenario: Scenario) -> Engine:
    return Engine(scenario)


@pytest.fixture
def world(scenario: Scenario, engine: Engine) -> World:
    return World(scenario, engine)


@pytest.fixture
def usdc(scenario: Scenario) -> Callable[[int], str]:
    return lambda chain: scenario.token(chain, "USDC").address


@pytest.fixture
def build_order(scenario: Scenario) -> Callable[..., StandardOrder]:
    """The order the transaction endpoint would build from a quote at ``now``."""

    def build(quote: ReservedQuote, now: int, **overrides: Any) -> StandardOrder:
        w = scenario.windows
        src, dst = scenario.chain(quote.src_chain), scenario.chain(quote.dst_chain)
        fill_deadline = now + w.exclusive_s + w.open_s
        fields: dict[str, Any] = {
            "user": USER,
            "nonce": 1,
            "origin_chain_id": quote.src_chain,
            "expires": fill_deadline + scenario.expiry_buffer(quote.src_chain, quote.dst_chain),
            "fill_deadline": fill_deadline,
            "input_oracle": src.oracle,
            "inputs": ((token_id(quote.src_token), quote.input_amount),),
            "outputs": (
                MandateOutput(
                    oracle=to_bytes32(src.oracle),
                    settler=to_bytes32(dst.output_settler),
                    chain_id=quote.dst_chain,
                    token=to_bytes32(quote.dst_token),
                    amount=quote.output_amount,
                    recipient=to_bytes32(USER),
                    context=exclusivity_context(
                        overrides.pop("exclusive_for", scenario.filler),
                        now + w.exclusive_s,
                    ),
                ),
            ),
        }
        fields.update(overrides)
        return StandardOrder(**fields)

    return build


@pytest.fixture
def open_tx(
    scenario: Scenario, build_order: Callable[..., StandardOrder]
) -> Callable[..., tuple[str, str]]:
    """``(order_id, calldata)`` for a quote's order, as sent to the escrow."""

    def make(quote: ReservedQuote, now: int, **overrides: Any) -> tuple[str, str]:
        order = build_order(quote, now, **overrides)
        escrow = scenario.chain(quote.src_chain).escrow
        return order_id(order, escrow), encode_open(order)

    return make


@pytest.fixture(scope="session")
def user() -> str:
    return USER
